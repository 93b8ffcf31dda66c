/*
 * examples/chebyshev.c — Chebyshev filter subspace iteration (paper 004: filter
 * diagonalization), the lowest eigenpairs of a block-sparse symmetric H, written with
 * stargemm's public API: sparse x tall-skinny products, the small Gram matrices X^T Y
 * over the huge inner dimension, and a Rayleigh–Ritz step whose small dense problems
 * are solved by LAPACK on rank 0.
 *
 *   Y = p(H) X, p the degree-m Chebyshev polynomial of [c - e, c + e] = [cut, top]:
 *       Y0 = X, Y1 = (H - c) X / e, Y(k+1) = 2 (H - c) Y(k) / e - Y(k-1)
 *   Q = Y R^-1 with G = Y^T Y = R^T R (Cholesky QR, twice)
 *   H_s = Q^T (H Q) = V diag(theta) V^T;  X = Q V;  cut = the largest Ritz value theta
 *
 * The filter grows the components below cut and keeps those above within [-1, 1]:
 * the block converges to the lowest eigenvectors. H is banded with exponentially
 * decaying off-diagonal elements (as examples/sign.c's) and its diagonal spread over
 * [-1, 1]. Each step prints the Ritz values' largest change and the largest residual
 * ||H x - theta x|| of the wanted pairs, and the time; --check compares the wanted Ritz
 * values with LAPACK's eigenvalues of the dense H (small n).
 *
 * Usage: chebyshev [--n N] [--lo L] [--hi H] [--band B] [--decay D] [--nev K]
 *                  [--block S] [--degree M] [--iters I] [--tol T] [--P P] [--check]
 *                  [--ram-limit MIB --disk DIR [--disk-mib MIB]]
 * (under mpiexec with P processes, a P x 1 grid: X's one tile column lives on it).
 * With a RAM budget the products by H run out of core, the disk node in DIR holding
 * what the budget does not.
 * Exit status 0 when the wanted residuals fell below tol (and the check passed).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stargemm.h>

#include "banded.h"

/* LAPACK (OpenBLAS carries it): Cholesky, triangular inverse, symmetric eigensolver. */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda,
	     int *info);
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
	    double *w, double *work, const int *lwork, int *info);

struct options {
	int64_t n, lo, hi, band, nev, block, degree, iters, P, ram_limit, disk_mib;
	double decay, tol;
	int check;
	const char *disk;
};

/* ---- H ------------------------------------------------------------------------------ */

/* H(r, c): the diagonal spread over [-1, 1], off it examples/banded.c's decaying
 * elements. */
static double element(const struct options *o, int64_t r, int64_t c)
{
	if (r == c)
		return 2.0 * banded_unit(r, r) - 1.0;
	return banded_offdiagonal(r, c, o->band, o->decay);
}

/* The top of H's spectrum (Gershgorin). */
static double top(const struct options *o)
{
	return banded_bound(o->band, o->decay);
}

static void fill_h(double *t, int64_t ld, int64_t rows, int64_t cols, int64_t r0, int64_t c0,
		   void *arg)
{
	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			t[r + c * ld] = element(arg, r0 + r, c0 + c);
}

/* H on tiles that meet the band; X (n x block, one tile column) random. Tile rows in P
 * contiguous blocks, one per rank: H's band then couples a rank's rows with its
 * neighbours' at the blocks' edges only, and H X moves few tiles of X (dealt
 * cyclically, every tile row would need its neighbours' from another rank). */
static int make(const struct options *o, struct stargemm_matrix **H,
		struct stargemm_matrix **X)
{
	int64_t nt, np = 0, block = o->block, *sizes = banded_tiling(o->n, o->lo, o->hi, &nt);
	int64_t *pairs = sizes ? banded_pattern(sizes, nt, o->band, &np) : NULL;
	int *rows = pairs ? calloc((size_t)nt, sizeof(*rows)) : NULL;
	int *cols = rows ? calloc((size_t)nt, sizeof(*cols)) : NULL, zero = 0;
	struct stargemm_distribution dist = { (int)o->P, 1, rows, cols, NULL }, xdist = dist;
	int ret = cols ? 0 : -ENOMEM;

