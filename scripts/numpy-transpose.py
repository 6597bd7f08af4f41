#!/usr/bin/env python3
"""NumPy's strided copy, the peer the copy engine is compared with (docs/copy-engine.md):
`np.ascontiguousarray(a.T)` of an N×N float64 matrix, a fresh destination each time as a user
gets, timed 5 times per N (3 from N = 8192 on); prints N and the median's GB/s of bytes read
and written, one line per N.

Usage: scripts/numpy-transpose.py 1024,2048,4096,4097,8192
"""

import statistics
import sys
import time

import numpy as np


def main() -> int:
    try:
        sizes = [int(s) for s in sys.argv[1].split(",")]
    except (IndexError, ValueError):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    if any(not 8 <= n <= 32768 for n in sizes):
        print("numpy-transpose: every N must lie in 8..=32768", file=sys.stderr)
        return 2
    for n in sizes:
        a = np.arange(n * n, dtype=np.float64).reshape(n, n)
        seconds = []
        for _ in range(3 if n >= 8192 else 5):
            started = time.perf_counter()
            b = np.ascontiguousarray(a.T)
            seconds.append(time.perf_counter() - started)
            assert b[1, 0] == a[0, 1] and b.flags.c_contiguous
            del b
        print(f"{n}\t{2 * n * n * 8 / statistics.median(seconds) / 1e9:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
