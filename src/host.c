/*
 * host.c — stargemm_sgemm(), _dgemm(), _cgemm(), _zgemm(): the BLAS GEMM calls on one
 * process's host arrays, the role cuBLASXt and NVBLAS play, with stargemm's planner
 * behind it. One implementation; the four calls only name their element type.
 *
 * The arrays are not copied: each is tiled in place (src/matrix.c, one StarPU handle
 * per tile pointing into the array, with the array's leading dimension; an array whose
 * leading dimension exceeds BLAS's int goes through a compact copy), the product
 * runs on every worker of the process, and destroying the matrices brings every
 * tile's last value back into the arrays. With GPUs, a problem whose three operands do
 * not fit in the devices' memory runs out of core (stargemm_pdgemm_ooc(), the plan
 * chosen by the planner); without GPUs the data are already in RAM and the product
 * runs in core (small tiles in batches, as stargemm_pdgemm()).
 *
 * Tile size: STARGEMM_HOST_TILE elements a side when set; else the tile stargemm
 * recommends for C's size on this process's workers (src/tile.c).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* BLAS's transposition characters, 0 if not one. */
static char op_of(char t)
{
	switch (t) {
	case 'N': case 'n': return 'N';
	case 'T': case 't': return 'T';
	case 'C': case 'c': return 'C';
	default: return 0;
	}
}

static int64_t max1(int64_t x)
{
	return x > 1 ? x : 1;
}

/* The arguments, in BLAS's order and numbering (argument 1 is transa), with the
 * element type and the name of the call. */
struct host_call {
	char ta, tb;
	int64_t m, n, k;
	const void *alpha;       /* scalars of the type, by address */
	const void *A;
	int64_t lda;
	const void *B;
	int64_t ldb;
	const void *beta;
	void *C;
	int64_t ldc;
	const struct stargemm__element *type;
	const char *fn;
};

/* The first byte past the used part of a rows x cols array of leading dimension ld. */
static const char *array_end(const struct host_call *h, const void *a, int64_t rows,
			     int64_t cols, int64_t ld)
{
	return (const char *)a + (size_t)((cols - 1) * ld + rows) * h->type->size;
}

static int overlap(const struct host_call *h, const void *x, int64_t xr, int64_t xc,
		   int64_t ldx, const void *y, int64_t yr, int64_t yc, int64_t ldy)
{
	return (const char *)x < array_end(h, y, yr, yc, ldy) &&
	       (const char *)y < array_end(h, x, xr, xc, ldx);
}

/* Whether op(A) op(B) contributes: k > 0 and alpha != 0. */
static int multiplies(const struct host_call *h)
{
	return h->k > 0 && h->type->load(h->alpha) != 0.0;
}

static int check_call(const struct host_call *h)
{
	int64_t arows = h->ta == 'N' ? h->m : h->k, brows = h->tb == 'N' ? h->k : h->n;
	int64_t acols = h->ta == 'N' ? h->k : h->m, bcols = h->tb == 'N' ? h->n : h->k;

	if (!h->ta || !h->tb)
		return stargemm__error(-EINVAL, "%s: argument %d (trans%c) must be N, T or C",
				       h->fn, h->ta ? 2 : 1, h->ta ? 'b' : 'a');
	if (h->m < 0 || h->n < 0 || h->k < 0)
		return stargemm__error(-EINVAL, "%s: argument %d (%c) must be >= 0, got %lld",
				       h->fn, h->m < 0 ? 3 : h->n < 0 ? 4 : 5,
				       h->m < 0 ? 'm' : h->n < 0 ? 'n' : 'k',
				       (long long)(h->m < 0 ? h->m : h->n < 0 ? h->n : h->k));
	if (!h->alpha || !h->beta)
		return stargemm__error(-EINVAL, "%s: argument %d (%s) is NULL", h->fn,
				       !h->alpha ? 6 : 11, !h->alpha ? "alpha" : "beta");
	if (h->lda < max1(arows))
		return stargemm__error(-EINVAL, "%s: argument 8 (lda) = %lld must be >= max(1, "
				       "rows of A) = %lld", h->fn, (long long)h->lda,
				       (long long)max1(arows));
	if (h->ldb < max1(brows))
		return stargemm__error(-EINVAL, "%s: argument 10 (ldb) = %lld must be >= max(1, "
				       "rows of B) = %lld", h->fn, (long long)h->ldb,
				       (long long)max1(brows));
	if (h->ldc < max1(h->m))
		return stargemm__error(-EINVAL, "%s: argument 13 (ldc) = %lld must be >= max(1, "
				       "m) = %lld", h->fn, (long long)h->ldc, (long long)max1(h->m));
	if (h->m == 0 || h->n == 0)
		return 0;
	if (!h->C || (multiplies(h) && (!h->A || !h->B)))
		return stargemm__error(-EINVAL, "%s: argument %d (%c) is NULL", h->fn,
				       !h->C ? 12 : !h->A ? 7 : 9, !h->C ? 'C' : !h->A ? 'A' : 'B');
	if (multiplies(h) && (overlap(h, h->C, h->m, h->n, h->ldc, h->A, arows, acols, h->lda) ||
			      overlap(h, h->C, h->m, h->n, h->ldc, h->B, brows, bcols, h->ldb)))
		return stargemm__error(-EINVAL, "%s: C overlaps %s in memory (it is written "
				       "while they are read)", h->fn,
				       overlap(h, h->C, h->m, h->n, h->ldc, h->A, arows, acols,
					       h->lda) ? "A" : "B");
	return 0;
}