	xdist.col_proc = &zero;   /* one process column */
	for (int64_t i = 0; rows && i < nt; i++)
		rows[i] = (int)(i * o->P / nt);
	if (!ret)
		ret = stargemm_matrix_create_distributed(H, nt, sizes, nt, sizes, np, pairs, &dist);
	if (!ret)
		ret = stargemm_matrix_fill(*H, fill_h, (void *)o);
	if (!ret)
		ret = stargemm_matrix_create_distributed(X, nt, sizes, 1, &block, -1, NULL,
							 &xdist);
	if (!ret)
		ret = stargemm_matrix_fill_random(*X, 5);
	free(sizes);
	free(pairs);
	free(rows);
	free(cols);
	return ret;
}

/* ---- the filter ---------------------------------------------------------------------- */

/* A new n x block matrix on X's tiling and distribution, of zeros. */
static int like(const struct stargemm_matrix *X, struct stargemm_matrix **Y)
{
	double zero = 0.0;

	return stargemm_matrix_add(Y, &zero, X, &zero, X);
}

/* Z = alpha H Y + beta Z: out of core (the plan's chunks of H streamed through the RAM
 * budget, the disk node holding the rest) when a RAM budget is given. */
static int apply_h(const struct options *o, double alpha, const struct stargemm_matrix *H,
		   const struct stargemm_matrix *Y, double beta, struct stargemm_matrix *Z)
{
	struct stargemm_bsgemm_options opt;

	stargemm_bsgemm_options_init(&opt);
	opt.out_of_core = o->ram_limit > 0;
	/* the filter's products all read H unchanged: the stationary model may pay a
	 * cold move of H's tiles over the polynomial's degree */
	opt.reuse_a = (int)o->degree;
	return stargemm_bsgemm('N', 'N', alpha, H, Y, beta, Z, &opt, NULL);
}

/* Y = p(H) X, the degree-m Chebyshev polynomial of [c - e, c + e]. */
static int filter(const struct options *o, const struct stargemm_matrix *H,
		  const struct stargemm_matrix *X, double c, double e,
		  struct stargemm_matrix **Y)
{
	struct stargemm_matrix *prev = NULL, *cur = NULL, *next = NULL;
	double a = -c / e, minus_one = -1.0, b = -2.0 * c / e;
	int ret = stargemm_matrix_copy(&prev, X);

	/* Y1 = (H X - c X) / e */
	if (!ret)
		ret = stargemm_matrix_copy(&cur, X);
	if (!ret)
		ret = stargemm_matrix_scale(cur, &a);
	if (!ret)
		ret = apply_h(o, 1.0 / e, H, X, 1.0, cur);
	for (int64_t k = 1; k < o->degree && !ret; k++) {
		/* Y(k+1) = 2 H Y(k) / e - 2 c Y(k) / e - Y(k-1) */
		ret = stargemm_matrix_add(&next, &b, cur, &minus_one, prev);
		if (!ret)
			ret = apply_h(o, 2.0 / e, H, cur, 1.0, next);
		stargemm_matrix_destroy(prev);
		prev = cur;
		cur = next;
		next = NULL;
	}
	stargemm_matrix_destroy(prev);
	if (ret) {
		stargemm_matrix_destroy(cur);
		return ret;
	}
	*Y = cur;
	return 0;
}

/* ---- small dense problems on rank 0 ------------------------------------------------- */

/* A block x block matrix (one tile, on rank 0). */
static int small(const struct options *o, struct stargemm_matrix **S)
{
	return stargemm_matrix_create(S, o->block, o->block, o->block, o->block, (int)o->P, 1);
}

/* Q = Y R^-1, G = Y^T Y = R^T R; -EDOM when G is not positive definite. */
static int cholqr(const struct options *o, const struct stargemm_matrix *Y,
		  struct stargemm_matrix **Q)
{
	struct stargemm_matrix *G = NULL;
	int n = (int)o->block, info = 0, ret = small(o, &G);
	double *g = stargemm_rank() == 0 ? calloc((size_t)(n * n), sizeof(*g)) : NULL;

