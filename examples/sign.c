/*
 * examples/sign.c — the matrix sign function by the Newton–Schulz iteration on a
 * block-sparse matrix with filtering (paper 001's linear-scaling iterations), written
 * as a user of stargemm's public API writes it:
 *
 *   X0 = H / ||H||  (a Gershgorin bound on the 2-norm, so that the spectrum is in [-1, 1])
 *   X <- X (3I - X X) / 2 = 1.5 X - 0.5 X (X X)   until ||X X - I||_F / sqrt(n) < tol
 *   sign(H) = lim X; with H = the Hamiltonian shifted by the chemical potential, the
 *   density matrix is (I - sign(H)) / 2.
 *
 * With --mcweeny, McWeeny's purification on the density matrix itself:
 *
 *   P0 = (I - X0) / 2,  P <- 3 P^2 - 2 P^3 = 3 P2 - 2 P P2  until ||P P - P||_F / sqrt(n)
 *   < tol; P = (I - X) / 2 turns each Newton-Schulz step into this one, so the limit is
 *   the density matrix (I - sign(H)) / 2.
 *
 * H is banded with elements that decay exponentially away from the diagonal (a
 * gapped, local system): so is sign(H), and the tiles whose norm falls below eps are
 * dropped after each product (stargemm_bsgemm()'s filter), which keeps X sparse. The
 * run is made twice, with eps = 0 (no filtering) and with eps, and reports per
 * iteration the error, the fill-in (tiles present over all tiles) and the time; with
 * --check, rank 0 runs the same iteration densely with BLAS and compares.
 *
 * Usage: sign [--n N] [--lo L] [--hi H] [--band B] [--decay D] [--eps E] [--tol T]
 *             [--maxiter K] [--P P] [--Q Q] [--mcweeny] [--check]
 * (under mpiexec with P*Q processes). Exit status 0 when both runs converged (and the
 * check passed).
 */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stargemm.h>

#include "banded.h"

struct options {
	int64_t n, lo, hi, band;
	double decay, eps, tol;
	int maxiter, P, Q, check;
	int mcweeny;   /* iterate P = (I - X) / 2 by McWeeny's step */
};

/* ---- the matrix H / bound ------------------------------------------------------- */

/* H(r, c) / scale: on the diagonal +-(0.5 .. 1) alternating (a gap around 0), off it
 * examples/banded.c's decaying elements. */
static double element(const struct options *o, double scale, int64_t r, int64_t c)
{
	if (r == c)
		return (r % 2 ? -1.0 : 1.0) * (0.5 + 0.5 * banded_unit(r, r)) / scale;
	return banded_offdiagonal(r, c, o->band, o->decay) / scale;
}

struct fill_arg {
	const struct options *o;
	double scale;
};

static void fill(double *t, int64_t ld, int64_t rows, int64_t cols, int64_t r0, int64_t c0,
		 void *arg)
{
	const struct fill_arg *f = arg;

	for (int64_t c = 0; c < cols; c++)
		for (int64_t r = 0; r < rows; r++)
			t[r + c * ld] = element(f->o, f->scale, r0 + r, c0 + c);
}

/* X0 = H / bound: the tiles that meet the band. */
static int make_x0(const struct options *o, struct stargemm_matrix **X)
{
	struct fill_arg f = { o, banded_bound(o->band, o->decay) };
	int64_t nt, np = 0, *sizes = banded_tiling(o->n, o->lo, o->hi, &nt);
	int64_t *pairs = sizes ? banded_pattern(sizes, nt, o->band, &np) : NULL;
	int ret = pairs ? 0 : -ENOMEM;

	if (!ret)
		ret = stargemm_matrix_create_sparse(X, nt, sizes, nt, sizes, np, pairs, o->P, o->Q);
	if (!ret)
		ret = stargemm_matrix_fill(*X, fill, &f);
	free(sizes);
	free(pairs);
	return ret;
}

/* P0 = (I - X0) / 2 (X0's pattern holds the diagonal tiles). */
static int make_p0(const struct options *o, struct stargemm_matrix **P)
{
	double minus_half = -0.5, half = 0.5;
	int ret = make_x0(o, P);

	if (!ret)
		ret = stargemm_matrix_scale(*P, &minus_half);
	return ret ? ret : stargemm_matrix_add_diagonal(*P, &half);
}

/* ---- the iteration ---------------------------------------------------------------- */

/* The step's error: ||X2 - I||_F / sqrt(n) (Newton-Schulz), or ||P2 - P||_F / sqrt(n)
 * (McWeeny). */
