/*
 * tests/test_bsgemm.c — block-sparse products against a dense reference.
 *
 * Usage: test_bsgemm P Q   (under mpiexec with P*Q processes)
 * Every case builds A, B and C with seeded random patterns (the same on every rank),
 * fills their present tiles with seeded random values, gathers them on rank 0 (absent
 * tiles read as zeros), runs C = alpha op(A) op(B) + beta C in core and through the
 * out-of-core executor (a forced plan of 1 x 2-tile blocks and one-tile chunks), and
 * compares the gathered C with cblas_dgemm restricted to C's pattern (C's pattern is
 * kept) through the scaled residual of tests/check.h. Also: a pattern with every tile
 * gives bit for bit stargemm_pdgemm's dense result; scatter/gather round trips through
 * every root (small, large and irregular tiles) drop the values of absent tiles and
 * gather zeros there; bad patterns and distributions are refused
 * with a message naming the constraint; operands on grids whose ranks go in another
 * order (a distribution's grid map, here reversed column-major) multiply alike, and a
 * product of operands on differently ordered grids is refused. One line per case,
 * PASS/FAIL; rank 0's verdict.
 */
#include <cblas.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct bs_case {
	const char *name;
	int64_t m, n, k, tile;     /* tile 0: irregular tiles */
	char ta, tb;
	double alpha, beta;
	double da, db, dc;         /* densities of A, B, C (tiles present) */
	int nan_c;                 /* C filled with NaN (beta = 0) */
	int stripes;               /* A: every third tile row empty; B: every other column */
	int dist;                  /* not 2D block-cyclic: each operand its own distribution
				      (1), on the grid of reversed_grid() (2) */
};

static const struct bs_case cases[] = {
	{ "irregular 30%", 150, 170, 140, 0, 'N', 'N', 1.25, 0.5, 0.3, 0.3, 0.6, 0, 0, 0 },
	{ "irregular 50% TT", 150, 170, 140, 0, 'T', 'T', -1.0, 2.0, 0.5, 0.5, 0.8, 0, 0, 0 },
	{ "ragged NT", 106, 283, 97, 13, 'N', 'T', 0.3, -0.7, 0.4, 0.6, 1.0, 0, 0, 0 },
	{ "ragged TN", 106, 283, 97, 23, 'T', 'N', 1.0, 1.0, 0.3, 0.3, 0.5, 0, 0, 0 },
	{ "beta = 0 on NaN C", 150, 170, 140, 0, 'N', 'N', 2.0, 0.0, 0.5, 0.5, 0.8, 1, 0, 0 },
	{ "A empty: C = beta C", 106, 83, 97, 20, 'N', 'N', 1.0, -0.5, 0.0, 0.7, 0.9, 0, 0, 0 },
	{ "A empty, beta = 0", 106, 83, 97, 20, 'N', 'N', 1.0, 0.0, 0.0, 0.7, 0.9, 1, 0, 0 },
	{ "C empty", 106, 83, 97, 20, 'N', 'N', 1.0, 1.0, 0.7, 0.7, 0.0, 0, 0, 0 },
	{ "dense B (SpMM)", 150, 170, 140, 0, 'N', 'N', 1.0, 1.0, 0.2, 1.0, 1.0, 0, 0, 0 },
	/* batched (small products, alpha = 1): libxsmm's beta = 0 kernel must not read C */
	{ "SpMM, beta = 0 on NaN C", 150, 170, 140, 0, 'N', 'N', 1.0, 0.0, 0.2, 1.0, 1.0, 1, 0,
	  0 },
	{ "empty tile rows, columns", 106, 283, 97, 17, 'N', 'N', 1.5, 0.5, 0.8, 0.8, 1.0, 0,
	  1, 0 },
	{ "distributed 40%", 150, 170, 140, 0, 'N', 'N', 1.0, 0.5, 0.4, 0.4, 0.7, 0, 0, 1 },
	{ "distributed TN", 106, 283, 97, 13, 'T', 'N', -0.5, 1.0, 0.5, 0.5, 0.8, 0, 0, 1 },
	{ "grid map 40%", 150, 170, 140, 0, 'N', 'N', 1.0, 0.5, 0.4, 0.4, 0.7, 0, 0, 2 },
	{ "grid map TN", 106, 283, 97, 13, 'T', 'N', -0.5, 1.0, 0.5, 0.5, 0.8, 0, 0, 2 },
};

