/*
 * tests/test_generate.c — products whose A or B is made on demand, tile by tile
 * (stargemm_matrix_create_generated(), src/generate.c), against BLAS and against the
 * same product with the operand stored.
 *
 * Usage: test_generate P Q   (under mpiexec with P*Q processes)
 * The generator writes the values stargemm_matrix_fill_random() would, so the stored
 * twin of a generated operand holds the same matrix. Cases, on ragged tilings:
 *  - in core, dense and block-sparse, B or A or both generated, transposed, the four
 *    types: residual within the bound; the tiles each rank made equal the distinct
 *    generated tiles its products read (C's owner computes), and the generator calls
 *    equal the count reported; the MPI bytes this rank received equal those of the
 *    stored operand's tiles it needs — no generated tile crosses the network;
 *  - out of core (CPU, chunks of depth 1 and lookahead 1): residual; each tile made at
 *    least once per rank that reads it, at most once per chunk that reads it;
 *  - A and B kept in place (stationary 'A', 'B') with B generated; a norm-filtered
 *    product (the norms of a generated matrix, each tile made on its owner), which
 *    skips what the stored twin's product skips (some) and gives the same bits;
 *  - a generator that fails on one tile on one rank: the product fails on every rank
 *    with a message naming the tile, in core and out of core, and the next product
 *    is right;
 *  - every generated operand also has a CUDA generator: without CUDA workers it is
 *    never called and no tile is counted as made on a GPU;
 *  - bad input: a NULL generator, a generated C, and the calls that would need stored
 *    tiles (fill, gather, copy, add, scale, trace, the old C of create_product); a CUDA
 *    generator for a stored matrix or NULL.
 * One line per case, PASS/FAIL; rank 0's verdict is the exit status.
 */
#include <complex.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <starpu.h>

#include "check.h"

/* What a generator makes: the random values of @p seed, or status 7 on the tile at
 * (fail_row0, fail_col0) on rank fail_rank (-1: never). */
struct source {
	stargemm_type type;
	uint64_t seed;
	int fail_rank;
	int64_t fail_row0, fail_col0;
	atomic_llong calls;
};

static int generate(void *tile, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
		    int64_t col0, void *arg)
{
	struct source *s = arg;

	atomic_fetch_add(&s->calls, 1);
	if (s->fail_rank == stargemm_rank() && row0 == s->fail_row0 && col0 == s->fail_col0)
		return 7;
	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++) {
			double re = stargemm_random_element(s->seed, row0 + r, col0 + c);
			double im = stargemm_random_element(~s->seed, row0 + r, col0 + c);

			sg_put(s->type, tile, r + c * ld, re + im * _Complex_I);
		}
	return 0;
}

/* A problem: C (m x n) = alpha op(A) op(B) + beta C, tiles of nb, ragged. */
struct shape {
	const char *name;
	stargemm_type type;
	int64_t m, n, k, nb;
	char ta, tb;
	int gen_a, gen_b;   /* which operands are generated */
	int sparse;         /* A and B block-sparse: tile (i, j) absent when (i + 2 j) % 3 == 0 */
	int ooc;            /* out of core on the CPU */
	char stationary;    /* 0, 'A' or 'B' */
	double eps;         /* norm filter, 0: none */
};

struct operand {
	int64_t mt, nt, *rows, *cols, npresent, *present;
	struct stargemm_matrix *gen, *stored;   /* gen NULL if not generated */
	struct source src;
};

/* A CUDA generator given to every generated operand: on ranks without CUDA workers
 * it must never run (the tiles are made on the host), which it records. */
static atomic_llong cuda_calls;

static int cuda_generate(void *tile, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
			 int64_t col0, void *stream, void *arg)
{
	atomic_fetch_add(&cuda_calls, 1);
	return 0;
}

static int64_t *tiling(int64_t n, int64_t nb, int64_t *count)
{
	int64_t t = (n + nb - 1) / nb, *s = malloc((size_t)t * sizeof(*s));

	for (int64_t i = 0; s && i < t; i++)
		s[i] = i < t - 1 ? nb : n - nb * (t - 1);
	*count = t;
	return s;
}

