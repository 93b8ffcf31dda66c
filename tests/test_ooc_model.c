/*
 * tests/test_ooc_model.c — the out-of-core executor against its communication model on
 * several MPI ranks: a forced plan (blocks b x c, chunks of depth d, lookahead ell) on
 * a divisible problem, checked three ways:
 *   1. the residual against cblas_dgemm;
 *   2. tiles received over MPI per rank (StarPU-MPI's byte counters) against what the
 *      algorithm must receive: every remote A or B tile a rank's block needs, once per
 *      block — counted here independently of the library. For op = N this is §3.2.1's
 *      (b(1-1/q) + c(1-1/p)) Kt X Y (the plan's mpi_tiles, checked too); transposed
 *      operands are laid out differently and receive more. Ratio within [0.95, 1.0]:
 *      a tile received more often than that is a scheduling bug;
 *   3. the peak of received tile copies held in host memory: at most 2 (ell + 1)
 *      chunks' worth of remote A and B tiles — this rank's ell + 1 chunks in flight,
 *      plus what a sender that is ahead has already sent (each rank throttles its own
 *      insertion, and a sender needs this rank's tiles to go further, so it is at most
 *      ell + 1 chunks ahead). An unthrottled run holds every chunk of a block at once:
 *      the network is not flooded and received copies do not outlive their chunk.
 * Usage: test_ooc_model P Q [serialized]   (under mpiexec with P*Q processes;
 * "serialized" initialises MPI at MPI_THREAD_SERIALIZED first, so the counters are
 * exchanged through StarPU-MPI, the path simulation and SERIALIZED MPIs take)
 */
#include <errno.h>
#include <string.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

struct model_case {
	int64_t tiles, nb, b, c, d;
	int lookahead;
	char ta, tb;
};

static const struct model_case cases[] = {
	{ 12, 32, 3, 2, 2, 1, 'N', 'N' },
	{ 12, 32, 2, 3, 1, 2, 'T', 'N' },
	{ 12, 32, 6, 6, 3, 1, 'N', 'T' },
};

static int owner(int64_t r, int64_t c, int P, int Q)
{
	return (int)((r % P) * Q + c % Q);
}

/* Local tile indices of block @p blk along a dimension (coordinate @p me of @p np). */
static int64_t local_block(int64_t blk, int64_t size, int me, int np, int64_t total,
			   int64_t *out)
{
	int64_t n = 0;

	for (int64_t l = blk * size; l < (blk + 1) * size && l * np + me < total; l++)
		out[n++] = l * np + me;
	return n;
}

/* Remote A and B tiles this rank must receive: in all, and at most per chunk. */
static void expected_receives(const struct model_case *mc, const struct stargemm_plan *pl,
			      int P, int Q, double *total, double *max_chunk)
{
	int me = stargemm_rank(), u = me / Q, v = me % Q;
	int64_t rows[64], cols[64], t = mc->tiles;

	*total = *max_chunk = 0;
	for (int64_t y = 0; y < pl->Y; y++)
		for (int64_t x = 0; x < pl->X; x++) {
			int64_t nr = local_block(x, pl->b, u, P, t, rows);
			int64_t nc = local_block(y, pl->c, v, Q, t, cols);

			for (int64_t z = 0; nr && nc && z < pl->Z; z++) {
				double chunk = 0;

				for (int64_t k = z * pl->d; k < (z + 1) * pl->d && k < t; k++) {
					for (int64_t i = 0; i < nr; i++)
						chunk += (mc->ta == 'T' ? owner(k, rows[i], P, Q)
									: owner(rows[i], k, P, Q)) != me;
					for (int64_t j = 0; j < nc; j++)
						chunk += (mc->tb == 'T' ? owner(cols[j], k, P, Q)
									: owner(k, cols[j], P, Q)) != me;
				}
				*total += chunk;
				*max_chunk = chunk > *max_chunk ? chunk : *max_chunk;
			}
		}
}