/* The P x Q grid whose process (p, q) is rank P Q - 1 - (q P + p): column-major order,
 * reversed (another order than row-major on any grid of more than one process). */
static const int *reversed_grid(int P, int Q)
{
	static int map[64];

	for (int p = 0; p < P; p++)
		for (int q = 0; q < Q; q++)
			map[p * Q + q] = P * Q - 1 - (q * P + p);
	return map;
}

/* A distribution that is not 2D block-cyclic, different for each operand (which):
 * tile rows in runs of 2 + which per process row, tile columns dealt in mirrored
 * cyclic order (the order of stargemm_balanced_columns()) shifted by which. */
static void distribution(int which, int64_t nr, int64_t nc, int P, int Q, int *row_proc,
			 int *col_proc)
{
	for (int64_t i = 0; i < nr; i++)
		row_proc[i] = (int)(i / (2 + which) % P);
	for (int64_t j = 0; j < nc; j++) {
		int64_t t = j + which, pos = t % Q;

		col_proc[j] = (int)(t / Q % 2 ? Q - 1 - pos : pos);
	}
}

/* The pattern is a pure function of (seed, i, j), the same on every rank: the library's
 * counter-based generator, uniform in [-0.5, 0.5). */
static int tile_drawn(uint64_t seed, int64_t i, int64_t j, double density)
{
	return stargemm_random_element(seed, i, j) + 0.5 < density;
}

/* Tile sizes cycling through 7, 23, 41, 16, 30 (or regular @p tile) up to @p total. */
static int64_t tiling(int64_t total, int64_t tile, int64_t *sizes)
{
	static const int64_t pattern[] = { 7, 23, 41, 16, 30 };
	int64_t count = 0, covered = 0;

	while (covered < total) {
		int64_t s = tile ? tile : pattern[count % 5];

		sizes[count++] = covered + s <= total ? s : total - covered;
		covered += sizes[count - 1];
	}
	return count;
}

/* A rows x cols block-sparse matrix: which = 0, 1, 2 for A, B, C (seed, stripes). */
static int make(const struct bs_case *c, int which, double density, int64_t rows,
		int64_t cols, int trans, int P, int Q, struct stargemm_matrix **X)
{
	int64_t rs[512], cs[512], nr = tiling(rows, c->tile, rs), nc = tiling(cols, c->tile, cs);
	int64_t *list = malloc((size_t)(2 * nr * nc + 2) * sizeof(*list)), n = 0;
	int ret;

	for (int64_t j = 0; j < nc; j++)
		for (int64_t i = 0; i < nr; i++) {
			/* op(X)'s tile row (A) or column (B) for the stripes */
			int64_t r = trans ? j : i, q = trans ? i : j;
			int empty = c->stripes && ((which == 0 && r % 3 == 1) ||
						   (which == 1 && q % 2 == 1));

			if (!empty && tile_drawn(100 + which, i, j, density)) {
				list[2 * n] = i;
				list[2 * n + 1] = j;
				n++;
			}
		}
	if (c->dist) {
		int rp[512], cp[512];
		const int *grid = c->dist == 2 ? reversed_grid(P, Q) : NULL;
		struct stargemm_distribution d = { P, Q, rp, cp, grid };

		distribution(which, nr, nc, P, Q, rp, cp);
		ret = stargemm_matrix_create_distributed(X, nr, rs, nc, cs, n, list, &d);
		for (int64_t e = 0; ret == 0 && e < n; e++) {
			int at = rp[list[2 * e]] * Q + cp[list[2 * e + 1]];

			if (stargemm_matrix_owner(*X, list[2 * e], list[2 * e + 1]) !=
			    (grid ? grid[at] : at))
				ret = -EIO;
		}
	} else {
		ret = stargemm_matrix_create_sparse(X, nr, rs, nc, cs, n, list, P, Q);
	}
	free(list);
	if (ret == 0 && stargemm_matrix_present_count(*X) != n) {
		fprintf(stderr, "  present count %lld, %lld tiles listed\n",
			(long long)stargemm_matrix_present_count(*X), (long long)n);
		ret = -EIO;
	}
	return ret;
}

