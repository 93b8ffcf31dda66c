/*
 * codelets/first_value.c — the value of a tile read before anything wrote it: zeros.
 *
 * Tiles that StarPU allocates (home node -1: a RAM budget or a disk node, src/matrix.c)
 * have no value until a task writes them, and StarPU 1.3 stops with an assertion when
 * such a handle is read ("Handle ... is not initialized"): a gather or a product before
 * the fill. StarPU builds the missing value with the handle's initialisation codelet
 * (starpu_data_set_reduction_methods(), whose init_cl also serves reads of a handle
 * never written), on the worker and memory node that need it, only then. So an unfilled
 * matrix reads as zeros, as a packed one does (its packs are zeroed at creation), at no
 * cost to matrices that are filled first.
 *
 * StarPU calls the function directly, with no argument (cl_arg NULL); the CUDA one
 * clears the tile on the worker's stream, ahead of the task that reads it.
 */
#include <stdio.h>
#include <string.h>

#include "../src/internal.h"

static void first_value_cpu(void *buffers[], void *cl_arg)
{
	char *t = (char *)STARPU_MATRIX_GET_PTR(buffers[0]);
	size_t elem = STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
	size_t ld = STARPU_MATRIX_GET_LD(buffers[0]), rows = STARPU_MATRIX_GET_NX(buffers[0]);

	for (size_t c = 0; c < STARPU_MATRIX_GET_NY(buffers[0]); c++)
		memset(t + c * ld * elem, 0, rows * elem);
}

#if defined(STARPU_SIMGRID)
/* Simulated: nothing runs. StarPU still needs a function for CUDA workers. */
static void first_value_cuda(void *buffers[], void *cl_arg)
{
}
#define HAVE_FIRST_VALUE_CUDA 1
#elif defined(STARPU_USE_CUDA)
#define HAVE_FIRST_VALUE_CUDA 1
static void first_value_cuda(void *buffers[], void *cl_arg)
{
	size_t elem = STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
	cudaError_t err;

	err = cudaMemset2DAsync((void *)STARPU_MATRIX_GET_PTR(buffers[0]),
				STARPU_MATRIX_GET_LD(buffers[0]) * elem, 0,
				STARPU_MATRIX_GET_NX(buffers[0]) * elem,
				STARPU_MATRIX_GET_NY(buffers[0]), starpu_cuda_get_local_stream());
	if (err != cudaSuccess) {
		char msg[160];

		snprintf(msg, sizeof(msg), "cudaMemset2DAsync of an unwritten tile: %s",
			 cudaGetErrorString(err));
		stargemm__kernel_failed(msg);
	}
}
#endif

struct starpu_codelet stargemm_first_value_cl = {
	.name = "first_value",
	.cpu_funcs = { first_value_cpu },
#ifdef HAVE_FIRST_VALUE_CUDA
	.cuda_funcs = { first_value_cuda },
#endif
	.nbuffers = 1,
	.modes = { STARPU_W },
};
