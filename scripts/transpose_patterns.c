/* What limits a one-thread out-of-cache transpose on this machine (docs/copy-engine.md): the
 * access patterns a transpose is made of, timed against a non-temporal copy of the same bytes
 * in the same run. Each pattern reads n*n doubles and writes n*n doubles with non-temporal
 * 64-byte stores; only the order of the lines changes.
 *
 *   gcc -O3 -march=native scripts/transpose_patterns.c -o /tmp/transpose_patterns
 *   /tmp/transpose_patterns 4096        # also 8192, 4097 (any n >= 64), optional reps (7)
 *
 * Needs AVX-512F. Prints the median of `reps` interleaved repetitions of each pattern as a
 * fraction of the faster copy's median time (timed; 1.00 = as fast as the copy). The copies: an
 * unrolled non-temporal copy, and the patterns' own loop with both sides sequential (a load, an
 * add, a non-temporal store per line), which is often the faster one here.
 *
 * Table 1 reads sequentially and writes each destination row in runs of `run` lines (a tile of
 * 8*run source rows, walked column strip by column strip, gives runs of `run` lines).
 * Table 2 writes sequentially and reads `rows` source rows at once, one line of each in turn,
 * `span` columns before moving to the next rows (a tile read column strip by column strip).
 * Table 3 splits the copy engine's own walk (tiles of `rows` x `cols`, column strips of 8x8
 * blocks, the next tile prefetched into L2 line by line) into its halves: the transpose itself,
 * its reads with sequential writes, and its writes with sequential reads.
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static volatile double sink;

static void nt_copy(const double *s, double *d, long n) {
    for (long i = 0; i < n * n; i += 32) {
        __m512d a = _mm512_load_pd(s + i), b = _mm512_load_pd(s + i + 8);
        __m512d c = _mm512_load_pd(s + i + 16), e = _mm512_load_pd(s + i + 24);
        _mm512_stream_pd(d + i, a);
        _mm512_stream_pd(d + i + 8, b);
        _mm512_stream_pd(d + i + 16, c);
        _mm512_stream_pd(d + i + 24, e);
    }
    _mm_sfence();
}

/* Sequential reads; destination lines in the order of a tile walk giving `run`-line runs
 * (`run` 0: sequential, the same loop as a copy). */
static void write_runs(const double *s, double *d, long n, long run) {
    long blocks = n / 8;
    __m512d acc = _mm512_setzero_pd();
    const double *p = s;
    if (run == 0) {
        for (long i = 0; i < n * n; i += 8) {
            acc = _mm512_add_pd(acc, _mm512_load_pd(s + i));
            _mm512_stream_pd(d + i, acc);
        }
    }
    for (long t = 0; t < blocks && run > 0; t += run)
        for (long c = 0; c < blocks; c++)
            for (long rb = t; rb < t + run && rb < blocks; rb++)
                for (int j = 0; j < 8; j++, p += 8) {
                    acc = _mm512_add_pd(acc, _mm512_load_pd(p));
                    _mm512_stream_pd(d + (c * 8 + j) * n + rb * 8, acc);
                }
    _mm_sfence();
    sink = _mm512_reduce_add_pd(acc);
}

/* Sequential writes; source lines `rows` rows at a time, one line of each row in turn. */
static void read_streams(const double *s, double *d, long n, long rows, long span) {
    __m512d acc = _mm512_setzero_pd();
    double *q = d;
    for (long c0 = 0; c0 < n; c0 += span)
        for (long r0 = 0; r0 < n; r0 += rows)
            for (long c = c0; c < c0 + span; c += 8)
                for (long r = r0; r < r0 + rows; r++, q += 8) {
                    acc = _mm512_add_pd(acc, _mm512_load_pd(s + r * n + c));
                    _mm512_stream_pd(q, acc);
                }
    _mm_sfence();
    sink = _mm512_reduce_add_pd(acc);
}

static inline void transpose8x8(const double *s, long lds, __m512d o[8]) {
    __m512d r[8], t[8], u[8];
    for (int k = 0; k < 8; k++) r[k] = _mm512_loadu_pd(s + k * lds);
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm512_unpacklo_pd(r[k], r[k + 1]);
        t[k + 1] = _mm512_unpackhi_pd(r[k], r[k + 1]);
    }
    __m512i lo = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    __m512i hi = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    for (int h = 0; h < 8; h += 4) {
        u[h] = _mm512_permutex2var_pd(t[h], lo, t[h + 2]);
        u[h + 1] = _mm512_permutex2var_pd(t[h + 1], lo, t[h + 3]);
        u[h + 2] = _mm512_permutex2var_pd(t[h], hi, t[h + 2]);
        u[h + 3] = _mm512_permutex2var_pd(t[h + 1], hi, t[h + 3]);
    }
    for (int k = 0; k < 4; k++) {
        o[k] = _mm512_shuffle_f64x2(u[k], u[k + 4], 0x44);
        o[k + 4] = _mm512_shuffle_f64x2(u[k], u[k + 4], 0xee);
    }
}

/* The engine's tile walk. part 0: the transpose; 1: its reads (and prefetches), sequential
 * writes; 2: sequential reads (no prefetch), its writes. */
