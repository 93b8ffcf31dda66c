/*
 * matrix_io.c — putting values into distributed matrices and getting them out:
 * per-tile fill tasks, deterministic random fill, scatter from and gather to one rank.
 *
 * Scatter and gather move each tile with one StarPU-MPI message between the root and
 * the tile's owner; on the root the message goes straight into (or out of) the user's
 * full array through a temporary handle whose leading dimension is the array's, so no
 * intermediate copy is made. Absent tiles of a block-sparse matrix are skipped by fills
 * and scatters and gathered as zeros. A packed matrix (src/pack.c) moves one message
 * per pack, through a buffer on the root.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A fill task that could not be inserted: recorded, so that stargemm_wait() reports it
 * on every rank (fills exchange nothing: the other ranks wait for nothing). */
static void fill_failed(int ret)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "stargemm_matrix_fill: task submission failed (%d)", ret);
	stargemm__task_failed(msg);
}

/* A packed matrix: one fill task per pack (codelets/pack.c). */
static int fill_packs(struct stargemm_matrix *A, stargemm_fill_elements_fn fn, void *arg)
{
	int ret = 0;

	for (int64_t J = 0; J < A->pack->gnt && !ret; J++)
		for (int64_t I = 0; I < A->pack->gmt && !ret; I++) {
			starpu_data_handle_t h = A->packs[I + J * A->pack->gmt];

			if (!h)
				continue;
			ret = starpu_mpi_task_insert(stargemm__comm(), &stargemm_pack_fill_cl,
						     STARPU_VALUE, &fn, sizeof(fn),
						     STARPU_VALUE, &arg, sizeof(arg),
						     STARPU_VALUE, &A, sizeof(A),
						     STARPU_VALUE, &I, sizeof(I),
						     STARPU_VALUE, &J, sizeof(J), STARPU_W, h, 0);
			if (ret)
				fill_failed(ret);
		}
	return stargemm_wait();
}

/* Fill tasks on every present tile (the function may be called from any worker, on
 * the tile's owner), then wait: the tasks read @p arg. */
static int fill(struct stargemm_matrix *A, stargemm_fill_elements_fn fn, void *arg,
		const char *name)
{
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__check_matrix(A, "A")) ||
	    (ret = stargemm__check_stored(A, "A", name, "filled (its generator gives its "
					  "values)")))
		return ret;
	if (!fn)
		return stargemm__error(-EINVAL, "%s: the fill function is NULL", name);
	A->written = 1;
	if (A->pack)
		return fill_packs(A, fn, arg);
	for (int64_t j = 0; j < A->nt && !ret; j++)
		for (int64_t i = 0; i < A->mt && !ret; i++) {
			int64_t row0 = A->row_off[i], col0 = A->col_off[j];

			if (!stargemm__present(A, i, j))
				continue;
			ret = starpu_mpi_task_insert(stargemm__comm(), &stargemm_fill_cl,
						     STARPU_VALUE, &fn, sizeof(fn),
						     STARPU_VALUE, &arg, sizeof(arg),
						     STARPU_VALUE, &row0, sizeof(row0),
						     STARPU_VALUE, &col0, sizeof(col0),
						     STARPU_W, stargemm__tile(A, i, j), 0);
			if (ret)
				fill_failed(ret);
		}
	return stargemm_wait();
}

int stargemm_matrix_fill_elements(struct stargemm_matrix *A, stargemm_fill_elements_fn fn,
				  void *arg)
{
	return fill(A, fn, arg, "stargemm_matrix_fill_elements");
}

/* stargemm_matrix_fill()'s double function, called through the element-type one. */
struct double_fill {
	stargemm_fill_fn fn;
	void *arg;
};

static void fill_doubles(void *tile, int64_t ld, int64_t rows, int64_t cols, int64_t row0,
			 int64_t col0, void *arg)
{
	const struct double_fill *f = arg;

	f->fn(tile, ld, rows, cols, row0, col0, f->arg);
}

int stargemm_matrix_fill(struct stargemm_matrix *A, stargemm_fill_fn fn, void *arg)
{
	/* On the stack: fill() waits for the tasks that read it. */
	struct double_fill f = { fn, arg };

	if (A && A->type->letter != 'd') {
		stargemm__clear_error();
		return stargemm__error(-EINVAL, "stargemm_matrix_fill: the function fills "
				       "doubles, and the matrix holds %s elements: use "
				       "stargemm_matrix_fill_elements()", A->type->name);
	}
	if (!fn) {
		stargemm__clear_error();
		return stargemm__error(-EINVAL, "stargemm_matrix_fill: the fill function is "
				       "NULL");
	}
	return fill(A, fill_doubles, &f, "stargemm_matrix_fill");
}