	if (!ret)
		ret = stargemm_pdgemm('T', 'N', 1.0, Y, Y, 0.0, G);
	if (!ret)
		ret = stargemm_matrix_gather(G, g, n, 0);
	if (!ret && g) {
		dpotrf_("U", &n, g, &n, &info);
		if (!info)
			dtrtri_("U", "N", &n, g, &n, &info);
		for (int c = 0; c < n; c++)   /* R^-1 is upper triangular */
			for (int r = c + 1; r < n; r++)
				g[r + c * n] = 0.0;
	}
	if (!ret && stargemm_rank() == 0 && info)
		fprintf(stderr, "chebyshev: Cholesky QR failed (LAPACK info %d)\n", info);
	if (!ret)
		ret = stargemm_matrix_scatter(G, g, n, 0);
	if (!ret)
		ret = like(Y, Q);
	if (!ret)
		ret = stargemm_pdgemm('N', 'N', 1.0, Y, G, 0.0, *Q);
	free(g);
	stargemm_matrix_destroy(G);
	return ret;
}

/* Rayleigh–Ritz on the orthonormal Q: theta (block values, ascending), X = Q V, and the
 * residual norms ||H x - theta x|| of each pair in res. */
static int rayleigh_ritz(const struct options *o, const struct stargemm_matrix *H,
			 const struct stargemm_matrix *Q, struct stargemm_matrix **X,
			 double *theta, double *res)
{
	struct stargemm_matrix *W = NULL, *S = NULL, *HX = NULL, *R = NULL, *T = NULL;
	int n = (int)o->block, info = 0, lwork = 64 * n, ret = like(Q, &W);
	double *s = calloc((size_t)(n * n), sizeof(*s)), *work = malloc((size_t)lwork * sizeof(*work));

	if (!s || !work)
		ret = -ENOMEM;
	if (!ret)
		ret = apply_h(o, 1.0, H, Q, 0.0, W);                    /* W = H Q */
	if (!ret)
		ret = small(o, &S);
	if (!ret)
		ret = stargemm_pdgemm('T', 'N', 1.0, Q, W, 0.0, S);     /* Q^T H Q */
	if (!ret)
		ret = stargemm_matrix_gather(S, s, n, 0);
	/* A failure on rank 0 only is reported, not returned: the other ranks go on with
	 * the collectives, and the residuals say the step failed. */
	if (!ret && stargemm_rank() == 0)
		dsyev_("V", "U", &n, s, &n, theta, work, &lwork, &info);
	if (!ret && info)
		fprintf(stderr, "chebyshev: the Rayleigh-Ritz eigensolver failed (LAPACK info %d)\n",
			info);
	if (!ret)
		ret = stargemm_matrix_scatter(S, s, n, 0);                /* V */
	if (!ret && (ret = like(Q, X)) == 0)
		ret = stargemm_pdgemm('N', 'N', 1.0, Q, S, 0.0, *X);     /* X = Q V */
	if (!ret && (ret = like(Q, &HX)) == 0)
		ret = stargemm_pdgemm('N', 'N', 1.0, W, S, 0.0, HX);     /* H X = W V */
	/* R = H X - X diag(theta): S becomes diag(theta) */
	if (!ret && stargemm_rank() == 0) {
		memset(s, 0, (size_t)(n * n) * sizeof(*s));
		for (int i = 0; i < n; i++)
			s[i + i * n] = theta[i];
	}
	if (!ret)
		ret = stargemm_matrix_scatter(S, s, n, 0);
	if (!ret)
		ret = stargemm_matrix_copy(&R, HX);
	if (!ret)
		ret = stargemm_pdgemm('N', 'N', -1.0, *X, S, 1.0, R);
	if (!ret && (ret = small(o, &T)) == 0)
		ret = stargemm_pdgemm('T', 'N', 1.0, R, R, 0.0, T);     /* R^T R: its diagonal */
	if (!ret)
		ret = stargemm_matrix_gather(T, s, n, 0);
	for (int i = 0; !ret && stargemm_rank() == 0 && i < n; i++)
		res[i] = sqrt(fabs(s[i + i * n]));
	free(s);
	free(work);
	stargemm_matrix_destroy(W);
	stargemm_matrix_destroy(S);
	stargemm_matrix_destroy(HX);
	stargemm_matrix_destroy(R);
	stargemm_matrix_destroy(T);
	return ret;
}