static int step_error(const struct options *o, const struct stargemm_matrix *X2,
		      const struct stargemm_matrix *X, double *err)
{
	struct stargemm_matrix *E = NULL;
	double one = 1.0, minus_one = -1.0;
	int ret = o->mcweeny ? stargemm_matrix_add(&E, &one, X2, &minus_one, X)
			     : stargemm_matrix_copy(&E, X2);

	if (!ret && !o->mcweeny)
		ret = stargemm_matrix_add_diagonal(E, &minus_one);
	if (!ret)
		ret = stargemm_matrix_norm(E, err);
	*err /= sqrt((double)stargemm_matrix_n(X));
	stargemm_matrix_destroy(E);
	return ret;
}

/* One step: X2 = X X (filtered), its error, then Y = 1.5 X - 0.5 X X2 (Newton-Schulz;
 * Y's pattern: X X2's united with X's) or Y = 3 X2 - 2 X X2 (McWeeny; united with
 * X2's), filtered. */
static int step(const struct options *o, struct stargemm_matrix **X, double eps, double *err,
		int64_t *products)
{
	struct stargemm_bsgemm_options opt;
	struct stargemm_bsgemm_info info = { 0 };
	struct stargemm_matrix *X2 = NULL, *Y = NULL;
	int ret;

	stargemm_bsgemm_options_init(&opt);
	opt.filter_eps = eps;
	ret = stargemm_matrix_create_product(&X2, 'N', 'N', *X, *X, NULL);
	if (!ret)
		ret = stargemm_bsgemm('N', 'N', 1.0, *X, *X, 0.0, X2, &opt, &info);
	*products = info.products;
	if (!ret)
		ret = step_error(o, X2, *X, err);
	if (!ret)
		ret = stargemm_matrix_create_product(&Y, 'N', 'N', *X, X2,
						     o->mcweeny ? X2 : *X);
	if (!ret)
		ret = stargemm_bsgemm('N', 'N', o->mcweeny ? -2.0 : -0.5, *X, X2,
				      o->mcweeny ? 3.0 : 1.5, Y, &opt, &info);
	*products += info.products;
	stargemm_matrix_destroy(X2);
	if (ret) {
		stargemm_matrix_destroy(Y);
		return ret;
	}
	stargemm_matrix_destroy(*X);
	*X = Y;
	return 0;
}

/* Iterate from X0 with threshold eps until converged; the last X in *X. */
static int iterate(const struct options *o, double eps, struct stargemm_matrix **X,
		   int *iterations, int *converged)
{
	int64_t tiles, products;
	double err = INFINITY, t;
	int ret = o->mcweeny ? make_p0(o, X) : make_x0(o, X);

	if (ret)
		return ret;
	tiles = stargemm_matrix_mt(*X) * stargemm_matrix_nt(*X);
	if (stargemm_rank() == 0)
		printf("eps %g: iteration, %s before it, fill-in of %s after it, tile products, "
		       "seconds\n", eps, o->mcweeny ? "||P P - P||_F / sqrt(n)" :
		       "||X X - I||_F / sqrt(n)", o->mcweeny ? "P" : "X");
	*converged = 0;
	for (*iterations = 0; *iterations < o->maxiter; (*iterations)++) {
		t = banded_now();
		if ((ret = step(o, X, eps, &err, &products)))
			return ret;
		t = banded_now() - t;
		if (stargemm_rank() == 0)
			printf("  %2d  %.3e  %5.1f%%  %8lld  %.4f\n", *iterations + 1, err,
			       100.0 * (double)stargemm_matrix_present_count(*X) / (double)tiles,
			       (long long)products, t);
		if (err < o->tol) {
			*converged = 1;
			(*iterations)++;
			break;
		}
	}
	return 0;
}

/* ---- the dense check on rank 0 ------------------------------------------------------ */