static int run(const struct model_case *mc, int P, int Q)
{
	int64_t n = mc->tiles * mc->nb, tile_bytes = mc->nb * mc->nb * 8;
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	struct stargemm_ooc_options opt;
	struct stargemm_transfer_stats st;
	struct stargemm_plan plan;
	double *a = NULL, *b = NULL, *c0 = NULL, *cr = NULL, res = INFINITY, mpi_ratio = 0;
	double expected = 0, per_chunk = 0, peak_chunks = INFINITY, received = 0;
	int paper_ok = 1;
	int ret, ok = 0;

	ret = stargemm_matrix_create(&A, n, n, mc->nb, mc->nb, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&B, n, n, mc->nb, mc->nb, P, Q);
	ret = ret ? ret : stargemm_matrix_create(&C, n, n, mc->nb, mc->nb, P, Q);
	ret = ret ? ret : stargemm_matrix_fill_random(A, 5);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 6);
	ret = ret ? ret : stargemm_matrix_fill_random(C, 7);
	if (!ret) {
		a = sg_gather_new(A);
		b = sg_gather_new(B);
		c0 = sg_gather_new(C);
		ret = stargemm_transfers_reset();
	}
	stargemm_ooc_options_init(&opt);
	opt.b = mc->b;
	opt.c = mc->c;
	opt.d = mc->d;
	opt.lookahead = mc->lookahead;
	opt.device_bytes = (int64_t)1 << 40;
	ret = ret ? ret : stargemm_pdgemm_ooc(mc->ta, mc->tb, 1.0, A, B, 1.0, C, &opt, &plan);
	ret = ret ? ret : stargemm_transfers_get(&st);
	if (!ret) {
		cr = sg_gather_new(C);
		received = (double)st.mpi_recv_bytes / (double)tile_bytes;
		expected_receives(mc, &plan, P, Q, &expected, &per_chunk);
		mpi_ratio = expected > 0 ? received / expected : (received == 0);
		/* For N x N the independent count is the paper's formula. */
		if (mc->ta == 'N' && mc->tb == 'N')
			paper_ok = fabs(expected - plan.mpi_tiles) < 1e-6;
		peak_chunks = per_chunk > 0 ? (double)st.ram_peak_bytes / (per_chunk * tile_bytes)
					    : (st.ram_peak_bytes == 0 ? 0.0 : INFINITY);
	}
	if (ret)
		fprintf(stderr, "rank %d: error %d: %s\n", stargemm_rank(), ret, stargemm_last_error());
	if (stargemm_rank() == 0 && cr)
		res = sg_gemm_residual(mc->ta, mc->tb, n, n, n, 1.0, a, b, 1.0, c0, cr);
	/* Every rank judges its own MPI and memory figures; rank 0 gathers the verdicts. */
	ok = !ret && mpi_ratio >= 0.95 && mpi_ratio <= 1.0 + 1e-9 &&
	     peak_chunks <= 2 * (mc->lookahead + 1) && paper_ok;
	printf("rank %d: %dx%d %c%c Nt=%lld b=%lld c=%lld d=%lld l=%d X=%lld Y=%lld: mpi "
	       "received %.0f tiles, expected %.0f (ratio %.3f), paper model %.0f; peak "
	       "received copies %.2f chunks (bound %d) %s\n", stargemm_rank(), P, Q, mc->ta,
	       mc->tb, (long long)mc->tiles, (long long)plan.b, (long long)plan.c,
	       (long long)plan.d, plan.lookahead, (long long)plan.X, (long long)plan.Y,
	       received, expected, mpi_ratio, plan.mpi_tiles, peak_chunks, 2 * (mc->lookahead + 1),
	       ok ? "PASS" : "FAIL");
	if (stargemm_rank() == 0)
		printf("residual %.3e %s\n", res, res < SG_RESIDUAL_BOUND ? "PASS" : "FAIL");
	ok = ok && (stargemm_rank() != 0 || res < SG_RESIDUAL_BOUND);
	sg_free_case(a, b, c0, cr, A, B, C);
	return ok;
}

int main(int argc, char **argv)
{
	int P = argc > 2 ? atoi(argv[1]) : 1, Q = argc > 2 ? atoi(argv[2]) : 1;
	int failures = 0, all = 0, ret, provided, serialized = argc > 3 &&
								   !strcmp(argv[3], "serialized");

	/* "serialized": MPI initialised here below MPI_THREAD_MULTIPLE, so that the
	 * library exchanges its counters through StarPU-MPI instead of MPI_Allreduce. */
	if (serialized)
		MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		failures += !run(&cases[i], P, Q);
	/* The verdict of every rank. Below MPI_THREAD_MULTIPLE the application thread may
	 * not call MPI while StarPU-MPI's thread runs: then only once it has stopped. */
	if (!serialized)
		MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	stargemm_finalize();
	if (serialized) {
		MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Finalize();
	}
	return all ? 1 : 0;
}