/* ---- the iteration --------------------------------------------------------------------- */

/* One step from X: filter, orthonormalize twice, Rayleigh–Ritz; X replaced. */
static int step(const struct options *o, const struct stargemm_matrix *H,
		struct stargemm_matrix **X, double cut, double *theta, double *res)
{
	struct stargemm_matrix *Y = NULL, *Q1 = NULL, *Q = NULL, *Xn = NULL;
	double t = top(o);
	int ret = filter(o, H, *X, (cut + t) / 2, (t - cut) / 2, &Y);

	if (!ret)
		ret = cholqr(o, Y, &Q1);
	if (!ret)
		ret = cholqr(o, Q1, &Q);
	if (!ret)
		ret = rayleigh_ritz(o, H, Q, &Xn, theta, res);
	stargemm_matrix_destroy(Y);
	stargemm_matrix_destroy(Q1);
	stargemm_matrix_destroy(Q);
	if (ret) {
		stargemm_matrix_destroy(Xn);
		return ret;
	}
	stargemm_matrix_destroy(*X);
	*X = Xn;
	return 0;
}

/* The lowest nev eigenvalues of the dense H (rank 0). */
static double *dense_eigenvalues(const struct options *o)
{
	int n = (int)o->n, lwork = -1, info = 0;
	double *a = malloc((size_t)n * (size_t)n * sizeof(*a)), *w = malloc((size_t)n * sizeof(*w));
	double query = 0.0, *work = NULL;

	for (int64_t c = 0; a && c < n; c++)
		for (int64_t r = 0; r < n; r++)
			a[r + c * n] = element(o, r, c);
	if (a && w)
		dsyev_("N", "U", &n, a, &n, w, &query, &lwork, &info);
	lwork = (int)query;
	work = a && w ? malloc((size_t)lwork * sizeof(*work)) : NULL;
	if (work)
		dsyev_("N", "U", &n, a, &n, w, work, &lwork, &info);
	free(a);
	free(work);
	if (!work || info) {
		free(w);
		return NULL;
	}
	return w;
}

static int parse(int argc, char **argv, struct options *o)
{
	const struct banded_option opts[] = {
		{ "--n", .i = &o->n },           { "--lo", .i = &o->lo },
		{ "--hi", .i = &o->hi },         { "--band", .i = &o->band },
		{ "--nev", .i = &o->nev },       { "--block", .i = &o->block },
		{ "--degree", .i = &o->degree }, { "--iters", .i = &o->iters },
		{ "--P", .i = &o->P },           { "--decay", .d = &o->decay },
		{ "--tol", .d = &o->tol },       { "--ram-limit", .i = &o->ram_limit },
		{ "--disk-mib", .i = &o->disk_mib }, { "--disk", .text = &o->disk },
		{ "--check", .flag = &o->check },
	};

	*o = (struct options){ 2000, 40, 80, 40, 16, 0, 10, 20, 1, 0, 4096, 0.5, 1e-8, 0, NULL };
	if (banded_parse("chebyshev", argc, argv, opts, sizeof(opts) / sizeof(opts[0])))
		return -EINVAL;
	if (o->block == 0)
		o->block = o->nev + o->nev / 2;
	if (o->n < 1 || o->lo < 1 || o->hi < o->lo || o->band < 0 || !(o->decay > 0) ||
	    o->nev < 1 || o->block < o->nev || o->block > o->n || o->degree < 1 || o->iters < 1 ||
	    o->P < 1 || !(o->tol > 0) || o->ram_limit < 0 || (o->ram_limit > 0 && !o->disk)) {
		fprintf(stderr, "chebyshev: need n, lo >= 1, hi >= lo, band >= 0, decay > 0, "
			"1 <= nev <= block <= n, degree, iters, P >= 1, tol > 0, and --disk with "
			"--ram-limit\n");
		return -EINVAL;
	}
	return 0;
}