static double fro(const double *x, int64_t n)
{
	double s = 0.0;

	for (int64_t i = 0; i < n; i++)
		s += isnan(x[i]) ? 0.0 : x[i] * x[i];
	return sqrt(s);
}

/* The scaled residual of C against alpha op(A) op(B) + beta C0 kept to C's pattern. */
static double residual(const struct bs_case *c, const struct stargemm_matrix *C,
		       const double *a, const double *b, const double *c0, const double *cr)
{
	int64_t m = c->m, n = c->n, k = c->k;
	double *ref = malloc((size_t)(m * n) * sizeof(*ref)), diff = 0.0, scale;

	for (int64_t e = 0; e < m * n; e++)
		ref[e] = c->beta == 0.0 ? 0.0 : c0[e];
	cblas_dgemm(CblasColMajor, c->ta == 'T' ? CblasTrans : CblasNoTrans,
		    c->tb == 'T' ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, c->alpha, a,
		    c->ta == 'T' ? (int)k : (int)m, b, c->tb == 'T' ? (int)n : (int)k,
		    c->beta == 0.0 ? 0.0 : c->beta, ref, (int)m);
	for (int64_t j = 0; j < stargemm_matrix_nt(C); j++)
		for (int64_t i = 0; i < stargemm_matrix_mt(C); i++) {
			int present = stargemm_matrix_tile_present(C, i, j);

			for (int64_t cc = 0; cc < stargemm_matrix_tile_cols(C, j); cc++)
				for (int64_t r = 0; r < stargemm_matrix_tile_rows(C, i); r++) {
					int64_t e = stargemm_matrix_row_offset(C, i) + r +
						    (stargemm_matrix_col_offset(C, j) + cc) * m;
					double want = present ? ref[e] : 0.0;

					diff += (cr[e] - want) * (cr[e] - want);
				}
		}
	free(ref);
	scale = (fabs(c->alpha) * fro(a, m * k) * fro(b, k * n) +
		 (c->beta == 0.0 ? 0.0 : fabs(c->beta) * fro(c0, m * n))) * (double)k * DBL_EPSILON;
	return scale > 0 ? sqrt(diff) / scale : sqrt(diff);
}

/* Out of core with the planner's plan, fitted to the list: stargemm_pdgemm_plan()
 * must give the plan the product runs with. With packed operands the plan is over
 * packs (src/packlist.c), of groups of about 256 elements a side: room for 24 of
 * them. */
static int run_planned(const struct bs_case *c, int packed, struct stargemm_matrix *A,
		       struct stargemm_matrix *B, struct stargemm_matrix *C)
{
	struct stargemm_ooc_options opt;
	struct stargemm_plan asked, used;
	int ret;

	stargemm_ooc_options_init(&opt);
	opt.device_bytes = 24 * (packed ? 300 * 300 : 41 * 41) * (int64_t)sizeof(double);
	if ((ret = stargemm_pdgemm_plan(c->ta, c->tb, A, B, C, &opt, &asked)) ||
	    (ret = stargemm_pdgemm_ooc(c->ta, c->tb, c->alpha, A, B, c->beta, C, &opt, &used)))
		return ret;
	if (asked.b != used.b || asked.c != used.c || asked.d != used.d ||
	    asked.tile_bytes != used.tile_bytes || asked.footprint_bytes != used.footprint_bytes ||
	    used.footprint_bytes > opt.device_bytes) {
		fprintf(stderr, "  plan b=%lld c=%lld d=%lld unit %lld footprint %lld, product's "
			"b=%lld c=%lld d=%lld unit %lld footprint %lld (device %lld bytes)\n",
			(long long)asked.b, (long long)asked.c, (long long)asked.d,
			(long long)asked.tile_bytes, (long long)asked.footprint_bytes,
			(long long)used.b, (long long)used.c, (long long)used.d,
			(long long)used.tile_bytes, (long long)used.footprint_bytes,
			(long long)opt.device_bytes);
		return -EPROTO;
	}
	return 0;
}

