/*
 * bench/scalapack.c — the same GEMM with ScaLAPACK's p?gemm of the element type
 * (--prec), the classical distributed peer: P x Q BLACS grid (row-major, like stargemm's), block size --nb, one BLAS thread
 * per rank, operands filled with stargemm's random generator. Timed like stargemm:
 * barrier, pdgemm, barrier.
 */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>

#include "../tests/check.h"
#include "../src/scalapack.h"
#include "bench.h"
#include "stargemm.h"

static pgemm_fn *pgemm_of(stargemm_type t)
{
	switch (t) {
	case STARGEMM_S: return psgemm_;
	case STARGEMM_D: return pdgemm_;
	case STARGEMM_C: return pcgemm_;
	default: return pzgemm_;
	}
}

struct local_matrix {
	int rows, cols, ld;
	int desc[9];
	void *data;
};

/* Allocate and fill this rank's block-cyclic part of a global rows x cols matrix. */
static int local_matrix(stargemm_type t, struct local_matrix *x, int rows, int cols, int nb,
			int ctxt, int P, int Q, int myrow, int mycol, uint64_t seed)
{
	int zero = 0, info, cplx = t == STARGEMM_C || t == STARGEMM_Z;

	x->rows = numroc_(&rows, &nb, &myrow, &zero, &P);
	x->cols = numroc_(&cols, &nb, &mycol, &zero, &Q);
	x->ld = x->rows > 1 ? x->rows : 1;
	descinit_(x->desc, &rows, &cols, &nb, &nb, &zero, &zero, &ctxt, &x->ld, &info);
	x->data = malloc((size_t)x->ld * (size_t)(x->cols > 0 ? x->cols : 1) *
			 stargemm_type_size(t));
	if (info != 0 || !x->data)
		return -1;
	for (int lj = 0; lj < x->cols; lj++) {
		int64_t gj = ((int64_t)(lj / nb) * Q + mycol) * nb + lj % nb;

		for (int li = 0; li < x->rows; li++) {
			int64_t gi = ((int64_t)(li / nb) * P + myrow) * nb + li % nb;

			sg_put(t, x->data, li + (int64_t)lj * x->ld,
			       stargemm_random_element(seed, gi, gj) +
				       (cplx ? I * stargemm_random_element(~seed, gi, gj) : 0.0));
		}
	}
	return 0;
}

int bench_run_scalapack(const struct bench_opts *opts)
{
	struct bench_opts o = *opts;
	struct local_matrix a = { 0 }, b = { 0 }, c = { 0 };
	int nranks, rank, ctxt, nprow, npcol, myrow, mycol, one = 1, ret = 0;
	int m = (int)o.m, n = (int)o.n, k = (int)o.k, nb = (int)o.nb;
	int ta = o.transA != 'N', tb = o.transB != 'N';
	double alpha[2], beta[2];

	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (o.P < 0 && o.Q < 0) {
		o.P = nranks;
		o.Q = 1;
	}
	if (o.P * o.Q != nranks) {
		if (rank == 0)
			fprintf(stderr, "scalapack: P x Q = %d x %d does not match %d ranks\n", o.P,
				o.Q, nranks);
		return 1;
	}
	bench_set_blas_threads(1);
	if (o.peak <= 0) {
		double local = bench_local_gemm_rate(o.prec, o.m < 4096 ? o.m : 4096, 1);

		MPI_Allreduce(&local, &o.peak, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	Cblacs_get(-1, 0, &ctxt);
	Cblacs_gridinit(&ctxt, "Row", o.P, o.Q);
	Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
	if (local_matrix(o.prec, &a, ta ? k : m, ta ? m : k, nb, ctxt, o.P, o.Q, myrow, mycol,
			 o.seed) ||
	    local_matrix(o.prec, &b, tb ? n : k, tb ? k : n, nb, ctxt, o.P, o.Q, myrow, mycol,
			 o.seed + 1) ||
	    local_matrix(o.prec, &c, m, n, nb, ctxt, o.P, o.Q, myrow, mycol, o.seed + 2)) {
		fprintf(stderr, "scalapack: cannot set up the local matrices on rank %d\n", rank);
		ret = 1;
	}
	for (int it = -o.warmup; !ret && it < o.niter; it++) {
		double t;

		MPI_Barrier(MPI_COMM_WORLD);
		t = bench_now();
		pgemm_of(o.prec)(&o.transA, &o.transB, &m, &n, &k,
				 bench_scalar(o.prec, o.alpha, alpha), a.data, &one, &one, a.desc,
				 b.data, &one, &one, b.desc, bench_scalar(o.prec, o.beta, beta),
				 c.data, &one, &one, c.desc);
		MPI_Barrier(MPI_COMM_WORLD);
		t = bench_now() - t;
		if (it >= 0 && rank == 0)
			bench_print_row(&o, nranks, 1, it, t, o.peak, -1.0, NULL);
	}
	free(a.data);
	free(b.data);
	free(c.data);
	Cblacs_gridexit(ctxt);
	return ret;
}