/* The same number of steps densely; the relative Frobenius difference with @p x. */
static double dense_difference(const struct options *o, int iterations, const double *x)
{
	int64_t n = o->n;
	size_t bytes = (size_t)(n * n) * sizeof(double);
	double *d = malloc(bytes), *d2 = malloc(bytes), *y = malloc(bytes);
	double diff = 0.0, ref = 0.0, scale = banded_bound(o->band, o->decay);

	if (!d || !d2 || !y) {
		free(d);
		free(d2);
		free(y);
		return INFINITY;
	}
	for (int64_t c = 0; c < n; c++)
		for (int64_t r = 0; r < n; r++)
			d[r + c * n] = o->mcweeny ? ((r == c) - element(o, scale, r, c)) / 2.0
						  : element(o, scale, r, c);
	for (int k = 0; k < iterations; k++) {
		cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0,
			    d, (int)n, d, (int)n, 0.0, d2, (int)n);
		/* Newton-Schulz: y = 1.5 d - 0.5 d d2; McWeeny: y = 3 d2 - 2 d d2 */
		memcpy(y, o->mcweeny ? d2 : d, bytes);
		cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n,
			    o->mcweeny ? -2.0 : -0.5, d, (int)n, d2, (int)n,
			    o->mcweeny ? 3.0 : 1.5, y, (int)n);
		memcpy(d, y, bytes);
	}
	for (int64_t e = 0; e < n * n; e++) {
		diff += (x[e] - d[e]) * (x[e] - d[e]);
		ref += d[e] * d[e];
	}
	free(d);
	free(d2);
	free(y);
	return sqrt(diff / ref);
}

/* ---- main ---------------------------------------------------------------------------- */

static int parse(int argc, char **argv, struct options *o)
{
	int64_t maxiter = 50, P = 1, Q = 1;
	const struct banded_option opts[] = {
		{ "--n", .i = &o->n },          { "--lo", .i = &o->lo },
		{ "--hi", .i = &o->hi },        { "--band", .i = &o->band },
		{ "--decay", .d = &o->decay },  { "--eps", .d = &o->eps },
		{ "--tol", .d = &o->tol },      { "--maxiter", .i = &maxiter },
		{ "--P", .i = &P },             { "--Q", .i = &Q },
		{ "--check", .flag = &o->check }, { "--mcweeny", .flag = &o->mcweeny },
	};

	*o = (struct options){ 2000, 40, 80, 60, 0.5, 1e-8, 1e-6, 50, 1, 1, 0, 0 };
	if (banded_parse("sign", argc, argv, opts, sizeof(opts) / sizeof(opts[0])))
		return -EINVAL;
	o->maxiter = (int)maxiter;
	o->P = (int)P;
	o->Q = (int)Q;
	if (o->n < 1 || o->lo < 1 || o->hi < o->lo || o->band < 0 || !(o->decay > 0) ||
	    !(o->eps >= 0) || !(o->tol > 0) || o->maxiter < 1) {
		fprintf(stderr, "sign: need n, lo >= 1, hi >= lo, band >= 0, decay > 0, eps >= 0, "
			"tol > 0, maxiter >= 1\n");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct stargemm_matrix *X = NULL, *Xf = NULL;
	int iterations = 0, fiterations = 0, converged = 0, fconverged = 0, ret;
	double *x = NULL, *xf = NULL;
	struct options o;

	if (parse(argc, argv, &o))
		return 2;
	if ((ret = stargemm_init(NULL, &argc, &argv)) != 0) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return ret == -ENODEV ? 77 : 1;
	}
	ret = iterate(&o, 0.0, &X, &iterations, &converged);
	if (!ret)
		ret = iterate(&o, o.eps, &Xf, &fiterations, &fconverged);
	if (ret)
		fprintf(stderr, "sign: %s\n", stargemm_last_error());
	if (!ret && o.check) {
		if (stargemm_rank() == 0) {
			x = malloc((size_t)(o.n * o.n) * sizeof(*x));
			xf = malloc((size_t)(o.n * o.n) * sizeof(*xf));
		}
		ret = stargemm_matrix_gather(X, x, o.n, 0);
		if (!ret)
			ret = stargemm_matrix_gather(Xf, xf, o.n, 0);
		if (!ret && stargemm_rank() == 0) {
			double d = dense_difference(&o, iterations, x);
			double df = dense_difference(&o, fiterations, xf);

			printf("against the dense iteration: %.2e unfiltered (%d steps), %.2e with eps "
			       "%g (%d steps)\n", d, iterations, df, o.eps, fiterations);
			ret = d < 1e-10 && df < 1e3 * o.eps + 1e-10 ? 0 : 1;
		}
	}
	if (!ret && stargemm_rank() == 0 && (!converged || !fconverged)) {
		printf("not converged within %d iterations\n", o.maxiter);
		ret = 1;
	}
	free(x);
	free(xf);
	stargemm_matrix_destroy(X);
	stargemm_matrix_destroy(Xf);
	stargemm_finalize();
	return ret ? 1 : 0;
}
