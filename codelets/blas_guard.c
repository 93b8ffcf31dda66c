/*
 * codelets/blas_guard.c — the kernels' guards around their BLAS and cuBLAS calls, so
 * that a call the library would refuse fails its task (the product then returns an
 * error on every rank) instead of a product that reports success with C not computed:
 *  - stargemm__blas_refuses(): before a tile product, the checks BLAS makes of its
 *    arguments (sides and leading dimensions within its int, leading dimensions at
 *    least the rows, shapes that make a product); the descriptors never make such
 *    tiles (src/sizes.c), so this is the kernels' own line of defence;
 *  - xerbla_, BLAS's error handler: the BLAS library calls it through the dynamic
 *    linker, so this definition, in a library loaded before the BLAS, takes its calls.
 *    On a StarPU worker of a running stargemm a refusal fails the task
 *    (stargemm__task_failed(), reported by the next stargemm_wait()); on any other
 *    thread — the program's own BLAS calls — it hands the call to the next xerbla_
 *    (the BLAS's), so that the program sees BLAS's usual behaviour.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "../src/internal.h"

int stargemm__blas_refuses(const char *prefix, char letter, void *buffers[], char ta, char tb,
			   int m, int n, int k)
{
	uint32_t dim[3][3];   /* nx, ny, ld of A, B, C */
	char msg[200];

	for (int x = 0; x < 3; x++) {
		dim[x][0] = STARPU_MATRIX_GET_NX(buffers[x]);
		dim[x][1] = STARPU_MATRIX_GET_NY(buffers[x]);
		dim[x][2] = STARPU_MATRIX_GET_LD(buffers[x]);
	}
	for (int x = 0; x < 3; x++) {
		if (dim[x][0] <= INT32_MAX && dim[x][1] <= INT32_MAX && dim[x][2] <= INT32_MAX &&
		    dim[x][2] >= (dim[x][0] > 1 ? dim[x][0] : 1))
			continue;
		snprintf(msg, sizeof(msg), "%s%cgemm: tile %c of %u x %u with leading dimension "
			 "%u is not a BLAS operand", prefix, letter, "ABC"[x], dim[x][0],
			 dim[x][1], dim[x][2]);
		stargemm__task_failed(msg);
		return 1;
	}
	if ((ta == 'N' ? dim[0][0] : dim[0][1]) == (uint32_t)m && dim[2][0] == (uint32_t)m &&
	    (tb == 'N' ? dim[1][1] : dim[1][0]) == (uint32_t)n && dim[2][1] == (uint32_t)n &&
	    (tb == 'N' ? dim[1][0] : dim[1][1]) == (uint32_t)k &&
	    (ta == 'N' ? dim[0][1] : dim[0][0]) == (uint32_t)k)
		return 0;
	snprintf(msg, sizeof(msg), "%s%cgemm: tiles of %u x %u, %u x %u and %u x %u do not make a "
		 "product (op %c%c)", prefix, letter, dim[0][0], dim[0][1], dim[1][0], dim[1][1],
		 dim[2][0], dim[2][1], ta, tb);
	stargemm__task_failed(msg);
	return 1;
}

typedef void xerbla_fn(const char *name, const int *info, size_t len);

void xerbla_(const char *name, const int *info, size_t len);

void xerbla_(const char *name, const int *info, size_t len)
{
	int n = 0;
	xerbla_fn *next;

	while (n < (int)len && n < 32 && name[n] && name[n] != ' ')
		n++;
	if (stargemm__initialized() && starpu_worker_get_id() >= 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "BLAS refused argument %d of %.*s in a task's kernel "
			 "(its xerbla_)", *info, n, name);
		stargemm__task_failed(msg);
		return;
	}
	next = (xerbla_fn *)dlsym(RTLD_NEXT, "xerbla_");
	if (next && next != xerbla_) {
		next(name, info, len);
		return;
	}
	fprintf(stderr, " ** On entry to %.*s parameter number %d had an illegal value\n", n,
		name, *info);
}