/* Whether the three operands fit in the GPUs' memory with the planner's slack. */
static int fits_on_gpus(const struct host_call *h)
{
	double bytes = (double)h->type->size * ((double)h->m * h->k + (double)h->k * h->n +
						(double)h->m * h->n);
	double room = 0.0;

	for (int g = 0; g < stargemm__device_count(); g++)
		room += 0.9 * (double)starpu_memory_get_total(stargemm__device_node(g));
	return bytes <= room;
}

/* With GPUs, the arrays are page-locked for the call (cudaHostRegister through
 * StarPU), so that their tiles move at the link's speed; an array that cannot be (one
 * that shares pages with another already locked) is used as it is. Returns whether it
 * was locked. */
static int pin(const struct host_call *h, const void *a, int64_t rows, int64_t cols,
	       int64_t ld)
{
	if (stargemm_ncuda_workers() == 0)
		return 0;
	return starpu_memory_pin((void *)a, (size_t)(array_end(h, a, rows, cols, ld) -
						       (const char *)a)) == 0;
}

static void unpin(const struct host_call *h, int pinned, const void *a, int64_t rows,
		  int64_t cols, int64_t ld)
{
	if (pinned)
		starpu_memory_unpin((void *)a, (size_t)(array_end(h, a, rows, cols, ld) -
							  (const char *)a));
}

/* The product on the three in-place matrices. */
static int run(const struct host_call *h, struct stargemm_matrix *A,
	       struct stargemm_matrix *B, struct stargemm_matrix *C)
{
	if (stargemm_ncuda_workers() > 0 && !fits_on_gpus(h))
		return stargemm_gemm_ooc(h->ta, h->tb, h->alpha, A, B, h->beta, C, NULL, NULL);
	return stargemm_gemm(h->ta, h->tb, h->alpha, A, B, h->beta, C);
}

/* A rows x cols array of leading dimension ld as a matrix of tiles nb x nb, in place. */
static int in_place(struct stargemm_matrix **X, int type, int64_t rows, int64_t cols,
		    int64_t nb, void *a, int64_t ld, const char *fn)
{
	struct stargemm__block_axis r = { rows, nb, 0, 0, 0, 0, NULL, 0 };
	struct stargemm__block_axis c = { cols, nb, 0, 0, 0, 0, NULL, 0 };

	return stargemm__matrix_create_in_place(X, type, &r, &c, 1, 1, NULL, a, ld, fn);
}

/* An operand as the tiles will see it: its array and leading dimension, or, when
 * that leading dimension is beyond BLAS's int (src/sizes.h), a compact copy (leading
 * dimension = rows) that the call uses instead; C's copy is written back at the end. */
struct operand {
	void *user;
	int64_t rows, cols, ld;
	void *copy;        /* NULL: the user's array is used in place */
};

static void *operand_array(const struct operand *o)
{
	return o->copy ? o->copy : o->user;
}

static int64_t operand_ld(const struct operand *o)
{
	return o->copy ? o->rows : o->ld;
}

/* Copy the rows x cols part of @p from (leading dimension @p lf) into @p to (@p lt). */
static void copy_columns(const struct host_call *h, void *to, int64_t lt, const void *from,
			 int64_t lf, int64_t rows, int64_t cols)
{
	size_t e = h->type->size;

	for (int64_t j = 0; j < cols; j++)
		memcpy((char *)to + (size_t)(j * lt) * e, (const char *)from + (size_t)(j * lf) * e,
		       (size_t)rows * e);
}

static int operand_setup(const struct host_call *h, struct operand *o, const void *a,
			 int64_t rows, int64_t cols, int64_t ld, char name)
{
	*o = (struct operand){ (void *)a, rows, cols, ld, NULL };
	if (ld <= STARGEMM__BLAS_INT_MAX || rows > STARGEMM__BLAS_INT_MAX)
		return 0;   /* in place; rows beyond BLAS's int are refused by the tiling */
	o->copy = malloc((size_t)(rows * cols) * h->type->size);
	if (!o->copy)
		return stargemm__error(-ENOMEM, "%s: ld%c = %lld exceeds BLAS's int, and there is "
				       "no memory for a compact copy of %c (%lld x %lld)", h->fn,
				       name - 'A' + 'a', (long long)ld, name, (long long)rows,
				       (long long)cols);
	copy_columns(h, o->copy, rows, a, ld, rows, cols);
	return 0;
}