/* ooc: 0 in core, 1 out of core with a forced plan, 2 with the planner's, 3 the same
 * with packed operands (planned over packs). */
static int run(const struct bs_case *c, int ooc, struct stargemm_matrix *A,
	       struct stargemm_matrix *B, struct stargemm_matrix *C)
{
	struct stargemm_ooc_options opt;

	if (!ooc)
		return stargemm_pdgemm(c->ta, c->tb, c->alpha, A, B, c->beta, C);
	if (ooc >= 2)
		return run_planned(c, ooc == 3, A, B, C);
	stargemm_ooc_options_init(&opt);
	opt.b = 1;
	opt.c = stargemm_matrix_nt(C) > 1 ? 2 : 1;
	opt.d = 1;
	opt.lookahead = 1;
	opt.device_bytes = 48 * 41 * 56 * (int64_t)sizeof(double);
	return stargemm_pdgemm_ooc(c->ta, c->tb, c->alpha, A, B, c->beta, C, &opt, NULL);
}

static int run_case(const struct bs_case *c, int P, int Q, int ooc)
{
	static const char *const modes[] = { "in core", "ooc    ", "planned", "packed " };
	int ta = c->ta == 'T', tb = c->tb == 'T', ret;
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	double *a = NULL, *b = NULL, *c0 = NULL, *cr = NULL, res = INFINITY;

	sg_allow_packs(ooc == 0 || ooc == 3);
	ret = make(c, 0, c->da, ta ? c->k : c->m, ta ? c->m : c->k, ta, P, Q, &A);
	ret = ret ? ret : make(c, 1, c->db, tb ? c->n : c->k, tb ? c->k : c->n, tb, P, Q, &B);
	ret = ret ? ret : make(c, 2, c->dc, c->m, c->n, 0, P, Q, &C);
	ret = ret ? ret : stargemm_matrix_fill_random(A, 11);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 22);
	ret = ret ? ret : c->nan_c ? stargemm_matrix_fill(C, sg_fill_nan, NULL)
				   : stargemm_matrix_fill_random(C, 33);
	if (!ret) {
		a = sg_gather_new(A);
		b = sg_gather_new(B);
		c0 = sg_gather_new(C);
		ret = run(c, ooc, A, B, C);
	}
	if (!ret)
		cr = sg_gather_new(C);
	if (ret && stargemm_rank() == 0)
		fprintf(stderr, "  error %d: %s\n", ret, stargemm_last_error());
	if (stargemm_rank() == 0 && !ret && a && b && c0 && cr)
		res = residual(c, C, a, b, c0, cr);
	if (stargemm_rank() == 0)
		printf("%-26s %dx%d %s M=%-4lld N=%-4lld K=%-4lld tiles A %lld B %lld C %lld "
		       "%c%c residual=%9.3e %s\n", c->name, P, Q, modes[ooc],
		       (long long)c->m, (long long)c->n, (long long)c->k,
		       (long long)stargemm_matrix_present_count(A),
		       (long long)stargemm_matrix_present_count(B),
		       (long long)stargemm_matrix_present_count(C), c->ta, c->tb, res,
		       res < SG_RESIDUAL_BOUND ? "PASS" : "FAIL");
	sg_free_case(a, b, c0, cr, A, B, C);
	return res < SG_RESIDUAL_BOUND;
}

