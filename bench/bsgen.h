/*
 * bench/bsgen.h — the synthetic block-sparse problems of the block-sparse benchmark
 * (bench/bsgemm.c) and of its libDBCSR peer (bench/dbcsr_peer.c): one generator, so
 * that both sides multiply the same tilings, patterns and values.
 *
 * Tilings (Herault et al. 2020, §5.1): tile sizes drawn uniformly in [lo, hi] until the
 * dimension is covered; the last tile takes the remainder (it may be smaller than lo).
 * lo = hi = b gives DBCSR's uniform blocks of b (a ragged last one if b does not divide).
 * Patterns: exactly round(density * tiles) tiles of each matrix are kept, chosen
 * uniformly at random (a seeded partial shuffle), then listed in column-major order.
 * Occupancy is counted in tiles, as DBCSR counts it. Values: a pure function of
 * (seed, matrix, global row, global column), independent of the tiling; in every
 * element type (s, d, c, z) the real part is the same value (rounded in single
 * precision), the imaginary part of complex ones another value of the same kind.
 *
 * Pure C, no MPI, no StarPU: the two sides are built with different MPI libraries.
 */
#ifndef STARGEMM_BSGEN_H
#define STARGEMM_BSGEN_H

#include <stdint.h>

struct bsgen_params {
	int64_t m, n, k;        /* C is m x n, the inner dimension k (elements) */
	int64_t lo, hi;         /* tile sizes uniform in [lo, hi], 1 <= lo <= hi */
	double density_a, density_b;  /* share of present tiles, in [0, 1] */
	/* C's pattern: density in [0, 1], or < 0 for every tile that A·B reaches
	 * (the symbolic product; the C tiles a product writes). */
	double density_c;
	uint64_t seed;
};

/* One operand: a tiling and a list of present tiles (i, j) at pairs[2e], pairs[2e+1]. */
struct bsgen_matrix {
	int64_t mt, nt;
	const int64_t *rows, *cols;   /* tile sizes (point into struct bsgen_problem) */
	int64_t npresent;
	int64_t *pairs;
};

/* A, B (not transposed: A is m x k, B is k x n) and C, on shared tilings. */
struct bsgen_problem {
	int64_t mt, nt, kt;
	int64_t *msizes, *nsizes, *ksizes;
	struct bsgen_matrix a, b, c;
};

/* Generate a problem; returns 0, or -1 with a message on stderr (bad parameters, out of
 * memory). Deterministic in the parameters. */
int bsgen_make(const struct bsgen_params *p, struct bsgen_problem *pb);
void bsgen_free(struct bsgen_problem *pb);

/* Element (row, col) of matrix @p which (0 = A, 1 = B, 2 = C): uniform in [-0.5, 0.5). */
double bsgen_value(uint64_t seed, int which, int64_t row, int64_t col);

/* Fill a rows x cols column-major tile (leading dimension ld) whose top-left element is
 * global (row0, col0) of matrix @p which. */
void bsgen_fill_tile(double *tile, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
		     int64_t col0, uint64_t seed, int which);

/* bsgen_fill_tile() in element type @p prec ('s', 'd', 'c' or 'z': float, double,
 * float _Complex, double _Complex): real part bsgen_value(seed, which, ...), imaginary
 * part bsgen_value(seed, which + 3, ...). */
void bsgen_fill_elements(char prec, void *tile, int64_t ld, int64_t rows, int64_t cols,
			 int64_t row0, int64_t col0, uint64_t seed, int which);

/* Whether @p prec is one of 's', 'd', 'c', 'z'. */
int bsgen_prec_valid(char prec);

/* Useful flops of C += A B on the problem's patterns: 2 m_i n_j k_l summed over the
 * products whose three tiles are present (real arithmetic: a complex multiply-add
 * counts 8 flops, 4 times this). */
double bsgen_flops(const struct bsgen_problem *pb);

/* Products (i, j, l) whose three tiles are present. */
int64_t bsgen_products(const struct bsgen_problem *pb);

#endif