/* splitmix64: a counter-based generator, so that the value of an element depends only
 * on (seed, row, column) and not on the tiling or on the order of evaluation. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t column_seed(uint64_t seed, int64_t col)
{
	return mix64(mix64(seed) ^ (uint64_t)col);
}

static double uniform(uint64_t colseed, int64_t row)
{
	return (double)(mix64(colseed + (uint64_t)row) >> 11) * 0x1.0p-53 - 0.5;
}

double stargemm_random_element(uint64_t seed, int64_t row, int64_t col)
{
	return uniform(column_seed(seed, col), row);
}

/* What the random fill's tasks read: the seed and the element type. */
struct random_fill {
	uint64_t seed;
	const struct stargemm__element *type;
};

static void fill_random_tile(void *tile, int64_t ld, int64_t rows, int64_t cols,
			     int64_t row0, int64_t col0, void *arg)
{
	const struct random_fill *f = arg;

	for (int64_t c = 0; c < cols; c++) {
		uint64_t re_seed = column_seed(f->seed, col0 + c);
		uint64_t im_seed = column_seed(~f->seed, col0 + c);

		for (int64_t r = 0; r < rows; r++)
			f->type->store(tile, r + c * ld, uniform(re_seed, row0 + r),
				       f->type->is_complex ? uniform(im_seed, row0 + r) : 0.0);
	}
}

int stargemm_matrix_fill_random(struct stargemm_matrix *A, uint64_t seed)
{
	/* The tasks read it through a pointer; fill() waits for them, so a stack variable
	 * is fine. */
	struct random_fill f = { seed, A ? A->type : NULL };

	return fill(A, fill_random_tile, &f, "stargemm_matrix_fill_random");
}

/* Column-major copy of a rows x cols block of @p es-byte elements between arrays of
 * leading dimensions ldd and lds (in elements). */
static void copy_block(void *dst, int64_t ldd, const void *src, int64_t lds, int64_t rows,
		       int64_t cols, size_t es)
{
	for (int64_t c = 0; c < cols; c++)
		memcpy((char *)dst + (size_t)(c * ldd) * es,
		       (const char *)src + (size_t)(c * lds) * es, (size_t)rows * es);
}

/* Address of element (row_off[i], col_off[j]) of the full array. */
static char *block_start(const struct stargemm_matrix *A, const void *full, int64_t ld,
			 int64_t i, int64_t j)
{
	return (char *)full + (size_t)(A->row_off[i] + A->col_off[j] * ld) * A->elem_size;
}

static int check_io_args(const struct stargemm_matrix *A, const void *full, int64_t ld,
			 int root, const char *fn)
{
	int ret;

	if ((ret = stargemm__check_matrix(A, "A")) ||
	    (ret = stargemm__check_stored(A, "A", fn, "scattered or gathered")))
		return ret;
	if (root < 0 || root >= stargemm_nranks())
		return stargemm__error(-EINVAL, "%s: root rank %d is not in [0, %d)", fn, root,
				       stargemm_nranks());
	if (stargemm_rank() == root && !full)
		return stargemm__error(-EINVAL, "%s: the full array is NULL on the root", fn);
	if (stargemm_rank() == root && ld < A->m)
		return stargemm__error(-EINVAL, "%s: the leading dimension ld=%" PRId64 " must be "
				       ">= M=%" PRId64, fn, ld, A->m);
	/* Each tile's block of the array is a StarPU view sent to the tile's owner. */
	if (stargemm_rank() == root)
		return stargemm__check_tile(1, 1, ld, A->elem_size, stargemm_nranks() > 1, fn,
					    "the full array");
	return 0;
}

/* What every rank of a scatter or gather must pass alike: the matrix (its tags) and
 * the root. */
static uint64_t io_fingerprint(const struct stargemm_matrix *A, int root)
{
	int64_t tag = A ? A->tag_base : -1;
	uint64_t h = stargemm__fingerprint(0, &tag, sizeof(tag));

	return stargemm__fingerprint(h, &root, sizeof(root));
}

