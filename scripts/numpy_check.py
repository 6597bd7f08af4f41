#!/usr/bin/env python3
"""Cross-check `stridelab layout` against NumPy on thousands of random view chains.

Each chain starts from `arange(N).view(shape)` and applies random view ops (transpose,
permute, .T, t(), indexing with ints / slices with negative steps / None / ..., select,
narrow, diagonal, squeeze, unsqueeze, expand, flip, view, reshape, flatten, contiguous,
clone). The same chain is evaluated by stridelab (all chains in one `--batch` run) and by
NumPy, and the results must agree:

- errors: stridelab rejects a chain exactly when NumPy (or, for PyTorch-only ops, the
  PyTorch rule written out below) rejects it;
- shape and values (logical C order) exactly;
- for non-empty results: offset, strides in elements on every dim of size > 1, whether the
  result still shares the arange storage, and the C/F contiguity flags.

Not compared, because NumPy and PyTorch disagree or the value is meaningless: strides of
size-1 dims (PyTorch's unsqueeze gives size*stride, NumPy's newaxis gives 0), and offset and
strides of empty results (never dereferenced; PyTorch: stride[k] = stride[k+1]*max(size,1),
NumPy 2: all 0).

Where PyTorch's semantics differ from NumPy's function of the same name, the NumPy side is
written to PyTorch's rule: `squeeze(d)` is a no-op on a dim of size != 1, `view` is NumPy's
no-copy reshape (an error where NumPy would copy), `t()` refuses more than 2 dims.

Usage: numpy_check.py --binary target/release/stridelab [--count 3000] [--seed 1]
Exit status 0 when everything agrees, 1 on a mismatch (the first few are printed).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np


class Rejected(Exception):
    """The chain is invalid under the NumPy/PyTorch rules."""


def norm_dim(d, ndim):
    if not -ndim <= d < ndim:
        raise Rejected(f"dim {d} out of range for {ndim}-d")
    return d % ndim if ndim else d


# ----------------------------------------------------------------- ops on the NumPy side


def np_select(x, d, i):
    if x.ndim == 0:
        raise Rejected("select on 0-d")
    d = norm_dim(d, x.ndim)
    n = x.shape[d]
    if not -n <= i < n:
        raise Rejected("index out of range")
    # The trailing Ellipsis keeps a 0-d result an array view instead of a NumPy scalar.
    return x[(slice(None),) * d + (i, Ellipsis)]


def np_narrow(x, d, start, length):
    if x.ndim == 0:
        raise Rejected("narrow on 0-d")
    d = norm_dim(d, x.ndim)
    n = x.shape[d]
    s = start + n if start < 0 else start
    if length < 0 or not 0 <= s <= n or s + length > n:
        raise Rejected("narrow out of range")
    return x[(slice(None),) * d + (slice(s, s + length),)]


def np_squeeze_dim(x, d):
    if x.ndim == 0 and d in (0, -1):
        return x
    d = norm_dim(d, x.ndim)
    return np.squeeze(x, d) if x.shape[d] == 1 else x


def np_expand(x, sizes):
    if len(sizes) < x.ndim:
        raise Rejected("too few sizes")
    lead = len(sizes) - x.ndim
    shape = []
    for k, s in enumerate(sizes):
        if s < -1 or (k < lead and s == -1):
            raise Rejected("bad size")
        shape.append(x.shape[k - lead] if s == -1 else s)
    try:
        return np.broadcast_to(x, tuple(shape))
    except ValueError as e:
        raise Rejected(str(e))


def np_view(x, shape):
    try:
        r = np.reshape(x, shape)
    except ValueError as e:
        raise Rejected(str(e))
    if r.size > 0 and not np.shares_memory(r, x):
        raise Rejected("view would need a copy")
    return r


def np_t(x):
    if x.ndim > 2:
        raise Rejected("t() on >2-d")
    return x.T


def np_contiguous(x):
    return x if x.flags.c_contiguous else x.copy(order="C")


def apply_numpy(x, op):
    name, args = op
    try:
        if name == "transpose":
            if x.ndim == 0 and all(a in (0, -1) for a in args):
                return x
            return np.swapaxes(x, *args)
        if name == "permute":
            if len(args) != x.ndim:
                raise Rejected("permute arity")
            return np.transpose(x, args)
        if name == "T":
            return x.T
        if name == "t":
            return np_t(x)
        if name == "index":
            items = tuple(args) if Ellipsis in args else tuple(args) + (Ellipsis,)
            return x[items]
        if name == "select":
            return np_select(x, *args)
        if name == "narrow":
            return np_narrow(x, *args)
        if name == "diagonal":
            return np.diagonal(x, *args)
        if name == "squeeze":
            return np.squeeze(x) if not args else np_squeeze_dim(x, args[0])
        if name == "unsqueeze":
            return np.expand_dims(x, args[0])
        if name == "expand":
            return np_expand(x, args)
        if name == "flip":
            r = np.flip(x, axis=tuple(args) if args else None)
            # np.flip of a 0-d array returns a scalar; the view is the array itself.
            return r if isinstance(r, np.ndarray) else x[...]
        if name == "view":
            return np_view(x, tuple(args))
        if name == "reshape":
            return np.reshape(x, tuple(args))
        if name == "flatten":
            return np.reshape(x, -1)
        if name == "contiguous":
            return np_contiguous(x)
        if name == "clone":
            return x.copy()
    except (IndexError, ValueError, TypeError, np.exceptions.AxisError) as e:
        raise Rejected(str(e))
    raise AssertionError(name)


# ----------------------------------------------------------------- EXPR text


def fmt_index_item(item):
    if item is None:
        return "None"
    if item is Ellipsis:
        return "..."
    if isinstance(item, slice):
        parts = [
            "" if item.start is None else str(item.start),
            "" if item.stop is None else str(item.stop),
        ]
        text = ":".join(parts)
        if item.step is not None:
            text += ":" + str(item.step)
        return text
    return str(item)


def fmt_op(op, rng):
    name, args = op
    if name == "T":
        return ".T"
    if name == "index":
        return "[" + ", ".join(fmt_index_item(i) for i in args) + "]"
    if name == "diagonal" and rng.random() < 0.5:
        keys = ["offset", "dim1", "dim2"]
        return ".diagonal(" + ", ".join(f"{k}={v}" for k, v in zip(keys, args)) + ")"
    inner = ", ".join(str(a) for a in args)
    if name in ("view", "reshape", "permute", "expand") and rng.random() < 0.3:
        inner = "(" + inner + ("," if len(args) == 1 else "") + ")"
    return f".{name}({inner})"


# ----------------------------------------------------------------- random chains


def random_dim(rng, ndim):
    if ndim and rng.random() < 0.9:
        return rng.randint(-ndim, ndim - 1)
    return rng.randint(-ndim - 1, ndim)


def random_factors(rng, numel):
    if numel == 0:
        shape = [rng.randint(0, 3) for _ in range(rng.randint(1, 3))]
        return shape if 0 in shape else shape + [0]
    factors, rest, p = [], numel, 2
    while rest > 1:
        while rest % p == 0:
            factors.append(p)
            rest //= p
        p += 1
    shape = []
    for f in factors:
        if shape and rng.random() < 0.5:
            shape[-1] *= f
        else:
            shape.append(f)
    rng.shuffle(shape)
    for _ in range(rng.randint(0, 1)):
        shape.insert(rng.randint(0, len(shape)), 1)
    if shape and rng.random() < 0.3:
        shape[rng.randrange(len(shape))] = -1
    if rng.random() < 0.04:
        shape.append(rng.randint(2, 4))
    return shape


def random_slice(rng, n):
    def bound():
        return rng.randint(-n - 1, n + 1) if rng.random() < 0.5 else None

    step = None
    if rng.random() < 0.7:
        step = rng.choice([-3, -2, -1, -1, 1, 2, 3])
        if rng.random() < 0.01:
            step = 0
    return slice(bound(), bound(), step)


def random_op(rng, x):
    ndim, shape = x.ndim, x.shape

    def size_of(d):
        return shape[d] if -ndim <= d < ndim else 3

    kind = rng.randrange(17)
    if kind == 0:
        return ("transpose", [random_dim(rng, ndim), random_dim(rng, ndim)])
    if kind == 1:
        dims = list(range(ndim))
        rng.shuffle(dims)
        dims = [d - ndim if rng.random() < 0.2 else d for d in dims]
        if dims and rng.random() < 0.05:
            dims[0] = random_dim(rng, ndim)
        return ("permute", dims)
    if kind == 2:
        return ("T", [])
    if kind == 3:
        return ("t", [])
    if kind in (4, 5, 6):
        items, d, seen_ellipsis = [], 0, False
        for _ in range(rng.randint(1, ndim + 1)):
            n = shape[d] if d < ndim else 2
            r = rng.random()
            if r < 0.2:
                low = -n - (rng.random() < 0.05)
                high = max(low, n - 1 + (rng.random() < 0.05))
                items.append(rng.randint(low, high))
                d += 1
            elif r < 0.3:
                items.append(None)
            elif r < 0.37 and not seen_ellipsis:
                items.append(Ellipsis)
                seen_ellipsis = True
            else:
                items.append(random_slice(rng, n))
                d += 1
        return ("index", items)
    if kind == 7:
        d = random_dim(rng, ndim)
        n = size_of(d)
        return ("select", [d, rng.randint(-n - 1, n)])
    if kind == 8:
        d = random_dim(rng, ndim)
        n = size_of(d)
        return ("narrow", [d, rng.randint(-n, n), rng.randint(-1 if rng.random() < 0.05 else 0, n)])
    if kind == 9:
        return ("diagonal", [rng.randint(-3, 3), random_dim(rng, ndim), random_dim(rng, ndim)])
    if kind == 10:
        return ("squeeze", [] if rng.random() < 0.4 else [random_dim(rng, ndim)])
    if kind == 11:
        return ("unsqueeze", [random_dim(rng, ndim + 1)])
    if kind == 12:
        sizes = []
        for n in shape:
            r = rng.random()
            if n == 1 and r < 0.5:
                sizes.append(rng.randint(0, 4))
            elif r < 0.7:
                sizes.append(n)
            elif r < 0.97:
                sizes.append(-1)
            else:
                sizes.append(n + 1)
        if rng.random() < 0.3:
            sizes.insert(0, rng.randint(0, 3))
        return ("expand", sizes)
    if kind == 13:
        count = rng.randint(0, ndim)
        dims = rng.sample(range(ndim), count) if ndim else []
        dims = [d - ndim if rng.random() < 0.3 else d for d in dims]
        if dims and rng.random() < 0.05:
            dims.append(dims[0])
        return ("flip", dims)
    if kind in (14, 15):
        return (rng.choice(["view", "view", "reshape"]), random_factors(rng, x.size))
    return (rng.choice(["flatten", "contiguous", "clone"]), [])


def random_chain(rng):
    ndim = rng.randint(1, 4)
    shape = [0 if rng.random() < 0.03 else rng.randint(1, 5) for _ in range(ndim)]
    numel = int(np.prod(shape))
    base = np.arange(numel, dtype=np.int64)
    x = base.reshape(shape)
    text = f"arange({numel}).view({', '.join(map(str, shape))})"
    expected_error = None
    for _ in range(rng.randint(1, 5)):
        op = random_op(rng, x)
        text += fmt_op(op, rng)
        try:
            x = apply_numpy(x, op)
        except Rejected as e:
            expected_error = str(e) or "rejected"
            break
    return text, base, x, expected_error


# ----------------------------------------------------------------- comparison


def storage_root(a):
    while a.base is not None and isinstance(a.base, np.ndarray):
        a = a.base
    return a


def compare(got, base, x, expected_error):
    """A list of disagreements (empty when stridelab matches NumPy)."""
    if expected_error is not None:
        if "error" not in got:
            return [f"NumPy rejects ({expected_error}) but stridelab accepts"]
        return []
    if "error" in got:
        return [f"stridelab rejects ({got['error']['kind']}: {got['error']['message']}) but NumPy accepts"]
    problems = []
    item = x.itemsize
    if list(got["shape"]) != list(x.shape):
        problems.append(f"shape {got['shape']} != {list(x.shape)}")
        return problems
    values = x.reshape(-1).tolist() if x.size else []
    if got["values"] != values:
        problems.append(f"values {got['values']} != {values}")
    if x.size == 0:
        return problems
    shares = bool(np.shares_memory(x, base))
    if got["shares_storage"] != shares:
        problems.append(f"shares_storage {got['shares_storage']} != {shares}")
    root = storage_root(x)
    offset = (x.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // item
    if got["offset"] != offset:
        problems.append(f"offset {got['offset']} != {offset}")
    for k, n in enumerate(x.shape):
        if n > 1 and got["strides"][k] != x.strides[k] // item:
            problems.append(f"stride of dim {k}: {got['strides'][k]} != {x.strides[k] // item}")
    if got["c_contiguous"] != x.flags.c_contiguous:
        problems.append(f"c_contiguous {got['c_contiguous']} != {x.flags.c_contiguous}")
    if got["f_contiguous"] != x.flags.f_contiguous:
        problems.append(f"f_contiguous {got['f_contiguous']} != {x.flags.f_contiguous}")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True, help="path to the stridelab binary")
    parser.add_argument("--count", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    chains = [random_chain(rng) for _ in range(args.count)]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(text for text, *_ in chains) + "\n")
        batch = f.name
    try:
        out = subprocess.run(
            [args.binary, "layout", "--batch", batch], capture_output=True, text=True, check=True
        ).stdout
    finally:
        os.unlink(batch)
    results = [json.loads(line) for line in out.splitlines()]
    if len(results) != len(chains):
        print(f"expected {len(chains)} results, got {len(results)}")
        return 1

    failures = []
    rejected = 0
    for (text, base, x, expected_error), got in zip(chains, results):
        rejected += expected_error is not None
        problems = compare(got, base, x, expected_error)
        if problems:
            failures.append((text, problems))
    accepted = len(chains) - rejected
    print(
        f"numpy {np.__version__}: {len(chains)} random chains ({accepted} valid, {rejected} "
        f"rejected by NumPy/PyTorch rules): {len(chains) - len(failures)} agree, "
        f"{len(failures)} disagree"
    )
    for text, problems in failures[:10]:
        print(f"  {text}\n    " + "\n    ".join(problems))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