/* Every tile present: the same tasks as the dense product, the same bits. */
static int full_pattern_is_dense(int P, int Q)
{
	static const struct bs_case c = { "full", 150, 170, 140, 0, 'N', 'T', 1.5, 0.5, 1.0,
					  1.0, 1.0, 0, 0, 0 };
	int64_t rs[512], cs[512], ks[512];
	int64_t nr = tiling(c.m, 0, rs), nc = tiling(c.n, 0, cs), nk = tiling(c.k, 0, ks);
	struct stargemm_matrix *A[2] = { 0 }, *B[2] = { 0 }, *C[2] = { 0 };
	double *res[2] = { NULL, NULL };
	int same = 0, ret = 0;

	for (int s = 0; s < 2 && !ret; s++) {
		ret = s ? make(&c, 0, 1.0, c.m, c.k, 0, P, Q, &A[s])
			: stargemm_matrix_create_irregular(&A[s], nr, rs, nk, ks, P, Q);
		ret = ret ? ret : s ? make(&c, 1, 1.0, c.n, c.k, 1, P, Q, &B[s])
				    : stargemm_matrix_create_irregular(&B[s], nc, cs, nk, ks, P, Q);
		ret = ret ? ret : s ? make(&c, 2, 1.0, c.m, c.n, 0, P, Q, &C[s])
				    : stargemm_matrix_create_irregular(&C[s], nr, rs, nc, cs, P, Q);
		ret = ret ? ret : stargemm_matrix_fill_random(A[s], 11);
		ret = ret ? ret : stargemm_matrix_fill_random(B[s], 22);
		ret = ret ? ret : stargemm_matrix_fill_random(C[s], 33);
		ret = ret ? ret : stargemm_pdgemm(c.ta, c.tb, c.alpha, A[s], B[s], c.beta, C[s]);
		if (!ret)
			res[s] = sg_gather_new(C[s]);
	}
	if (stargemm_rank() == 0) {
		same = !ret && res[0] && res[1] &&
		       !memcmp(res[0], res[1], (size_t)(c.m * c.n) * sizeof(double));
		printf("%-26s %dx%d every tile present = stargemm_pdgemm, bit for bit %s\n",
		       "density 1", P, Q, same ? "PASS" : "FAIL");
	}
	for (int s = 0; s < 2; s++) {
		free(res[s]);
		stargemm_matrix_destroy(A[s]);
		stargemm_matrix_destroy(B[s]);
		stargemm_matrix_destroy(C[s]);
	}
	return stargemm_rank() != 0 || same;
}

/* One round trip through @p root: scatter from rank 0, gather to root, scatter from
 * root, gather to rank 0, which checks that absent tiles were dropped by the scatters
 * and gathered as zeros, every present value came back, and the presence queries
 * agree with the pattern. */
static int round_trip(const struct bs_case *c, int root, int P, int Q)
{
	struct stargemm_matrix *X = NULL;
	int64_t m = c->m, n = c->n;
	int me = stargemm_rank();
	double *full = me == 0 ? malloc((size_t)(m * n) * sizeof(*full)) : NULL;
	double *mid = me == root ? malloc((size_t)(m * n) * sizeof(*mid)) : NULL;
	double *back = me == 0 ? malloc((size_t)(m * n) * sizeof(*back)) : NULL;
	int good, ret = make(c, 0, 0.5, m, n, 0, P, Q, &X);

	for (int64_t e = 0; full && back && e < m * n; e++) {
		full[e] = (double)(e + 1);
		back[e] = NAN;   /* the zeros of absent tiles must be written */
	}
	ret = ret ? ret : stargemm_matrix_scatter(X, full, m, 0);
	ret = ret ? ret : stargemm_matrix_gather(X, mid, m, root);
	ret = ret ? ret : stargemm_matrix_scatter(X, mid, m, root);
	ret = ret ? ret : stargemm_matrix_gather(X, back, m, 0);
	good = ret == 0;
	for (int64_t j = 0; good && me == 0 && j < stargemm_matrix_nt(X); j++)
		for (int64_t i = 0; good && i < stargemm_matrix_mt(X); i++) {
			int present = stargemm_matrix_tile_present(X, i, j);

			good &= present == tile_drawn(100, i, j, 0.5);
			for (int64_t cc = 0; cc < stargemm_matrix_tile_cols(X, j); cc++)
				for (int64_t r = 0; r < stargemm_matrix_tile_rows(X, i); r++) {
					int64_t e = stargemm_matrix_row_offset(X, i) + r +
						    (stargemm_matrix_col_offset(X, j) + cc) * m;

					good &= back[e] == (present ? full[e] : 0.0);
				}
		}
	good &= X && !stargemm_matrix_tile_present(X, -1, 0) &&
		!stargemm_matrix_tile_present(X, stargemm_matrix_mt(X), 0) &&
		!stargemm_matrix_tile_present(X, 0, stargemm_matrix_nt(X));
	if (me == 0)
		printf("%-26s %dx%d %lld x %lld tiles of %s, root %d: %s%s%s\n", "scatter/gather",
		       P, Q, (long long)m, (long long)n, c->name, root, good ? "PASS" : "FAIL",
		       ret ? ": " : "", ret ? stargemm_last_error() : "");
	free(full);
	free(mid);
	free(back);
	stargemm_matrix_destroy(X);
	return good;
}