/* A handle on the rows x cols block of @p full that corresponds to tile (i, j). */
static starpu_data_handle_t block_view(const struct stargemm_matrix *A, const void *full,
				       int64_t ld, int64_t i, int64_t j)
{
	starpu_data_handle_t view;

	starpu_matrix_data_register(&view, STARPU_MAIN_RAM,
				    (uintptr_t)block_start(A, full, ld, i, j), (uint32_t)ld,
				    (uint32_t)stargemm_matrix_tile_rows(A, i),
				    (uint32_t)stargemm_matrix_tile_cols(A, j), A->elem_size);
	return view;
}

/* Copy between the root's full array and a tile the root owns. */
static void local_copy(const struct stargemm_matrix *A, void *full, int64_t ld,
		       int64_t i, int64_t j, int to_tile)
{
	starpu_data_handle_t h = stargemm__tile(A, i, j);
	char *base = block_start(A, full, ld, i, j);
	int64_t rows = stargemm_matrix_tile_rows(A, i), cols = stargemm_matrix_tile_cols(A, j);
	int64_t tld;
	void *tile;

	starpu_data_acquire(h, to_tile ? STARPU_W : STARPU_R);
	tile = (void *)starpu_matrix_get_local_ptr(h);
	/* A tile in place in a user's array has the array's leading dimension. */
	tld = (int64_t)starpu_matrix_get_local_ld(h);
	if (to_tile)
		copy_block(tile, tld, base, ld, rows, cols, A->elem_size);
	else
		copy_block(base, ld, tile, tld, rows, cols, A->elem_size);
	starpu_data_release(h);
}

/* An absent tile of a block-sparse matrix, gathered: zeros in the full array. */
static void zero_block(const struct stargemm_matrix *A, void *full, int64_t ld, int64_t i,
		       int64_t j)
{
	char *base = block_start(A, full, ld, i, j);

	for (int64_t c = 0; c < stargemm_matrix_tile_cols(A, j); c++)
		memset(base + (size_t)(c * ld) * A->elem_size, 0,
		       (size_t)stargemm_matrix_tile_rows(A, i) * A->elem_size);
}

/* Move every present tile between @p root's full array and the owners (absent tiles:
 * dropped by a scatter, zeros in a gather). */
/* The messages one rank posted in an exchange, to wait for one by one. */
struct posted {
	starpu_mpi_req *req;          /* NULL where posting failed */
	starpu_data_handle_t *view;   /* the root's handle on its array, or NULL */
	int64_t count;
	int ret;                      /* the first failure, with its message */
};

/* Post the send or receive of tile (i, j) with rank @p peer through @p h (a tile, or
 * the root's @p view of its array). */
static void post(struct posted *p, starpu_data_handle_t h, starpu_data_handle_t view,
		 int send, int peer, starpu_mpi_tag_t tag, int64_t i, int64_t j)
{
	MPI_Comm comm = stargemm__comm();
	int64_t e = p->count++;
	int rc = send ? starpu_mpi_isend(h, &p->req[e], peer, tag, comm)
		      : starpu_mpi_irecv(h, &p->req[e], peer, tag, comm);

	p->view[e] = view;
	if (rc) {
		p->req[e] = NULL;
		if (!p->ret)
			p->ret = stargemm__error(-EIO, "stargemm: %s tile (%" PRId64 ", %" PRId64
						 ") %s rank %d failed (%d)",
						 send ? "sending" : "receiving", i, j,
						 send ? "to" : "from", peer, rc);
	}
}

/* Wait for every message this rank posted: each one, by its request. (Waiting for
 * detached messages with starpu_mpi_wait_for_all() hung: a rank whose own tasks were
 * done entered StarPU-MPI's barrier, whose blocking MPI_Barrier on the progress thread
 * kept that thread from posting the receives the root's large sends waited for.)
 * starpu_mpi_wait()'s result is no verdict: StarPU-MPI 1.3 returns -1 for a receive
 * whose message arrived before it was posted, and stops the program itself on an MPI
 * error. */
static void wait_posted(struct posted *p)
{
	for (int64_t e = 0; e < p->count; e++) {
		if (p->req[e])
			starpu_mpi_wait(&p->req[e], MPI_STATUS_IGNORE);
		if (p->view[e])
			starpu_data_unregister(p->view[e]);
	}
}

/* Move every present tile between @p root's full array and the owners (absent tiles:
 * dropped by a scatter, zeros in a gather). A failed post does not stop the exchange
 * (the peers still expect the other tiles): the first failure is reported once every
 * posted message has completed. */
