/*
 * host.c — stargemm_dgemm(): the BLAS dgemm call on one process's host arrays, the
 * role cuBLASXt and NVBLAS play, with stargemm's planner behind it.
 *
 * The arrays are not copied: each is tiled in place (src/matrix.c, one StarPU handle
 * per tile pointing into the array, with the array's leading dimension), the product
 * runs on every worker of the process, and destroying the matrices brings every
 * tile's last value back into the arrays. With GPUs, a problem whose three operands do
 * not fit in the devices' memory runs out of core (stargemm_pdgemm_ooc(), the plan
 * chosen by the planner); without GPUs the data are already in RAM and the product
 * runs in core (small tiles in batches, as stargemm_pdgemm()).
 *
 * Tile size: STARGEMM_HOST_TILE elements a side when set, else 2048 with GPUs (the
 * size of the out-of-core runs of doc/performance.md) and 256 without (batched
 * through libxsmm: 1.5-1.7x one OpenBLAS call on the development machine, ibid.).
 */
#include <errno.h>
#include <stdint.h>

#include "internal.h"

#define HOST_TILE_GPU 2048
#define HOST_TILE_CPU 256

/* BLAS's transposition characters; 'C' is 'T' for real data. 0 if not one. */
static char op_of(char t)
{
	switch (t) {
	case 'N': case 'n': return 'N';
	case 'T': case 't': case 'C': case 'c': return 'T';
	default: return 0;
	}
}

static int64_t max1(int64_t x)
{
	return x > 1 ? x : 1;
}

/* The first byte past the used part of a rows x cols array of leading dimension ld. */
static const char *array_end(const double *a, int64_t rows, int64_t cols, int64_t ld)
{
	return (const char *)(a + (cols - 1) * ld + rows);
}

static int overlap(const double *x, int64_t xr, int64_t xc, int64_t ldx, const double *y,
		   int64_t yr, int64_t yc, int64_t ldy)
{
	return (const char *)x < array_end(y, yr, yc, ldy) &&
	       (const char *)y < array_end(x, xr, xc, ldx);
}

/* The arguments, in BLAS's order and numbering (argument 1 is transa). */
struct host_call {
	char ta, tb;
	int64_t m, n, k;
	double alpha, beta;
	const double *A, *B;
	double *C;
	int64_t lda, ldb, ldc;
};

static int check_call(const struct host_call *h)
{
	int64_t arows = h->ta == 'N' ? h->m : h->k, brows = h->tb == 'N' ? h->k : h->n;
	int64_t acols = h->ta == 'N' ? h->k : h->m, bcols = h->tb == 'N' ? h->n : h->k;

	if (!h->ta || !h->tb)
		return stargemm__error(-EINVAL, "stargemm_dgemm: argument %d (trans%c) must be "
				       "N, T or C", h->ta ? 2 : 1, h->ta ? 'b' : 'a');
	if (h->m < 0 || h->n < 0 || h->k < 0)
		return stargemm__error(-EINVAL, "stargemm_dgemm: argument %d (%c) must be >= 0, "
				       "got %lld", h->m < 0 ? 3 : h->n < 0 ? 4 : 5,
				       h->m < 0 ? 'm' : h->n < 0 ? 'n' : 'k',
				       (long long)(h->m < 0 ? h->m : h->n < 0 ? h->n : h->k));
	if (h->lda < max1(arows))
		return stargemm__error(-EINVAL, "stargemm_dgemm: argument 8 (lda) = %lld must be "
				       ">= max(1, rows of A) = %lld", (long long)h->lda,
				       (long long)max1(arows));
	if (h->ldb < max1(brows))
		return stargemm__error(-EINVAL, "stargemm_dgemm: argument 10 (ldb) = %lld must be "
				       ">= max(1, rows of B) = %lld", (long long)h->ldb,
				       (long long)max1(brows));
	if (h->ldc < max1(h->m))
		return stargemm__error(-EINVAL, "stargemm_dgemm: argument 13 (ldc) = %lld must be "
				       ">= max(1, m) = %lld", (long long)h->ldc,
				       (long long)max1(h->m));
	if (h->m == 0 || h->n == 0)
		return 0;
	if (!h->C || (h->k > 0 && h->alpha != 0.0 && (!h->A || !h->B)))
		return stargemm__error(-EINVAL, "stargemm_dgemm: argument %d (%c) is NULL",
				       !h->C ? 12 : !h->A ? 7 : 9, !h->C ? 'C' : !h->A ? 'A' : 'B');
	if (h->k > 0 && h->alpha != 0.0 &&
	    (overlap(h->C, h->m, h->n, h->ldc, h->A, arows, acols, h->lda) ||
	     overlap(h->C, h->m, h->n, h->ldc, h->B, brows, bcols, h->ldb)))
		return stargemm__error(-EINVAL, "stargemm_dgemm: C overlaps %s in memory (it is "
				       "written while they are read)",
				       overlap(h->C, h->m, h->n, h->ldc, h->A, arows, acols, h->lda)
				       ? "A" : "B");
	return 0;
}