static int make_operand(struct operand *x, const struct shape *sh, int64_t m, int64_t n,
			int sparse, int generated, uint64_t seed, int P, int Q)
{
	struct stargemm_distribution dist = { P, Q, NULL, NULL, NULL };
	int ret;

	memset(x, 0, sizeof(*x));
	x->rows = tiling(m, sh->nb, &x->mt);
	x->cols = tiling(n, sh->nb, &x->nt);
	x->present = malloc((size_t)(2 * x->mt * x->nt) * sizeof(*x->present));
	x->npresent = sparse ? 0 : -1;
	for (int64_t j = 0; sparse && j < x->nt; j++)
		for (int64_t i = 0; i < x->mt; i++)
			if ((i + 2 * j) % 3 != 0) {
				x->present[2 * x->npresent] = i;
				x->present[2 * x->npresent + 1] = j;
				x->npresent++;
			}
	x->src = (struct source){ sh->type, seed, -1, 0, 0, 0 };
	ret = stargemm_matrix_create_distributed_type(&x->stored, sh->type, x->mt, x->rows,
						      x->nt, x->cols, x->npresent, x->present,
						      &dist);
	if (!ret)
		ret = stargemm_matrix_fill_random(x->stored, seed);
	if (!ret && generated)
		ret = stargemm_matrix_create_generated(&x->gen, sh->type, x->mt, x->rows, x->nt,
						       x->cols, x->npresent, x->present, &dist,
						       generate, &x->src);
	/* without CUDA workers the host generator makes every tile */
	if (!ret && generated && starpu_cuda_worker_get_count() == 0)
		ret = stargemm_matrix_set_cuda_generator(x->gen, cuda_generate);
	return ret;
}

static void free_operand(struct operand *x)
{
	stargemm_matrix_destroy(x->gen);
	stargemm_matrix_destroy(x->stored);
	free(x->rows);
	free(x->cols);
	free(x->present);
}

/* The operand a product reads: the generated one if any. */
static const struct stargemm_matrix *used(const struct operand *x)
{
	return x->gen ? x->gen : x->stored;
}

/* Tile (r, c) of op(X). */
static void op_tile(const struct stargemm_matrix *X, char t, int64_t r, int64_t c, int64_t *i,
		    int64_t *j)
{
	*i = t == 'N' ? r : c;
	*j = t == 'N' ? c : r;
}

/* What this rank's products read, C's owner computing them (C kept in place): the
 * distinct generated tiles, and the bytes of the stored operands' tiles owned by
 * other ranks (StarPU-MPI receives each once). */
static void expected_reads(const struct shape *sh, const struct operand *a,
			   const struct operand *b, const struct stargemm_matrix *C,
			   int64_t *made, int64_t *recv_bytes)
{
	const struct stargemm_matrix *A = used(a), *B = used(b);
	int64_t kt = sh->ta == 'N' ? stargemm_matrix_nt(A) : stargemm_matrix_mt(A);
	uint8_t *seen_a = calloc((size_t)(a->mt * a->nt), 1);
	uint8_t *seen_b = calloc((size_t)(b->mt * b->nt), 1);
	int me = stargemm_rank();
	size_t elem = stargemm_type_size(sh->type);

	*made = *recv_bytes = 0;
	for (int64_t j = 0; j < stargemm_matrix_nt(C); j++)
		for (int64_t i = 0; i < stargemm_matrix_mt(C); i++) {
			if (stargemm_matrix_owner(C, i, j) != me)
				continue;
			for (int64_t k = 0; k < kt; k++) {
				int64_t ai, aj, bi, bj;
				const struct operand *x[2] = { a, b };
				const struct stargemm_matrix *X[2] = { A, B };
				uint8_t *seen[2] = { seen_a, seen_b };

				op_tile(A, sh->ta, i, k, &ai, &aj);
				op_tile(B, sh->tb, k, j, &bi, &bj);
				if (!stargemm_matrix_tile_present(A, ai, aj) ||
				    !stargemm_matrix_tile_present(B, bi, bj))
					continue;
				for (int o = 0; o < 2; o++) {
					int64_t ti = o ? bi : ai, tj = o ? bj : aj;
					int64_t at = ti + tj * x[o]->mt;

					if (seen[o][at])
						continue;
					seen[o][at] = 1;
					if (x[o]->gen)
						(*made)++;
					else if (stargemm_matrix_owner(X[o], ti, tj) != me)
						*recv_bytes += stargemm_matrix_tile_rows(X[o], ti) *
							       stargemm_matrix_tile_cols(X[o], tj) *
							       (int64_t)elem;
				}
			}
		}
	free(seen_a);
	free(seen_b);
}