static int exchange(const struct stargemm_matrix *A, void *full, int64_t ld, int root,
		    int to_tiles)
{
	int me = stargemm_rank();
	int64_t ntiles = A->mt * A->nt;
	struct posted p = { calloc((size_t)(ntiles > 0 ? ntiles : 1), sizeof(*p.req)),
			    calloc((size_t)(ntiles > 0 ? ntiles : 1), sizeof(*p.view)), 0, 0 };

	int ret = p.req && p.view ? 0 : stargemm__error(-ENOMEM, "stargemm: out of memory for %"
						       PRId64 " tile messages", ntiles);

	if ((ret = stargemm__agree(ret))) {
		free(p.req);
		free(p.view);
		return ret;
	}
	for (int64_t j = 0; j < A->nt; j++)
		for (int64_t i = 0; i < A->mt; i++) {
			int owner = stargemm_matrix_owner(A, i, j);
			starpu_data_handle_t tile = stargemm__tile(A, i, j), view;
			starpu_mpi_tag_t tag = A->tag_base + stargemm__tile_index(A, i, j);

			if (!stargemm__present(A, i, j)) {
				if (me == root && !to_tiles)
					zero_block(A, full, ld, i, j);
				continue;
			}
			if (owner == root && me == root) {
				local_copy(A, full, ld, i, j, to_tiles);
			} else if (me == root) {
				view = block_view(A, full, ld, i, j);
				post(&p, view, view, to_tiles, owner, tag, i, j);
			} else if (me == owner) {
				post(&p, tile, NULL, !to_tiles, root, tag, i, j);
			}
			/* Copies of the tile cached on other ranks are now stale. */
			if (to_tiles)
				starpu_mpi_cache_flush(stargemm__comm(), tile);
		}
	wait_posted(&p);
	free(p.req);
	free(p.view);
	return stargemm__agree(p.ret);
}

/* ---- packed matrices: one message per pack ---------------------------------------- */

/* Tiles of a pack and the full array, tile by tile (to the pack or from it). */
struct full_array {
	const struct stargemm_matrix *A;
	void *full;
	int64_t ld;
	int to_pack;
};

static void copy_pack_tile(void *tile, int64_t i, int64_t j, void *arg)
{
	const struct full_array *f = arg;
	int64_t rows = stargemm_matrix_tile_rows(f->A, i), cols = stargemm_matrix_tile_cols(f->A, j);
	char *base = block_start(f->A, f->full, f->ld, i, j);

	if (f->to_pack)
		copy_block(tile, rows, base, f->ld, rows, cols, f->A->elem_size);
	else
		copy_block(base, f->ld, tile, rows, rows, cols, f->A->elem_size);
}

/* The root's own pack (I, J) and its array. */
static void local_pack_copy(const struct full_array *f, int64_t I, int64_t J,
			    starpu_data_handle_t h)
{
	starpu_data_acquire(h, f->to_pack ? STARPU_W : STARPU_R);
	stargemm__pack_walk(f->A, I, J, (void *)starpu_matrix_get_local_ptr(h), copy_pack_tile,
			    (void *)f);
	starpu_data_release(h);
}

/* On the root, a pack another rank owns goes through a buffer of the root's: filled
 * from the array before a scatter's send, emptied into it after a gather's receive. */
static starpu_data_handle_t pack_buffer(const struct full_array *f, int64_t I, int64_t J,
					void **buf)
{
	int64_t elems = f->A->pack->elems[I + J * f->A->pack->gmt];
	starpu_data_handle_t view;

	*buf = malloc((size_t)elems * f->A->elem_size);
	if (!*buf)
		return NULL;
	if (f->to_pack)
		stargemm__pack_walk(f->A, I, J, *buf, copy_pack_tile, (void *)f);
	starpu_matrix_data_register(&view, STARPU_MAIN_RAM, (uintptr_t)*buf, (uint32_t)elems,
				    (uint32_t)elems, 1, f->A->elem_size);
	return view;
}

/* On the root, the buffer and view of every pack another rank owns (NULL elsewhere). */
static int root_buffers(const struct full_array *f, starpu_data_handle_t *views, void **buf)
{
	const struct stargemm__packing *pk = f->A->pack;

	for (int64_t J = 0; J < pk->gnt; J++)
		for (int64_t I = 0; I < pk->gmt; I++) {
			int64_t idx = I + J * pk->gmt;

			if (!f->A->packs[idx] || stargemm__pack_owner(f->A, I, J) == stargemm_rank())
				continue;
			if (!(views[idx] = pack_buffer(f, I, J, &buf[idx])))
				return stargemm__error(-ENOMEM, "stargemm: out of memory for "
						       "pack (%" PRId64 ", %" PRId64 ")", I, J);
		}
	return 0;
}

