/*
 * generate.h — tiles made on demand (src/generate.c): the tiles of a matrix created by
 * stargemm_matrix_create_generated() exist on a rank only between the task that makes
 * them there and their release. Descriptor floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_GENERATE_H
#define STARGEMM_GENERATE_H

#include <stdint.h>

#include "stargemm.h"

struct stargemm__generator {
	stargemm_generate_fn fn;
	stargemm_generate_cuda_fn cuda;   /* or NULL: tiles made on the host only */
	void *arg;
	uint8_t *made;      /* mt * nt flags: made on this rank and not let go since */
	int64_t count;      /* tiles made on this rank since the matrix was created */
	int64_t on_gpus;    /* of which by the CUDA generator */
};

/* A generator for @p A (its fn and arg; A->gen is set); -ENOMEM naming @p fn. */
int stargemm__generator_new(struct stargemm_matrix *A, stargemm_generate_fn fn, void *arg,
			    const char *fn_name);
void stargemm__generator_free(struct stargemm_matrix *A);

/* Make tile (i, j) of generated @p A on this rank, unless it is made and not let go:
 * a local task writing it (the generator; when @p skip, a no-op that only marks it
 * written, for a product whose remaining tasks are skipped), which the tasks inserted
 * after it read. With a CUDA generator and @p device a GPU of the executor's (0..G-1,
 * src/contract.h; -1: the host), the task runs on that GPU's worker, else on a CPU
 * worker. 0 or -EIO naming the tile. Not collective. */
int stargemm__generate_tile(const struct stargemm_matrix *A, int64_t i, int64_t j, int skip,
			    int device);

/* Make unit (r, c) of op(A) (@p trans: A transposed) as stargemm__generate_tile(),
 * if @p A is generated; else nothing. */
int stargemm__generate_unit(const struct stargemm_matrix *A, int trans, int64_t r, int64_t c,
			    int skip, int device);

/* Let go of tile (i, j) of generated @p A if this rank made it: its buffers are
 * invalidated once the tasks inserted before have read it. */
void stargemm__generated_let_go(const struct stargemm_matrix *A, int64_t i, int64_t j);

/* The same for unit (r, c) of op(A) (@p trans: A transposed), if @p A is generated. */
void stargemm__generated_let_go_unit(const struct stargemm_matrix *A, int trans, int64_t r,
				     int64_t c);

/* Let go of every tile of @p A this rank made (nothing if A is not generated). */
void stargemm__generated_let_go_all(const struct stargemm_matrix *A);

/* The same once the tasks already inserted are done: at the next wait (the handle
 * reads as unwritten from the submission of its invalidation on, and StarPU asserts on
 * a prefetch of a handle unwritten; the scheduling policy prefetches the inputs of the
 * tasks it queues). */
void stargemm__generated_let_go_at_wait(const struct stargemm_matrix *A);

/* Tiles of @p A made on this rank since its creation (0 if not generated); with
 * @p on_gpus, those of them made by its CUDA generator. */
int64_t stargemm__generated_count(const struct stargemm_matrix *A, int on_gpus);

/* 0, or -EINVAL when @p A (named @p name) is generated: @p fn does not take such a
 * matrix (@p use says as what). */
int stargemm__check_stored(const struct stargemm_matrix *A, const char *name, const char *fn,
			   const char *use);

#endif