/* Every rank learns rank 0's @p v: the trace of a 1 x 1 matrix scattered from rank 0
 * (the public API's collectives; the example makes no MPI call of its own). */
static int from_rank0(const struct options *o, double *v)
{
	struct stargemm_matrix *S = NULL;
	int ret = stargemm_matrix_create(&S, 1, 1, 1, 1, (int)o->P, 1);

	if (!ret)
		ret = stargemm_matrix_scatter(S, v, 1, 0);
	if (!ret)
		ret = stargemm_matrix_trace(S, v);
	stargemm_matrix_destroy(S);
	return ret;
}

/* Rank 0: the wanted Ritz values against LAPACK's lowest eigenvalues of the dense H. */
static int check(const struct options *o, const double *theta)
{
	double *w = dense_eigenvalues(o), worst = 0.0;

	if (!w)
		return 1;
	for (int64_t i = 0; i < o->nev; i++)
		worst = fmax(worst, fabs(theta[i] - w[i]));
	printf("against LAPACK's dense eigenvalues: largest difference %.2e (lowest %.6f, "
	       "%lld-th %.6f)\n", worst, w[0], (long long)o->nev, w[o->nev - 1]);
	free(w);
	return worst < 1e-8 ? 0 : 1;
}

/* Iterate until the wanted residuals are below tol; rank 0 prints each step. */
static int iterate(const struct options *o, const struct stargemm_matrix *H,
		   struct stargemm_matrix **X, double *theta, double *res, int *converged)
{
	double cut = 0.5 * top(o), old_max = 0.0, t, flag;
	int ret = 0;

	*converged = 0;
	for (int64_t it = 0; !ret && it < o->iters && !*converged; it++) {
		double worst = 0.0, change = 0.0;

		t = banded_now();
		ret = step(o, H, X, cut, theta, res);
		t = banded_now() - t;
		for (int64_t i = 0; !ret && stargemm_rank() == 0 && i < o->nev; i++)
			worst = fmax(worst, res[i]);
		if (!ret && stargemm_rank() == 0) {
			change = fabs(theta[o->nev - 1] - old_max);
			printf("  %2lld  %.3e  %.3e  %.4f\n", (long long)it + 1, change, worst, t);
		}
		old_max = theta[o->nev - 1];
		/* the next filter damps above the block's largest Ritz value */
		cut = theta[o->block - 1];
		flag = worst < o->tol;
		if (!ret)
			ret = from_rank0(o, &cut);
		if (!ret)
			ret = from_rank0(o, &flag);
		*converged = flag != 0.0;
	}
	return ret;
}

int main(int argc, char **argv)
{
	struct stargemm_matrix *H = NULL, *X = NULL;
	double *theta = NULL, *res = NULL;
	struct stargemm_config cfg;
	int converged = 0, ret;
	struct options o;

	if (parse(argc, argv, &o))
		return 2;
	stargemm_config_init(&cfg);
	cfg.ram_limit_mib = o.ram_limit;
	cfg.disk_dir = o.disk;
	cfg.disk_mib = o.disk_mib;
	if ((ret = stargemm_init(&cfg, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	theta = calloc((size_t)o.block, sizeof(*theta));
	res = calloc((size_t)o.block, sizeof(*res));
	ret = theta && res ? make(&o, &H, &X) : -ENOMEM;
	if (!ret && stargemm_rank() == 0)
		printf("n %lld, block %lld, degree %lld: step, change of the %lld-th Ritz value, "
		       "largest residual ||H x - theta x|| of the wanted, seconds\n",
		       (long long)o.n, (long long)o.block, (long long)o.degree, (long long)o.nev);
	if (!ret)
		ret = iterate(&o, H, &X, theta, res, &converged);
	if (ret)
		fprintf(stderr, "chebyshev: %s\n", stargemm_last_error());
	if (!ret && stargemm_rank() == 0) {
		if (!converged)
			printf("not converged within %lld steps\n", (long long)o.iters);
		ret = !converged || (o.check && check(&o, theta));
	}
	free(theta);
	free(res);
	stargemm_matrix_destroy(H);
	stargemm_matrix_destroy(X);
	stargemm_finalize();
	return ret ? 1 : 0;
}