/* Scatter and gather round trips through every root: small ragged tiles (eager MPI
 * messages), large ragged tiles (rendezvous messages: a scatter of these once hung on
 * two ranks) and irregular tiles, half of the tiles present. */
static int scatter_round_trip(int P, int Q)
{
	static const struct bs_case shapes[] = {
		{ "13", 106, 83, 1, 13, 'N', 'N', 1, 1, 0.5, 0.5, 0.5, 0, 0, 0 },
		{ "300", 1100, 900, 1, 300, 'N', 'N', 1, 1, 0.5, 0.5, 0.5, 0, 0, 0 },
		{ "7-41", 200, 170, 1, 0, 'N', 'N', 1, 1, 0.5, 0.5, 0.5, 0, 0, 0 },
	};
	int good = 1;

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (int root = 0; root < stargemm_nranks(); root++)
			good &= round_trip(&shapes[s], root, P, Q);
	return good;
}

/* Small irregular tiles (7-41): the shape of the three cases below. */
static const struct bs_case small_tiles = { "7-41", 200, 170, 1, 0, 'N', 'N', 1, 1, 0.5, 0.5,
					    0.5, 0, 0, 0 };

/* A matrix read before any fill (small tiles: packed, src/pack.c): its tiles are
 * zeros, present or not (a pack read before its first write stopped StarPU). */
static int unfilled_is_zero(int P, int Q)
{
	struct stargemm_matrix *X = NULL;
	double *full = stargemm_rank() == 0 ? malloc(200 * 170 * sizeof(*full)) : NULL;
	int ret, good;

	sg_allow_packs(1);
	ret = make(&small_tiles, 0, 0.5, 200, 170, 0, P, Q, &X);

	for (int64_t e = 0; full && e < 200 * 170; e++)
		full[e] = NAN;
	ret = ret ? ret : stargemm_matrix_gather(X, full, 200, 0);
	good = ret == 0;
	for (int64_t e = 0; good && full && e < 200 * 170; e++)
		good = full[e] == 0.0;
	if (stargemm_rank() == 0)
		printf("%-26s %dx%d gathered before any fill: %s%s%s\n", "unfilled", P, Q,
		       good ? "zeros, PASS" : "FAIL", ret ? ": " : "",
		       ret ? stargemm_last_error() : "");
	free(full);
	stargemm_matrix_destroy(X);
	return good;
}

/* A symbolic product that extends a packed C made with other pack settings: refused
 * (its packs would not match C's, src/pattern.c), with a message naming the settings. */
static int changed_packs_refused(int P, int Q)
{
	struct stargemm_matrix *A = NULL, *C = NULL, *D = (struct stargemm_matrix *)&D;
	int ret, good;

	sg_allow_packs(1);
	ret = make(&small_tiles, 0, 0.5, 200, 200, 0, P, Q, &A);
	ret = ret ? ret : stargemm_matrix_create_product(&C, 'N', 'N', A, A, NULL);
	setenv("STARGEMM_PACK_EXTENT", "100", 1);
	good = ret == 0 &&
	       stargemm_matrix_create_product(&D, 'N', 'N', A, A, C) == -EINVAL && D == NULL &&
	       strstr(stargemm_last_error(), "C's packs differ") != NULL;
	unsetenv("STARGEMM_PACK_EXTENT");
	if (stargemm_rank() == 0)
		printf("%-26s %dx%d refused: \"%s\" %s\n", "C packed otherwise", P, Q,
		       stargemm_last_error(), good ? "PASS" : "FAIL");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(C);
	return good;
}