static int64_t sum_ranks(int64_t v)
{
	long long in = v, out = 0;

	MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	return out;
}

static int all_ranks(int good)
{
	int out = 0;

	MPI_Allreduce(&good, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	return out;
}

static void options(const struct shape *sh, struct stargemm_bsgemm_options *opt)
{
	stargemm_bsgemm_options_init(opt);
	opt->filter_eps = sh->eps;
	opt->stationary = sh->stationary;
	opt->out_of_core = sh->ooc;
	if (sh->ooc) {
		opt->ooc.b = 1;
		opt->ooc.c = 1;
		opt->ooc.d = 1;
		opt->ooc.lookahead = 1;
		opt->ooc.device_bytes = 64 << 20;
	}
}

/* Whether the @p n elements of @p x and @p y differ. */
static int differ(stargemm_type t, const void *x, const void *y, int64_t n)
{
	for (int64_t e = 0; e < n; e++)
		if (sg_get(t, x, e) != sg_get(t, y, e))
			return 1;
	return 0;
}

/* One product with the generated operands, one with their stored twins: residuals,
 * counts and bytes as the file's comment says. */
static int product_case(const struct shape *sh, int P, int Q)
{
	double _Complex alpha = 1.5 - 0.25 * _Complex_I, beta = -0.5 + 0.5 * _Complex_I;
	char al[16], be[16];
	struct stargemm_distribution dist = { P, Q, NULL, NULL, NULL };
	struct stargemm_bsgemm_options opt;
	struct stargemm_bsgemm_info info, twin;
	struct stargemm_transfer_stats ts;
	struct operand a, b;
	struct stargemm_matrix *C = NULL, *Cs = NULL;
	int64_t am = sh->ta == 'N' ? sh->m : sh->k, an = sh->ta == 'N' ? sh->k : sh->m;
	int64_t bm = sh->tb == 'N' ? sh->k : sh->n, bn = sh->tb == 'N' ? sh->n : sh->k;
	int64_t cmt, cnt, *crows = tiling(sh->m, sh->nb, &cmt), *ccols = tiling(sh->n, sh->nb, &cnt);
	int64_t made = 0, recv = 0, calls;
	void *ga = NULL, *gb = NULL, *c0 = NULL, *c = NULL, *cs = NULL;
	double res = INFINITY, res_s = INFINITY;
	int ret, good;

	sg_put(sh->type, al, 0, alpha);
	sg_put(sh->type, be, 0, beta);
	ret = make_operand(&a, sh, am, an, sh->sparse, sh->gen_a, 11, P, Q);
	ret = ret ? ret : make_operand(&b, sh, bm, bn, sh->sparse, sh->gen_b, 12, P, Q);
	ret = ret ? ret : stargemm_matrix_create_distributed_type(&C, sh->type, cmt, crows, cnt,
								  ccols, -1, NULL, &dist);
	ret = ret ? ret : stargemm_matrix_create_distributed_type(&Cs, sh->type, cmt, crows, cnt,
								  ccols, -1, NULL, &dist);
	ret = ret ? ret : stargemm_matrix_fill_random(C, 13);
	ret = ret ? ret : stargemm_matrix_fill_random(Cs, 13);
	if (!ret) {
		ga = sg_gather_typed(a.stored);
		gb = sg_gather_typed(b.stored);
		c0 = sg_gather_typed(C);
		expected_reads(sh, &a, &b, C, &made, &recv);
	}
	options(sh, &opt);
	ret = ret ? ret : stargemm_transfers_reset();
	ret = ret ? ret : stargemm_bsgemm_type(sh->ta, sh->tb, al, used(&a), used(&b), be, C,
					       &opt, &info);
	ret = ret ? ret : stargemm_transfers_get(&ts);
	ret = ret ? ret : stargemm_bsgemm_type(sh->ta, sh->tb, al, a.stored, b.stored, be, Cs,
					       &opt, &twin);
	if (!ret) {
		c = sg_gather_typed(C);
		cs = sg_gather_typed(Cs);
	}
	/* filtered: against the stored twin's product, filtered alike (the same bits) */
	if (!ret && stargemm_rank() == 0 && c && cs && sh->eps > 0.0)
		res = res_s = differ(sh->type, c, cs, sh->m * sh->n) ? INFINITY : 0.0;
	else if (!ret && stargemm_rank() == 0 && ga && gb && c0 && c && cs) {
		res = sg_typed_residual(sh->type, sh->ta, sh->tb, sh->m, sh->n, sh->k, al, ga, gb,
					be, c0, c);
		res_s = sg_typed_residual(sh->type, sh->ta, sh->tb, sh->m, sh->n, sh->k, al, ga,
					  gb, be, c0, cs);
	}
	calls = (int64_t)atomic_load(&a.src.calls) + (int64_t)atomic_load(&b.src.calls);
	/* the counts: exact in core with C in place; out of core at least once per
	 * reader; the calls are the count reported */
	good = !ret && calls == info.generated_tiles && info.skipped == twin.skipped &&
	       (sh->eps == 0.0 || info.skipped > 0) && info.generated_on_gpus == 0 &&
	       atomic_load(&cuda_calls) == 0;
	if (!sh->ooc && !sh->stationary && !sh->eps)
		good = good && info.generated_tiles == made && (int64_t)ts.mpi_recv_bytes == recv;
	else if (!sh->stationary && !sh->eps)
		good = good && info.generated_tiles >= made;
	good = all_ranks(good);
	if (stargemm_rank() == 0) {
		good = good && res < SG_RESIDUAL_BOUND && res_s < SG_RESIDUAL_BOUND;
		printf("%-34s %dx%d residual %.2e (stored twin %.2e) tiles made %" PRId64
		       " (all ranks; distinct reads %" PRId64 ") skipped %" PRId64 " MPI "
		       "received %" PRIu64 " bytes (stored operands' %" PRId64 ") %s\n",
		       sh->name, P, Q, res, res_s, sum_ranks(info.generated_tiles),
		       sum_ranks(made), info.skipped, ts.mpi_recv_bytes, recv,
		       good ? "PASS" : "FAIL");
	} else {
		sum_ranks(info.generated_tiles);
		sum_ranks(made);
	}
	if (ret && stargemm_rank() == 0)
		fprintf(stderr, "  error %d: %s\n", ret, stargemm_last_error());
	free(ga);
	free(gb);
	free(c0);
	free(c);
	free(cs);
	free(crows);
	free(ccols);
	free_operand(&a);
	free_operand(&b);
	stargemm_matrix_destroy(C);
	stargemm_matrix_destroy(Cs);
	return good || stargemm_rank() != 0;
}

/* A generator failing on tile (1, 2) of B on the last rank: -EIO on every rank naming
 * the tile; then the same product without the failure is right. */
static int failure_case(int P, int Q, int ooc)
{
	struct shape sh = { "failure", STARGEMM_D, 130, 140, 150, 40, 'N', 'N', 0, 1, 0, ooc,
			    0, 0.0 };
	struct stargemm_distribution dist = { P, Q, NULL, NULL, NULL };
	struct stargemm_bsgemm_options opt;
	struct operand a, b;
	struct stargemm_matrix *C = NULL;
	int64_t cmt, cnt, *crows = tiling(sh.m, sh.nb, &cmt), *ccols = tiling(sh.n, sh.nb, &cnt);
	double one = 1.0, zero = 0.0, res = INFINITY;
	void *ga = NULL, *gb = NULL, *c = NULL;
	int ret, failed, named, good;

	ret = make_operand(&a, &sh, sh.m, sh.k, 0, 0, 21, P, Q);
	ret = ret ? ret : make_operand(&b, &sh, sh.k, sh.n, 0, 1, 22, P, Q);
	ret = ret ? ret : stargemm_matrix_create_distributed_type(&C, sh.type, cmt, crows, cnt,
								  ccols, -1, NULL, &dist);
	if (ret) {
		if (stargemm_rank() == 0)
			fprintf(stderr, "  setup: %s\n", stargemm_last_error());
		return stargemm_rank() != 0;
	}
	options(&sh, &opt);
	b.src.fail_rank = stargemm_nranks() - 1;
	b.src.fail_row0 = 40;
	b.src.fail_col0 = 80;
	ret = stargemm_bsgemm_type('N', 'N', &one, a.stored, b.gen, &zero, C, &opt, NULL);
	failed = ret == -EIO;
	named = failed && strstr(stargemm_last_error(), "tile (1, 2)") != NULL;
	if (!named)
		fprintf(stderr, "  rank %d: %d: %s\n", stargemm_rank(), ret, stargemm_last_error());
	b.src.fail_rank = -1;
	ret = stargemm_bsgemm_type('N', 'N', &one, a.stored, b.gen, &zero, C, &opt, NULL);
	ga = sg_gather_typed(a.stored);
	gb = sg_gather_typed(b.stored);
	c = ret ? NULL : sg_gather_typed(C);
	if (stargemm_rank() == 0 && ga && gb && c)
		res = sg_typed_residual(sh.type, 'N', 'N', sh.m, sh.n, sh.k, &one, ga, gb, &zero,
					NULL, c);
	good = all_ranks(named && !ret);
	if (stargemm_rank() == 0) {
		good = good && res < SG_RESIDUAL_BOUND;
		printf("%-34s %dx%d %s: refused on every rank naming tile (1, 2): %s; next "
		       "product residual %.2e %s\n", "generator failure", P, Q,
		       ooc ? "out of core" : "in core", named ? "yes" : "no", res,
		       good ? "PASS" : "FAIL");
	}
	free(ga);
	free(gb);
	free(c);
	free(crows);
	free(ccols);
	free_operand(&a);
	free_operand(&b);
	stargemm_matrix_destroy(C);
	return good || stargemm_rank() != 0;
}

/* Bad input, each refused by name. */
static int bad_input(int P, int Q)
{
	struct shape sh = { "refusals", STARGEMM_D, 50, 60, 70, 20, 'N', 'N', 0, 1, 0, 0, 0, 0 };
	struct stargemm_distribution dist = { P, Q, NULL, NULL, NULL };
	struct stargemm_matrix *X = NULL, *Y = NULL;
	struct operand a, b;
	double one = 1.0, tr[2], *full = NULL;
	int64_t sizes[3] = { 20, 20, 10 };
	int good = 1, ret;

	ret = make_operand(&a, &sh, 50, 70, 0, 0, 31, P, Q);
	ret = ret ? ret : make_operand(&b, &sh, 70, 50, 0, 1, 32, P, Q);
	if (ret)
		return stargemm_rank() != 0;
	if (stargemm_rank() == 0)
		full = calloc(70 * 50, sizeof(*full));
	good &= sg_refused("NULL generator", stargemm_matrix_create_generated(
				   &X, STARGEMM_D, 3, sizes, 3, sizes, -1, NULL, &dist, NULL, NULL),
			   "generator is NULL");
	good &= sg_refused("generated C", stargemm_bsgemm('N', 'N', 1.0, a.stored, a.stored,
							  0.0, b.gen, NULL, NULL),
			   "C is a generated matrix");
	good &= sg_refused("gather", stargemm_matrix_gather(b.gen, full, 70, 0),
			   "A is a generated matrix");
	good &= sg_refused("fill", stargemm_matrix_fill_random(b.gen, 1), "cannot be filled");
	good &= sg_refused("copy", stargemm_matrix_copy(&X, b.gen), "cannot be copied");
	good &= sg_refused("add", stargemm_matrix_add(&X, &one, b.stored, &one, b.gen),
			   "B is a generated matrix");
	good &= sg_refused("scale", stargemm_matrix_scale(b.gen, &one), "cannot be scaled");
	good &= sg_refused("trace", stargemm_matrix_trace(b.gen, tr), "cannot be traced");
	good &= sg_refused("CUDA generator of a stored matrix",
			   stargemm_matrix_set_cuda_generator(a.stored, cuda_generate),
			   "A is not a generated matrix");
	good &= sg_refused("CUDA generator of NULL",
			   stargemm_matrix_set_cuda_generator(NULL, cuda_generate), "A is NULL");
	good &= sg_refused("old C of create_product",
			   stargemm_matrix_create_product(&Y, 'N', 'N', a.stored, a.stored,
							  b.gen),
			   "C is a generated matrix");
	free(full);
	free_operand(&a);
	free_operand(&b);
	return good || stargemm_rank() != 0;
}

int main(int argc, char **argv)
{
	int P = argc > 1 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1, ok = 1;
	const struct shape cases[] = {
		{ "dense, B generated", STARGEMM_D, 230, 170, 250, 64, 'N', 'N', 0, 1, 0, 0, 0, 0 },
		{ "dense, A generated, A^T", STARGEMM_D, 170, 230, 250, 64, 'T', 'N', 1, 0, 0, 0, 0,
		  0 },
		{ "dense, both generated, B^T", STARGEMM_D, 200, 150, 190, 48, 'N', 'T', 1, 1, 0, 0,
		  0, 0 },
		{ "block-sparse, B generated", STARGEMM_D, 260, 210, 300, 40, 'N', 'N', 0, 1, 1, 0,
		  0, 0 },
		{ "single, B generated", STARGEMM_S, 150, 130, 170, 40, 'N', 'N', 0, 1, 0, 0, 0, 0 },
		{ "complex, B generated, B^H", STARGEMM_Z, 120, 110, 130, 40, 'N', 'C', 0, 1, 0, 0,
		  0, 0 },
		{ "single complex, A generated", STARGEMM_C, 120, 110, 130, 40, 'N', 'N', 1, 0, 1, 0,
		  0, 0 },
		{ "out of core, B generated", STARGEMM_D, 230, 170, 250, 64, 'N', 'N', 0, 1, 0, 1, 0,
		  0 },
		{ "out of core sparse, A generated", STARGEMM_D, 260, 210, 300, 40, 'N', 'N', 1, 0,
		  1, 1, 0, 0 },
		{ "A in place, B generated", STARGEMM_D, 230, 170, 250, 64, 'N', 'N', 0, 1, 1, 0,
		  'A', 0 },
		{ "B in place, B generated", STARGEMM_D, 230, 170, 250, 64, 'N', 'N', 0, 1, 1, 0,
		  'B', 0 },
		{ "filtered, B generated", STARGEMM_D, 260, 210, 300, 40, 'N', 'N', 0, 1, 1, 0, 0,
		  130.0 },
	};

	if (stargemm_init(NULL, &argc, &argv)) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return 1;
	}
	sg_allow_packs(0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok &= product_case(&cases[i], P, Q);
	ok &= failure_case(P, Q, 0);
	ok &= failure_case(P, Q, 1);
	ok &= bad_input(P, Q);
	stargemm_finalize();
	return ok ? 0 : 1;
}