/* C = beta C on the host, for a call with nothing to multiply (k = 0 or alpha = 0);
 * beta = 0 writes zeros without reading C, as BLAS does. */
static void scale_only(const struct host_call *h)
{
	for (int64_t j = 0; j < h->n; j++)
		for (int64_t i = 0; i < h->m; i++)
			h->C[i + j * h->ldc] = h->beta == 0.0 ? 0.0 : h->beta * h->C[i + j * h->ldc];
}

static int tile_size(int64_t *nb)
{
	double value;
	int ret = stargemm__env_setting("STARGEMM_HOST_TILE",
					stargemm_ncuda_workers() > 0 ? HOST_TILE_GPU
								     : HOST_TILE_CPU, &value);

	if (ret)
		return ret;
	if (value < 1 || value > 65536)
		return stargemm__error(-EINVAL, "STARGEMM_HOST_TILE=%g: expected a tile side "
				       "from 1 to 65536", value);
	*nb = (int64_t)value;
	return 0;
}

/* Whether the three operands fit in the GPUs' memory with the planner's slack. */
static int fits_on_gpus(const struct host_call *h)
{
	double bytes = 8.0 * ((double)h->m * h->k + (double)h->k * h->n + (double)h->m * h->n);
	double room = 0.0;

	for (int g = 0; g < stargemm__device_count(); g++)
		room += 0.9 * (double)starpu_memory_get_total(stargemm__device_node(g));
	return bytes <= room;
}

/* With GPUs, the arrays are page-locked for the call (cudaHostRegister through
 * StarPU), so that their tiles move at the link's speed; an array that cannot be (one
 * that shares pages with another already locked) is used as it is. Returns whether it
 * was locked. */
static int pin(const double *a, int64_t rows, int64_t cols, int64_t ld)
{
	if (stargemm_ncuda_workers() == 0)
		return 0;
	return starpu_memory_pin((void *)a, (size_t)(array_end(a, rows, cols, ld) -
						       (const char *)a)) == 0;
}

static void unpin(int pinned, const double *a, int64_t rows, int64_t cols, int64_t ld)
{
	if (pinned)
		starpu_memory_unpin((void *)a, (size_t)(array_end(a, rows, cols, ld) -
							  (const char *)a));
}

/* The product on the three in-place matrices. */
static int run(const struct host_call *h, struct stargemm_matrix *A,
	       struct stargemm_matrix *B, struct stargemm_matrix *C)
{
	if (stargemm_ncuda_workers() > 0 && !fits_on_gpus(h))
		return stargemm_pdgemm_ooc(h->ta, h->tb, h->alpha, A, B, h->beta, C, NULL, NULL);
	return stargemm_pdgemm(h->ta, h->tb, h->alpha, A, B, h->beta, C);
}

int stargemm_dgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
		   const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
		   double *C, int64_t ldc)
{
	static const char fn[] = "stargemm_dgemm";
	struct host_call h = { op_of(transa), op_of(transb), m, n, k, alpha, beta, A, B, C,
			       lda, ldb, ldc };
	struct stargemm_matrix *a = NULL, *b = NULL, *c = NULL;
	int64_t nb = 0, arows = h.ta == 'N' ? m : k, acols = h.ta == 'N' ? k : m;
	int64_t brows = h.tb == 'N' ? k : n, bcols = h.tb == 'N' ? n : k;
	int ret, pins[3];

	stargemm__clear_error();
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "%s: call stargemm_init() first", fn);
	if (stargemm_nranks() != 1)
		return stargemm__error(-EINVAL, "%s: a call on one process's arrays, and the "
				       "communicator has %d processes: use stargemm_pdgemm() on "
				       "distributed matrices", fn, stargemm_nranks());
	if ((ret = check_call(&h)) || (ret = tile_size(&nb)))
		return ret;
	if (m == 0 || n == 0)
		return 0;
	if (k == 0 || alpha == 0.0) {
		scale_only(&h);
		return 0;
	}
	pins[0] = pin(A, arows, acols, lda);
	pins[1] = pin(B, brows, bcols, ldb);
	pins[2] = pin(C, m, n, ldc);
	/* A and B are only read: StarPU never writes their arrays. */
	ret = stargemm__matrix_create_in_place(&a, arows, acols, nb, nb, 1, 1, (void *)A,
					       lda, fn);
	if (!ret)
		ret = stargemm__matrix_create_in_place(&b, brows, bcols, nb, nb, 1, 1,
						       (void *)B, ldb, fn);
	if (!ret)
		ret = stargemm__matrix_create_in_place(&c, m, n, nb, nb, 1, 1, C, ldc, fn);
	if (!ret)
		ret = run(&h, a, b, c);
	/* Destroying the matrices copies every tile's last value back into the arrays. */
	stargemm_matrix_destroy(a);
	stargemm_matrix_destroy(b);
	stargemm_matrix_destroy(c);
	unpin(pins[0], A, arows, acols, lda);
	unpin(pins[1], B, brows, bcols, ldb);
	unpin(pins[2], C, m, n, ldc);
	return ret;
}