/* A bad argument on the root only (its array NULL, then its norms array): every rank
 * refuses with the root's message (the others saying that the root failed), instead
 * of waiting for the root's messages (src/collective.c, stargemm__agree()). Every
 * rank judges its own result (and fails the run through its exit status). */
static int root_only_errors_agreed(int P, int Q)
{
	struct stargemm_matrix *X = NULL;
	int root = stargemm_nranks() - 1, me = stargemm_rank(), ret, good;
	double *norms;
	char other[32];

	sg_allow_packs(0);
	ret = make(&small_tiles, 0, 0.5, 200, 170, 0, P, Q, &X);
	norms = ret ? NULL : malloc((size_t)(stargemm_matrix_mt(X) * stargemm_matrix_nt(X)) *
				    sizeof(*norms));
	snprintf(other, sizeof(other), "rank %d failed", root);
	good = ret == 0 && stargemm_matrix_scatter(X, NULL, 200, root) != 0 &&
	       strstr(stargemm_last_error(), "NULL on the root") != NULL &&
	       (me == root || strstr(stargemm_last_error(), other) != NULL);
	good = good && stargemm_matrix_norms(X, me == root ? NULL : norms) != 0 &&
	       strstr(stargemm_last_error(), "norms is NULL") != NULL &&
	       (me == root || strstr(stargemm_last_error(), other) != NULL);
	printf("%-26s %dx%d rank %d: root's bad arrays refused: %s%s%s\n", "root-only errors", P,
	       Q, me, good ? "PASS" : "FAIL", good ? "" : ": ", good ? "" : stargemm_last_error());
	free(norms);
	stargemm_matrix_destroy(X);
	sg_allow_packs(1);
	return good;
}

/* Whether a creation that returned @p ret and @p X was refused with -EINVAL, X NULL and
 * a message containing @p want; prints a PASS/FAIL line named @p name on rank 0. */
static int was_refused(const char *name, int ret, struct stargemm_matrix *X,
		       const char *want)
{
	int good = ret == -EINVAL && X == NULL && strstr(stargemm_last_error(), want);

	if (stargemm_rank() == 0)
		printf("%-26s refused: \"%s\" %s\n", name, stargemm_last_error(),
		       good ? "PASS" : "FAIL");
	if (ret == 0)
		stargemm_matrix_destroy(X);
	return good;
}

/* One bad pattern: refused with -EINVAL and a message containing @p want. */
static int refused(const char *name, int64_t n, const int64_t *list, const char *want, int P,
		   int Q)
{
	static const int64_t sizes[] = { 10, 10, 10 };
	struct stargemm_matrix *X = (struct stargemm_matrix *)&X;
	int ret = stargemm_matrix_create_sparse(&X, 3, sizes, 3, sizes, n, list, P, Q);

	return was_refused(name, ret, X, want);
}

/* A bad distribution: refused with -EINVAL and a message containing @p want. */
static int refused_distribution(const char *name, const struct stargemm_distribution *d,
				const char *want)
{
	static const int64_t sizes[] = { 10, 10, 10 }, list[] = { 0, 0 };
	struct stargemm_matrix *X = (struct stargemm_matrix *)&X;
	int ret = stargemm_matrix_create_distributed(&X, 3, sizes, 3, sizes, 1, list, d);

	return was_refused(name, ret, X, want);
}

/* A process index outside the grid, in rows or columns, and a grid map that is not a
 * permutation of the ranks (one out of range; one listed twice, with two or more):
 * refused, naming the entry. */
