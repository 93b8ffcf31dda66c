/*
 * generate.c — tiles made on demand (paper 000: B "too large to store", computed where
 * and when it is needed).
 *
 * A generated matrix (stargemm_matrix_create_generated(), src/matrix.c) has a StarPU
 * handle per present tile, as any matrix, but no storage on any rank, and each handle
 * is registered with StarPU-MPI as per-node data (STARPU_MPI_PER_NODE): every rank
 * has its own value of the tile, and a task that reads it takes the value of the rank
 * that runs it, with no MPI message. So a tile is made on the rank that needs it, by a
 * local task (codelets/generate.c) that writes it, inserted before the first task of
 * that rank reading it; the product's tasks then read it in StarPU's sequential order.
 * With a CUDA generator (stargemm_matrix_set_cuda_generator()) a tile whose first
 * reader runs on a GPU is made there: the task is bound to that GPU's worker
 * (STARPU_EXECUTE_ON_WORKER, so under any policy), and its W-only buffer is allocated
 * in the device's memory with no host copy; another GPU of the rank that reads it
 * takes it from there, as any tile.
 * When the work list lets it go (src/execute.c: once the last chunk of the window that
 * reads it is done; in core, at the next wait), its buffers are invalidated
 * (starpu_data_invalidate_submit(), ordered after the readers already inserted), so that
 * StarPU reuses or frees their memory; the next use makes it again. Not before its
 * readers are done: StarPU 1.3 marks the handle unwritten when the invalidation is
 * submitted, and asserts on a prefetch of an unwritten handle (the scheduling policy
 * prefetches the inputs of the tasks it queues).
 *
 * Which tiles this rank has made and not let go is recorded here (made[]), on the
 * application thread, where tasks are inserted: a tile is made once per stretch of
 * uses, and a tile let go is never read before it is made again — a read of a tile
 * without a valid copy stops StarPU with an assertion.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "internal.h"

static void let_go_deferred(void *A);

int stargemm__generator_new(struct stargemm_matrix *A, stargemm_generate_fn fn, void *arg,
			    const char *fn_name)
{
	struct stargemm__generator *g = calloc(1, sizeof(*g));
	int64_t n = A->mt * A->nt;

	if (g)
		g->made = calloc((size_t)(n > 0 ? n : 1), 1);
	if (!g || !g->made) {
		free(g);
		return stargemm__error(-ENOMEM, "%s: out of memory for %" PRId64 " x %" PRId64
				       " generated tiles", fn_name, A->mt, A->nt);
	}
	g->fn = fn;
	g->arg = arg;
	A->gen = g;
	return 0;
}

void stargemm__generator_free(struct stargemm_matrix *A)
{
	if (!A->gen)
		return;
	stargemm__drop_deferred(let_go_deferred, A);
	free(A->gen->made);
	free(A->gen);
	A->gen = NULL;
}

int stargemm_matrix_set_cuda_generator(struct stargemm_matrix *A,
				       stargemm_generate_cuda_fn cuda)
{
	stargemm__clear_error();
	if (!A || !A->gen)
		return stargemm__error(-EINVAL, "stargemm_matrix_set_cuda_generator: %s",
				       A ? "A is not a generated matrix "
					   "(stargemm_matrix_create_generated())"
					 : "A is NULL");
	A->gen->cuda = cuda;
	return 0;
}

/* The CUDA worker that makes a tile read on executor device @p device, or -1 (made on
 * the host): without a CUDA generator, for the host (-1), and without CUDA workers
 * (device 0 is then the host RAM). */
static int making_worker(const struct stargemm__generator *g, int device)
{
	if (!g->cuda || device < 0 || (int)starpu_cuda_worker_get_count() <= device)
		return -1;
	return starpu_worker_get_by_type(STARPU_CUDA_WORKER, device);
}

int stargemm__generate_tile(const struct stargemm_matrix *A, int64_t i, int64_t j, int skip,
			    int device)
{
	struct stargemm__generator *g = A->gen;
	int64_t idx = stargemm__tile_index(A, i, j), row0 = A->row_off[i], col0 = A->col_off[j];
	starpu_data_handle_t h = A->tiles[idx];
	int worker = making_worker(g, device), ret;

	if (g->made[idx])
		return 0;
	/* skipped: zeros, which mark the tile written (a no-op task would not); with a
	 * CUDA generator, on its GPU's worker whatever the policy (-1: unbound) */
	ret = skip ? starpu_task_insert(&stargemm_zero_cl, STARPU_W, h, 0)
		   : starpu_task_insert(worker >= 0 ? &stargemm_generate_cuda_cl
						    : &stargemm_generate_cl,
					STARPU_VALUE, &g->fn, sizeof(g->fn),
					STARPU_VALUE, &g->cuda, sizeof(g->cuda),
					STARPU_VALUE, &g->arg, sizeof(g->arg),
					STARPU_VALUE, &row0, sizeof(row0),
					STARPU_VALUE, &col0, sizeof(col0),
					STARPU_VALUE, &i, sizeof(i),
					STARPU_VALUE, &j, sizeof(j),
					STARPU_EXECUTE_ON_WORKER, worker,
					STARPU_W, h, 0);
	if (ret)
		return stargemm__error(-EIO, "stargemm: task submission failed for the generation "
				       "of tile (%" PRId64 ", %" PRId64 ") (%d)", i, j, ret);
	g->made[idx] = 1;
	g->count += !skip;
	g->on_gpus += !skip && worker >= 0;
	return 0;
}

int stargemm__generate_unit(const struct stargemm_matrix *A, int trans, int64_t r, int64_t c,
			    int skip, int device)
{
	if (!A->gen)
		return 0;
	return trans ? stargemm__generate_tile(A, c, r, skip, device)
		     : stargemm__generate_tile(A, r, c, skip, device);
}

void stargemm__generated_let_go(const struct stargemm_matrix *A, int64_t i, int64_t j)
{
	int64_t idx = stargemm__tile_index(A, i, j);

	if (!A->gen || !A->gen->made[idx])
		return;
	starpu_data_invalidate_submit(A->tiles[idx]);
	A->gen->made[idx] = 0;
}

void stargemm__generated_let_go_unit(const struct stargemm_matrix *A, int trans, int64_t r,
				     int64_t c)
{
	if (A->gen)
		stargemm__generated_let_go(A, trans ? c : r, trans ? r : c);
}

void stargemm__generated_let_go_all(const struct stargemm_matrix *A)
{
	for (int64_t j = 0; A->gen && j < A->nt; j++)
		for (int64_t i = 0; i < A->mt; i++)
			stargemm__generated_let_go(A, i, j);
}

static void let_go_deferred(void *A)
{
	stargemm__generated_let_go_all(A);
}

void stargemm__generated_let_go_at_wait(const struct stargemm_matrix *A)
{
	if (A->gen)
		stargemm__defer_to_wait(let_go_deferred, (void *)A);
}

int64_t stargemm__generated_count(const struct stargemm_matrix *A, int on_gpus)
{
	if (!A || !A->gen)
		return 0;
	return on_gpus ? A->gen->on_gpus : A->gen->count;
}

int stargemm__check_stored(const struct stargemm_matrix *A, const char *name, const char *fn,
			   const char *use)
{
	if (!A || !A->gen)
		return 0;
	return stargemm__error(-EINVAL, "%s: %s is a generated matrix (its tiles exist only "
			       "while a product or stargemm_matrix_norms() reads them); it cannot "
			       "be %s", fn, name, use);
}

int stargemm_matrix_is_generated(const struct stargemm_matrix *A)
{
	return A && A->gen;
}
