/*
 * codelets/generate.c — make one tile of a generated matrix with the user's generator
 * (stargemm_matrix_create_generated(); src/generate.c inserts it): on a CPU worker with
 * the host generator (the tile then goes to a GPU as any tile does), or, with a CUDA
 * generator (stargemm_matrix_set_cuda_generator()), on the GPU worker src/generate.c
 * binds it to, the generator queueing its work on the worker's stream
 * (STARPU_CUDA_ASYNC: StarPU synchronises the stream before the tile is read).
 *
 * A generator that returns a nonzero status fails the product: the failure is
 * recorded with the tile and the status (stargemm__task_failed(), reported by the
 * next stargemm_wait() on every rank), and the tile is zeroed, so that what the
 * product's remaining tasks read is defined.
 *
 * Arguments (STARPU_VALUE, in order): stargemm_generate_fn fn, stargemm_generate_cuda_fn
 * cuda (NULL for the host's), void *arg, int64_t row0, int64_t col0 (global position of
 * the tile's first element), int64_t i, int64_t j (the tile's indices, for the message).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../src/internal.h"

/* The product fails: its message names tile (i, j), @p kind of generator and its
 * status (stargemm__task_failed(), reported by the next stargemm_wait()). */
static void failed(const char *kind, int64_t i, int64_t j, int status)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "stargemm: the %sgenerator failed on tile (%" PRId64 ", %"
		 PRId64 ") (status %d, rank %d)", kind, i, j, status, stargemm_rank());
	stargemm__task_failed(msg);
}

/* A task's tile and arguments. */
struct making {
	stargemm_generate_fn fn;
	stargemm_generate_cuda_fn cuda;
	void *arg, *tile;
	int64_t row0, col0, i, j, ld, rows, cols;
	size_t elem;
};

static void unpack(void *buffers[], void *cl_arg, struct making *m)
{
	m->tile = (void *)STARPU_MATRIX_GET_PTR(buffers[0]);
	m->ld = (int64_t)STARPU_MATRIX_GET_LD(buffers[0]);
	m->rows = (int64_t)STARPU_MATRIX_GET_NX(buffers[0]);
	m->cols = (int64_t)STARPU_MATRIX_GET_NY(buffers[0]);
	m->elem = STARPU_MATRIX_GET_ELEMSIZE(buffers[0]);
	starpu_codelet_unpack_args(cl_arg, &m->fn, &m->cuda, &m->arg, &m->row0, &m->col0,
				   &m->i, &m->j);
}

static void generate_cpu(void *buffers[], void *cl_arg)
{
	struct making m;
	int status;

	unpack(buffers, cl_arg, &m);
	status = m.fn(m.tile, m.ld, m.rows, m.cols, m.row0, m.col0, m.arg);
	if (status == 0)
		return;
	for (int64_t c = 0; c < m.cols; c++)
		memset((char *)m.tile + (size_t)(c * m.ld) * m.elem, 0, (size_t)m.rows * m.elem);
	failed("", m.i, m.j, status);
}

#if defined(STARPU_SIMGRID)
/* In SimGrid mode kernels are not run: the task lasts what the model says. StarPU
 * 1.3 still needs a CUDA function to consider CUDA workers. */
static void generate_cuda(void *buffers[], void *cl_arg)
{
}
#define HAVE_GENERATE_CUDA 1
#elif defined(STARPU_USE_CUDA)
#define HAVE_GENERATE_CUDA 1
static void generate_cuda(void *buffers[], void *cl_arg)
{
	cudaStream_t stream = starpu_cuda_get_local_stream();
	struct making m;
	int status;

	unpack(buffers, cl_arg, &m);
	status = m.cuda(m.tile, m.ld, m.rows, m.cols, m.row0, m.col0, (void *)stream, m.arg);
	if (status == 0)
		return;
	cudaMemset2DAsync(m.tile, (size_t)m.ld * m.elem, 0, (size_t)m.rows * m.elem,
			  (size_t)m.cols, stream);
	failed("CUDA ", m.i, m.j, status);
}
#endif

/* A tile made by a generator, or its CUDA generator, costs about what writing it
 * does: their own model (perfmodels/generate.sh), so that simulated runs know how long
 * it lasts on each kind of worker. */
static struct starpu_perfmodel generate_model = {
	.type = STARPU_NL_REGRESSION_BASED,
	.symbol = "stargemm_generate",
	.size_base = stargemm__model_tile_elements,
	.footprint = stargemm__model_footprint,
};

struct starpu_codelet stargemm_generate_cl = {
	.name = "generate",
	.cpu_funcs = { generate_cpu },
	.nbuffers = 1,
	.modes = { STARPU_W },
	.model = &generate_model,
};

/* Inserted bound to a CUDA worker only (src/generate.c); no CPU function, so that no
 * other worker could take it. */
struct starpu_codelet stargemm_generate_cuda_cl = {
	.name = "generate_cuda",
#ifdef HAVE_GENERATE_CUDA
	.cuda_funcs = { generate_cuda },
	.cuda_flags = { STARPU_CUDA_ASYNC },
#else
	.where = STARPU_NOWHERE,
#endif
	.nbuffers = 1,
	.modes = { STARPU_W },
	.model = &generate_model,
};