static int bad_distributions(int P, int Q)
{
	int rows[3] = { 0, P, 0 }, cols[3] = { 0, 0, -1 }, grid[64], n = P * Q, good = 1;
	char want[96];

	good &= refused_distribution("row process = P", &(struct stargemm_distribution){
					     P, Q, rows, NULL, NULL }, "row_proc[1] = ");
	good &= refused_distribution("column process < 0", &(struct stargemm_distribution){
					     P, Q, NULL, cols, NULL },
				     "col_proc[2] = -1: a process index must lie in [0,");
	for (int e = 0; e < n; e++)
		grid[e] = e + (e == n - 1);   /* the last one is P Q */
	snprintf(want, sizeof(want), "grid[%d] = %d is out of range: the grid must list each "
		 "rank of [0, %d) once", n - 1, n, n);
	good &= refused_distribution("grid rank out of range", &(struct stargemm_distribution){
					     P, Q, NULL, NULL, grid }, want);
	if (n < 2)
		return good;
	grid[n - 1] = 0;
	snprintf(want, sizeof(want), "grid[%d] = 0 is a rank listed twice (grid[0] too)", n - 1);
	return good & refused_distribution("grid rank twice", &(struct stargemm_distribution){
						   P, Q, NULL, NULL, grid }, want);
}

/* A product of operands on grids of one shape whose ranks go in other orders: refused,
 * naming a process that is another rank (with two or more ranks). */
static int grid_order_mismatch(int P, int Q)
{
	static const int64_t sizes[] = { 10, 10 };
	struct stargemm_distribution row_major = { P, Q, NULL, NULL, NULL },
				     other = { P, Q, NULL, NULL, reversed_grid(P, Q) };
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	char want[128];
	int ret, good;

	if (P * Q < 2)
		return 1;
	ret = stargemm_matrix_create_distributed(&A, 2, sizes, 2, sizes, -1, NULL, &row_major);
	ret = ret ? ret : stargemm_matrix_create_distributed(&B, 2, sizes, 2, sizes, -1, NULL,
							    &other);
	ret = ret ? ret : stargemm_matrix_create_distributed(&C, 2, sizes, 2, sizes, -1, NULL,
							    &other);
	snprintf(want, sizeof(want), "process (0, 0) of the %dx%d grid is rank 0 in A and rank "
		 "%d in C", P, Q, P * Q - 1);
	good = ret == 0 && stargemm_pdgemm('N', 'N', 1.0, A, B, 0.0, C) == -EINVAL &&
	       strstr(stargemm_last_error(), want) != NULL;
	if (stargemm_rank() == 0)
		printf("%-26s %dx%d refused: \"%s\" %s\n", "grids in other orders", P, Q,
		       stargemm_last_error(), good ? "PASS" : "FAIL");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	return good;
}

static int bad_patterns(int P, int Q)
{
	static const int64_t outside[] = { 0, 0, 3, 1 }, twice[] = { 1, 2, 0, 0, 1, 2 };
	static const int64_t negative[] = { 0, -1 };
	int good = 1;

	good &= refused("tile row out of range", 2, outside, "outside the 3 x 3 tiles", P, Q);
	good &= refused("tile column negative", 1, negative, "outside the 3 x 3 tiles", P, Q);
	good &= refused("tile listed twice", 3, twice, "(1, 2) is listed twice", P, Q);
	good &= refused("negative count", -1, twice, "must be >= 0", P, Q);
	good &= refused("NULL list", 2, NULL, "the list is NULL", P, Q);
	good &= bad_distributions(P, Q);
	good &= grid_order_mismatch(P, Q);
	return good;
}

int main(int argc, char **argv)
{
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1;
	int failures = 0, ncases = 0, own_failure, ret;

	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int ooc = 0; ooc < 4; ooc++, ncases++)
			failures += !run_case(&cases[i], P, Q, ooc);
	failures += !full_pattern_is_dense(P, Q);
	failures += !scatter_round_trip(P, Q);
	failures += !bad_patterns(P, Q);
	failures += !unfilled_is_zero(P, Q);
	failures += !changed_packs_refused(P, Q);
	own_failure = !root_only_errors_agreed(P, Q);
	ncases += 5;
	if (stargemm_rank() == 0)
		printf("%d of %d cases failed\n", failures, ncases);
	/* Rank 0 holds the verdict of the cases it checks, each rank its own of the
	 * root-only errors; mpiexec fails when any rank does. */
	ret = (stargemm_rank() == 0 && failures) || own_failure ? 1 : 0;
	stargemm_finalize();
	return ret;
}
