/*
 * tests/test_blas_guard.c — the kernels' guard before a tile product
 * (stargemm__blas_refuses(), codelets/blas_guard.c): tiles BLAS would take pass and
 * fail no task; a side beyond BLAS's int, a leading dimension below the rows, and
 * shapes that do not make the product (plain and transposed) each fail the task with
 * a message naming the tile and the constraint, and the kernel is told not to call.
 * Also the xerbla_ stargemm exports, off a StarPU worker: a program's own refused
 * BLAS call goes to the BLAS's handler and fails no task. Output: TAP. Needs no MPI or
 * StarPU start: the buffers are matrix interfaces built here.
 */
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "../codelets/codelets.h"
#include "../src/process.h"
#include "tap.h"



/* A matrix interface of @p nx x @p ny (StarPU's rows x columns) with leading
 * dimension @p ld, holding no data. */
static struct starpu_matrix_interface tile(uint32_t nx, uint32_t ny, uint32_t ld)
{
	struct starpu_matrix_interface t;

	memset(&t, 0, sizeof(t));
	t.id = STARPU_MATRIX_INTERFACE_ID;
	t.nx = nx;
	t.ny = ny;
	t.ld = ld;
	t.elemsize = sizeof(double);
	return t;
}

/* Whether the guard refuses A, B, C for op @p ta @p tb with sizes m x n x k, and the
 * task failure it records contains @p needle (NULL: it records none). */
static int guard(struct starpu_matrix_interface *a, struct starpu_matrix_interface *b,
		 struct starpu_matrix_interface *c, char ta, char tb, int m, int n, int k,
		 const char *needle)
{
	void *buffers[3] = { a, b, c };
	char msg[512];
	int refused = stargemm__blas_refuses("cblas_", 'd', buffers, ta, tb, m, n, k);
	int recorded = stargemm__take_task_failures(msg, sizeof(msg));

	if (!needle)
		return !refused && recorded == 0;
	if (!refused || recorded != 1 || !strstr(msg, needle)) {
		printf("# refused %d, failures %d, message '%s'\n", refused, recorded, msg);
		return 0;
	}
	printf("# %s\n", msg);
	return 1;
}

int main(void)
{
	struct starpu_matrix_interface a = tile(300, 200, 512), b = tile(200, 100, 200);
	struct starpu_matrix_interface c = tile(300, 100, 300), at = tile(200, 300, 200);
	struct starpu_matrix_interface bt = tile(100, 200, 128), low = tile(300, 200, 299);
	struct starpu_matrix_interface wide = tile(300, 3000000000u, 300);
	struct starpu_matrix_interface huge = tile(300, 200, 3000000000u);
	double x[4] = { 1, 2, 3, 4 }, y[4] = { 0 };

	tap_ok(guard(&a, &b, &c, 'N', 'N', 300, 100, 200, NULL),
	   "a product BLAS takes (ld above the rows) passes and fails no task");
	tap_ok(guard(&at, &bt, &c, 'T', 'T', 300, 100, 200, NULL),
	   "the same with both operands transposed passes");
	tap_ok(guard(&low, &b, &c, 'N', 'N', 300, 100, 200,
		 "tile A of 300 x 200 with leading dimension 299 is not a BLAS operand"),
	   "a leading dimension below the rows fails the task, naming the tile");
	tap_ok(guard(&a, &b, &huge, 'N', 'N', 300, 100, 200,
		 "tile C of 300 x 200 with leading dimension 3000000000"),
	   "a leading dimension beyond BLAS's int fails the task");
	tap_ok(guard(&a, &wide, &c, 'N', 'N', 300, 100, 200, "tile B of 300 x 3000000000"),
	   "a side beyond BLAS's int fails the task");
	tap_ok(guard(&a, &b, &c, 'N', 'N', 300, 100, 199, "do not make a product (op NN)"),
	   "an inner size that is not the tiles' fails the task");
	tap_ok(guard(&a, &b, &c, 'T', 'N', 300, 100, 200, "do not make a product (op TN)"),
	   "a transposition the tiles do not fit fails the task");
	tap_ok(guard(&a, &b, &c, 'N', 'N', 300, 100, 200, NULL),
	   "the guard records nothing again after a refusal (the failures were taken)");
	/* lda = 0: OpenBLAS calls xerbla_, which is stargemm's; on this thread (no
	 * StarPU worker) it hands the call to the BLAS's, which prints and returns. */
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, x, 0, x, 2, 0.0,
		    y, 2);
	tap_ok(!stargemm__task_failures() && y[0] == 0.0,
	   "a program's own refused BLAS call fails no task and computes nothing");
	return tap_done();
}