/* Free a copy; C's (@p write_back) first goes back to the user's array. */
static void operand_done(const struct host_call *h, struct operand *o, int write_back)
{
	if (o->copy && write_back)
		copy_columns(h, o->user, o->ld, o->copy, o->rows, o->rows, o->cols);
	free(o->copy);
	o->copy = NULL;
}

/* The product on the three operands' arrays, each tiled in place. */
static int multiply_arrays(const struct host_call *h, int64_t nb, const struct operand *oa,
			   const struct operand *ob, const struct operand *oc)
{
	const struct operand *o[3] = { oa, ob, oc };
	struct stargemm_matrix *x[3] = { NULL, NULL, NULL };
	int type = h->type->letter, ret = 0, pins[3];

	for (int i = 0; i < 3; i++)
		pins[i] = pin(h, operand_array(o[i]), o[i]->rows, o[i]->cols, operand_ld(o[i]));
	/* A and B are only read: StarPU never writes their arrays. */
	for (int i = 0; i < 3 && !ret; i++)
		ret = in_place(&x[i], type, o[i]->rows, o[i]->cols, nb, operand_array(o[i]),
			       operand_ld(o[i]), h->fn);
	if (!ret)
		ret = run(h, x[0], x[1], x[2]);
	/* Destroying the matrices copies every tile's last value back into the arrays. */
	for (int i = 0; i < 3; i++) {
		stargemm_matrix_destroy(x[i]);
		unpin(h, pins[i], operand_array(o[i]), o[i]->rows, o[i]->cols, operand_ld(o[i]));
	}
	return ret;
}

/* Tile the three arrays in place (or their compact copies), multiply, bring C back. */
static int multiply(const struct host_call *h, int64_t nb)
{
	struct operand oa = { 0 }, ob = { 0 }, oc = { 0 };   /* no copies yet */
	int64_t arows = h->ta == 'N' ? h->m : h->k, acols = h->ta == 'N' ? h->k : h->m;
	int64_t brows = h->tb == 'N' ? h->k : h->n, bcols = h->tb == 'N' ? h->n : h->k;
	int ret = operand_setup(h, &oa, h->A, arows, acols, h->lda, 'A');

	if (!ret)
		ret = operand_setup(h, &ob, h->B, brows, bcols, h->ldb, 'B');
	if (!ret)
		ret = operand_setup(h, &oc, h->C, h->m, h->n, h->ldc, 'C');
	if (!ret)
		ret = multiply_arrays(h, nb, &oa, &ob, &oc);
	operand_done(h, &oa, 0);
	operand_done(h, &ob, 0);
	operand_done(h, &oc, ret == 0);
	return ret;
}

static int host_gemm(struct host_call *h)
{
	int64_t nb = 0;
	int ret;

	stargemm__clear_error();
	h->ta = op_of(h->ta);
	h->tb = op_of(h->tb);
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "%s: call stargemm_init() first", h->fn);
	if (stargemm_nranks() != 1)
		return stargemm__error(-EINVAL, "%s: a call on one process's arrays, and the "
				       "communicator has %d processes: use stargemm_pdgemm() or "
				       "stargemm_gemm() on "
				       "distributed matrices", h->fn, stargemm_nranks());
	if ((ret = check_call(h)) ||
	    (ret = stargemm__host_tile(h->type, h->m, h->n, h->type->load(h->alpha), &nb)))
		return ret;
	if (h->m == 0 || h->n == 0)
		return 0;
	if (!multiplies(h)) {   /* C = beta C; beta = 0 writes zeros without reading C */
		h->type->scale(h->C, h->ldc, h->m, h->n, h->type->load(h->beta));
		return 0;
	}
	return multiply(h, nb);
}

int stargemm_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
		   const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
		   float *C, int64_t ldc)
{
	struct host_call h = { transa, transb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc,
			       stargemm__element('s'), "stargemm_sgemm" };

	return host_gemm(&h);
}

int stargemm_dgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
		   const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
		   double *C, int64_t ldc)
{
	struct host_call h = { transa, transb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc,
			       stargemm__element('d'), "stargemm_dgemm" };

	return host_gemm(&h);
}

int stargemm_cgemm(char transa, char transb, int64_t m, int64_t n, int64_t k,
		   const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
		   const void *beta, void *C, int64_t ldc)
{
	struct host_call h = { transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
			       stargemm__element('c'), "stargemm_cgemm" };

	return host_gemm(&h);
}

int stargemm_zgemm(char transa, char transb, int64_t m, int64_t n, int64_t k,
		   const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
		   const void *beta, void *C, int64_t ldc)
{
	struct host_call h = { transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
			       stargemm__element('z'), "stargemm_zgemm" };

	return host_gemm(&h);
}