/* exchange() for a packed matrix: each pack is one message between the root and its
 * owner. Absent tiles are gathered as zeros. */
static int exchange_packs(const struct stargemm_matrix *A, void *full, int64_t ld, int root,
			  int to_tiles)
{
	const struct stargemm__packing *pk = A->pack;
	int me = stargemm_rank();
	int64_t npacks = pk->gmt * pk->gnt;
	struct full_array f = { A, full, ld, to_tiles };
	struct posted p = { calloc((size_t)npacks, sizeof(*p.req)),
			    calloc((size_t)npacks, sizeof(*p.view)), 0, 0 };
	void **buf = calloc((size_t)npacks, sizeof(*buf));
	starpu_data_handle_t *views = calloc((size_t)npacks, sizeof(*views));
	int ret = p.req && p.view && buf && views ? 0 : stargemm__error(
			-ENOMEM, "stargemm: out of memory for %" PRId64 " pack messages", npacks);

	/* The root's buffers first, agreed: a rank that gave up half-way through the
	 * posts would leave its peers waiting. */
	if (!ret && me == root)
		ret = root_buffers(&f, views, buf);
	if ((ret = stargemm__agree(ret))) {
		for (int64_t idx = 0; views && idx < npacks; idx++)
			if (views[idx])
				starpu_data_unregister(views[idx]);
		for (int64_t idx = 0; buf && idx < npacks; idx++)
			free(buf[idx]);
		free(views);
		free(buf);
		free(p.req);
		free(p.view);
		return ret;
	}
	for (int64_t j = 0; me == root && !to_tiles && j < A->nt; j++)
		for (int64_t i = 0; i < A->mt; i++)
			if (!stargemm__present(A, i, j))
				zero_block(A, full, ld, i, j);
	for (int64_t J = 0; J < pk->gnt; J++)
		for (int64_t I = 0; I < pk->gmt; I++) {
			int64_t idx = I + J * pk->gmt;
			starpu_data_handle_t h = A->packs[idx];
			int owner = stargemm__pack_owner(A, I, J);

			if (!h)
				continue;
			if (owner == root && me == root) {
				local_pack_copy(&f, I, J, h);
			} else if (me == root) {
				post(&p, views[idx], views[idx], to_tiles, owner,
				     A->tag_base + idx, I, J);
			} else if (me == owner) {
				post(&p, h, NULL, !to_tiles, root, A->tag_base + idx, I, J);
			}
			if (to_tiles)
				starpu_mpi_cache_flush(stargemm__comm(), h);
		}
	wait_posted(&p);
	f.to_pack = 0;
	for (int64_t J = 0; J < pk->gnt; J++)
		for (int64_t I = 0; I < pk->gmt; I++)
			if (buf[I + J * pk->gmt] && !to_tiles)
				stargemm__pack_walk(A, I, J, buf[I + J * pk->gmt], copy_pack_tile,
						    &f);
	for (int64_t idx = 0; idx < npacks; idx++)
		free(buf[idx]);
	free(buf);
	free(views);
	free(p.req);
	free(p.view);
	return stargemm__agree(p.ret);
}

int stargemm_matrix_scatter(struct stargemm_matrix *A, const void *full, int64_t ld,
			    int root)
{
	int ret;

	stargemm__clear_error();
	/* Agreed: a bad array or ld is the root's alone, and the others would wait. */
	if ((ret = stargemm__agree_args(check_io_args(A, full, ld, root, "stargemm_matrix_scatter"),
					io_fingerprint(A, root), "stargemm_matrix_scatter",
					"a matrix or root")))
		return ret;
	/* The array is only read: the views on it are used as send buffers. */
	A->written = 1;
	if (A->pack)
		return exchange_packs(A, (void *)full, ld, root, 1);
	return exchange(A, (void *)full, ld, root, 1);
}

int stargemm_matrix_gather(const struct stargemm_matrix *A, void *full, int64_t ld,
			   int root)
{
	int ret;

	stargemm__clear_error();
	/* Agreed: a bad array or ld is the root's alone, and the others would wait. */
	if ((ret = stargemm__agree_args(check_io_args(A, full, ld, root, "stargemm_matrix_gather"),
					io_fingerprint(A, root), "stargemm_matrix_gather",
					"a matrix or root")))
		return ret;
	stargemm__zero_if_unwritten(A);
	if (A->pack)
		return exchange_packs(A, full, ld, root, 0);
	return exchange(A, full, ld, root, 0);
}