static void tile_walk(const double *s, double *d, long n, long rows, long cols, int part) {
    double *q = d;
    const double *seq = s;
    for (long c0 = 0; c0 < n; c0 += cols)
        for (long t0 = 0; t0 < n; t0 += rows) {
            long next_row = t0 + rows, next_col = c0;
            if (next_row >= n) next_row = 0, next_col = c0 + cols;
            const double *ahead = s + next_row * n + next_col;
            long ahead_col = 0;
            int prefetch = next_col < n && part != 2;
            for (long c = c0; c < c0 + cols; c += 8)
                for (long r = t0; r < t0 + rows; r += 8) {
                    for (int k = 0; k < 8 && prefetch; k++) {
                        _mm_prefetch((const char *)(ahead + ahead_col), _MM_HINT_T1);
                        ahead_col += 8;
                        if (ahead_col >= cols) ahead_col = 0, ahead += n;
                    }
                    __m512d o[8];
                    if (part == 2) {
                        transpose8x8(seq, 8, o);
                        seq += 64;
                    } else {
                        transpose8x8(s + r * n + c, n, o);
                    }
                    for (int j = 0; j < 8; j++) {
                        if (part == 1) {
                            _mm512_stream_pd(q, o[j]);
                            q += 8;
                        } else {
                            _mm512_stream_pd(d + (c + j) * n + r, o[j]);
                        }
                    }
                }
        }
    _mm_sfence();
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MAX_REPS 31
#define MAX_CASES 32

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 4096;
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    if (n < 64 || n > 65536 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: %s N [REPS]   (64 <= N <= 65536, 1 <= REPS <= %d)\n", argv[0], MAX_REPS);
        return 2;
    }
    n = n / 64 * 64; /* whole tiles; 4097 becomes 4096 */
    double *s = aligned_alloc(4096, (size_t)n * n * 8), *d = aligned_alloc(4096, (size_t)n * n * 8);
    if (!s || !d) {
        fprintf(stderr, "cannot allocate 2 x %ld x %ld doubles\n", n, n);
        return 1;
    }
    for (long i = 0; i < n * n; i++) s[i] = d[i] = (double)i;
    long runs[] = {0, 1, 2, 4, 8, 16, 32, 64, n / 8};
    long streams[][2] = {{8, n}, {16, n}, {32, n}, {64, n / 2}, {8, 512}, {32, 512}, {128, 256}};
    long tiles[][2] = {{32, 512}, {64, 512}, {128, 256}};
    const char *parts[] = {"the transpose", "its reads + sequential writes", "sequential reads + its writes"};
    int n_runs = sizeof runs / sizeof runs[0], n_streams = sizeof streams / sizeof streams[0];
    int n_tiles = sizeof tiles / sizeof tiles[0], first_tile = n_runs + n_streams;
    double copy[MAX_REPS], t[MAX_CASES][MAX_REPS];
    nt_copy(s, d, n); /* warm up */
    for (int r = 0; r < reps; r++) {
        double x = now();
        nt_copy(s, d, n);
        copy[r] = now() - x;
        for (int k = 0; k < n_runs; k++) {
            x = now();
            write_runs(s, d, n, runs[k]);
            t[k][r] = now() - x;
        }
        for (int k = 0; k < n_streams; k++) {
            x = now();
            read_streams(s, d, n, streams[k][0], streams[k][1]);
            t[n_runs + k][r] = now() - x;
        }
        for (int k = 0; k < 3 * n_tiles; k++) {
            x = now();
            tile_walk(s, d, n, tiles[k / 3][0], tiles[k / 3][1], k % 3);
            t[first_tile + k][r] = now() - x;
        }
    }
    qsort(copy, reps, sizeof(double), by_value);
    for (int k = 0; k < first_tile + 3 * n_tiles; k++) qsort(t[k], reps, sizeof(double), by_value);
    double unrolled = copy[reps / 2], same_loop = t[0][reps / 2];
    double c = unrolled < same_loop ? unrolled : same_loop;
    printf("n=%ld: copies %.1f GB/s (unrolled) and %.1f GB/s (same loop), read + written, "
           "medians of %d, timed\n\n",
           n, 2.0 * n * n * 8 / unrolled / 1e9, 2.0 * n * n * 8 / same_loop / 1e9, reps);
    printf("| sequential reads, destination written in runs of | fraction of the copy |\n|---|---|\n");
    for (int k = 1; k < n_runs; k++) printf("| %ld lines | %.2f |\n", runs[k], c / t[k][reps / 2]);
    printf("\n| sequential writes, source read as | fraction of the copy |\n|---|---|\n");
    for (int k = 0; k < n_streams; k++)
        printf("| %ld rows at once, %ld columns each | %.2f |\n", streams[k][0], streams[k][1],
               c / t[n_runs + k][reps / 2]);
    printf("\n| the engine's tile walk (rows x columns) | fraction of the copy |\n|---|---|\n");
    for (int k = 0; k < 3 * n_tiles; k++)
        printf("| %ld x %ld: %s | %.2f |\n", tiles[k / 3][0], tiles[k / 3][1], parts[k % 3],
               c / t[first_tile + k][reps / 2]);
    free(s);
    free(d);
    return 0;
}
