/*
 * matrix.c — the tiled, distributed matrix descriptor.
 *
 * A matrix is a grid of mt x nt tiles given by row and column offset arrays (so a
 * regular tiling with a ragged last tile and an irregular tiling are one and the same
 * object). Tile (i, j) lives on grid process (i mod P, j mod Q) (2D block-cyclic, or
 * the distribution's processes), which is rank p Q + q unless the distribution maps
 * the grid's processes to ranks in another order (src/distribution.c); each tile is a
 * StarPU matrix handle registered with StarPU-MPI under its owner and a
 * unique tag (with GPUs, of the device pool's interface: a matrix whose GPU buffers
 * come from one allocation per GPU, src/pool.c). The owner allocates the tile; the
 * other ranks register a handle without storage that StarPU-MPI fills when a task
 * needs the tile there. With a disk node or
 * a RAM limit, the owner registers without storage too: StarPU then allocates the tile
 * on first write and may evict it to disk.
 *
 * A block-sparse matrix is the same descriptor with a pattern: only its present tiles
 * get a handle, storage and a place in the tasks; the others are zero and cost nothing.
 * With small tiles, its present tiles are packed several per handle instead
 * (src/pack.c): one handle, owner and tag per pack, its buffer allocated by StarPU
 * (with GPUs, through the device pool; with a disk node evicted to disk as a tile's
 * is).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "worklist.h"

static int check_grid(int P, int Q, const char *fn)
{
	if (P <= 0 || Q <= 0)
		return stargemm__error(-EINVAL, "%s: the process grid must be positive, got "
				       "P=%d Q=%d", fn, P, Q);
	if ((int64_t)P * Q != stargemm_nranks())
		return stargemm__error(-EINVAL, "%s: the process grid P x Q = %d x %d = %lld "
				       "does not match the number of MPI processes (%d)", fn,
				       P, Q, (long long)P * Q, stargemm_nranks());
	return 0;
}

static int64_t *offsets_from_sizes(int64_t count, const int64_t *sizes)
{
	int64_t *off = malloc((size_t)(count + 1) * sizeof(*off));

	if (!off)
		return NULL;
	off[0] = 0;
	for (int64_t i = 0; i < count; i++)
		off[i + 1] = off[i] + sizes[i];
	return off;
}

static int check_sizes(int64_t count, const int64_t *sizes, const char *what,
		       const char *fn, int64_t *total)
{
	if (count <= 0)
		return stargemm__error(-EINVAL, "%s: the number of tile %ss must be > 0, got "
				       "%" PRId64, fn, what, count);
	if (!sizes)
		return stargemm__error(-EINVAL, "%s: the tile %s sizes array is NULL", fn, what);
	*total = 0;
	for (int64_t i = 0; i < count; i++) {
		if (sizes[i] <= 0)
			return stargemm__error(-EINVAL, "%s: tile %s %" PRId64 " has size %" PRId64
					       "; tile sizes must be > 0", fn, what, i, sizes[i]);
		if (__builtin_add_overflow(*total, sizes[i], total))
			return stargemm__error(-EOVERFLOW, "%s: the tile %s sizes add up to more "
					       "than 2^63 - 1 elements (at tile %" PRId64 ")", fn,
					       what, i);
	}
	return 0;
}

int stargemm_matrix_owner(const struct stargemm_matrix *A, int64_t i, int64_t j)
{
	return stargemm__grid_rank(&A->grid, A->rows.proc[i], A->cols.proc[j]);
}

/* Register tile (i, j): in a user's array when A is in place, at local offsets
 * (@p lrow[i], @p lcol[j]); else in storage allocated here, or StarPU's. */
static int register_tile(struct stargemm_matrix *A, int64_t i, int64_t j,
			 const int64_t *lrow, const int64_t *lcol)
{
	int64_t idx = stargemm__tile_index(A, i, j);
	int64_t rows = stargemm_matrix_tile_rows(A, i), cols = stargemm_matrix_tile_cols(A, j);
	int owner = stargemm_matrix_owner(A, i, j);
	starpu_data_handle_t h;

	if (A->gen) {   /* no storage anywhere: each rank makes its own (src/generate.c) */
		stargemm__tile_register(&h, -1, 0, (uint32_t)rows, (uint32_t)rows, (uint32_t)cols,
					A->elem_size);
		starpu_mpi_data_register(h, A->tag_base + idx, STARPU_MPI_PER_NODE);
		A->tiles[idx] = h;
		return 0;
	}
	if (owner == stargemm_rank() && A->local.base) {
		char *p = (char *)A->local.base +
			  (size_t)(lrow[i] + lcol[j] * A->local.ld) * A->elem_size;

		stargemm__tile_register(&h, STARPU_MAIN_RAM, (uintptr_t)p, (uint32_t)A->local.ld,
					(uint32_t)rows, (uint32_t)cols, A->elem_size);
	} else if (owner == stargemm_rank() && !stargemm__managed_storage()) {
		void *p = NULL;

		/* with GPUs pinned, from the pinned host pool (src/hostpool.c); in SimGrid
		 * mode folded: all tiles share a few physical pages, so that simulated
		 * matrices of any size fit (kernels do not run there) */
		if (stargemm__host_alloc(&p, stargemm__tile_bytes(A, i, j)) != 0)
			return stargemm__error(-ENOMEM, "stargemm_matrix_create: cannot allocate "
					       "tile (%" PRId64 ", %" PRId64 ") of %" PRId64 " x %"
					       PRId64 " elements of %zu bytes", i, j, rows, cols,
					       A->elem_size);
		A->storage[idx] = p;
		stargemm__tile_register(&h, STARPU_MAIN_RAM, (uintptr_t)p, (uint32_t)rows,
					(uint32_t)rows, (uint32_t)cols, A->elem_size);
	} else {
		stargemm__tile_register(&h, -1, 0, (uint32_t)rows, (uint32_t)rows, (uint32_t)cols,
					A->elem_size);
	}
	starpu_mpi_data_register(h, A->tag_base + idx, owner);
	A->tiles[idx] = h;
	return 0;
}

/* The pattern of a block-sparse matrix from its list of present tiles, checked. */
static int set_pattern(struct stargemm_matrix *A, int64_t npresent, const int64_t *present,
		       const char *fn)
{
	if (npresent < 0)
		return stargemm__error(-EINVAL, "%s: the number of present tiles must be >= 0, "
				       "got %" PRId64, fn, npresent);
	if (npresent > 0 && !present)
		return stargemm__error(-EINVAL, "%s: %" PRId64 " present tiles but the list is "
				       "NULL", fn, npresent);
	A->present = calloc((size_t)(A->mt * A->nt), 1);
	if (!A->present)
		return stargemm__error(-ENOMEM, "%s: out of memory for the pattern of %" PRId64
				       " x %" PRId64 " tiles", fn, A->mt, A->nt);
	for (int64_t e = 0; e < npresent; e++) {
		int64_t i = present[2 * e], j = present[2 * e + 1];

		if (i < 0 || i >= A->mt || j < 0 || j >= A->nt)
			return stargemm__error(-EINVAL, "%s: present tile %" PRId64 " is (%" PRId64
					       ", %" PRId64 "), outside the %" PRId64 " x %" PRId64
					       " tiles of the matrix", fn, e, i, j, A->mt, A->nt);
		if (A->present[stargemm__tile_index(A, i, j)])
			return stargemm__error(-EINVAL, "%s: tile (%" PRId64 ", %" PRId64 ") is "
					       "listed twice (entry %" PRId64 ")", fn, i, j, e);
		A->present[stargemm__tile_index(A, i, j)] = 1;
	}
	A->npresent = npresent;
	return 0;
}

/* Register pack (I, J) of a packed matrix: one handle (a matrix of E x 1 elements)
 * for its present tiles (src/pack.c). StarPU allocates it on its owner at the first
 * write: matrices made one after the other (a symbolic product per iteration) then
 * reuse the memory the previous one freed, where buffers allocated here with
 * starpu_malloc() touched fresh pages each time, which made creating and zeroing C
 * far slower (doc/design.md, Decisions, "Packs below a mean extent of 64"). */
static int register_pack(struct stargemm_matrix *A, int64_t I, int64_t J)
{
	const struct stargemm__packing *pk = A->pack;
	int64_t idx = I + J * pk->gmt, elems = pk->elems[idx];
	int owner = stargemm__pack_owner(A, I, J);
	starpu_data_handle_t h;

	if (elems == 0)
		return 0;
	if (elems > UINT32_MAX)
		return stargemm__error(-EOVERFLOW, "stargemm_matrix_create: pack (%" PRId64 ", %"
				       PRId64 ") of %" PRId64 " elements exceeds StarPU's 32-bit "
				       "dimensions; lower STARGEMM_PACK_EXTENT", I, J, elems);
	if (stargemm_nranks() > 1 &&
	    stargemm__check_message(elems, A->elem_size, "stargemm_matrix_create", "a pack"))
		return -EOVERFLOW;
	stargemm__tile_register(&h, -1, 0, (uint32_t)elems, (uint32_t)elems, 1, A->elem_size);
	starpu_mpi_data_register(h, A->tag_base + idx, owner);
	A->packs[idx] = h;
	return 0;
}

/* Packs move whole, so the memory they move into must hold many of them: a group is
 * cut at most sqrt(M / (64 e)) elements a side, rounded down to a power of two (e the
 * element size, M the memory packs move into: the RAM budget with managed storage, the
 * first GPU's memory with CUDA workers), so that 64 of the largest packs fit. An
 * out-of-core plan over packs needs room for several (lookahead + 1 chunks of a block's
 * A and B packs, and its C packs; 7 at the least): with 1 MiB of RAM, groups of 256
 * elements (583 KB packs of tiles of 30) left room for one. The smallest over the
 * ranks, so that every rank packs alike: one sum of a histogram of the powers of two
 * (collective, of a fixed size: no rank can leave before it). */
static int pack_extent_cap(size_t elem, double *most)
{
	uint64_t in[64] = { 0 }, out[64], mine = UINT64_MAX;
	starpu_ssize_t mem;
	int ret;

	if (stargemm__managed_storage() && (mem = starpu_memory_get_total(STARPU_MAIN_RAM)) > 0)
		mine = (uint64_t)mem;
	if (starpu_cuda_worker_get_count() > 0 &&
	    (mem = starpu_memory_get_total(stargemm__device_node(0))) > 0 && (uint64_t)mem < mine)
		mine = (uint64_t)mem;
	if (mine < UINT64_MAX) {
		double side = floor(sqrt((double)mine / (64.0 * (double)elem)));

		in[side >= 2.0 ? (int)fmin(floor(log2(side)), 62.0) : 0] = 1;
	}
	ret = stargemm__sum_u64(in, out, 64);
	*most = INFINITY;
	for (int b = 0; b < 64 && !ret; b++)
		if (out[b]) {
			*most = ldexp(1.0, b);
			break;
		}
	return ret;
}

/* A block-sparse matrix of small tiles: its pack layout (A->pack stays NULL when no
 * axis is packed), and the processes of its tile rows and columns when the
 * distribution gives none (packs dealt cyclically; *rows, *cols to free). */
static int plan_packs(struct stargemm_matrix *A, const struct stargemm_distribution *dist,
		      int **rows, int **cols, const char *fn)
{
	struct stargemm__pack_request q = { A->mt, A->nt, A->row_off, A->col_off, A->present,
					    dist->row_proc, dist->col_proc, 0, 0 };
	double most;
	/* the collective first: a rank with bad settings still takes part */
	int ret = pack_extent_cap(A->elem_size, &most);

	*rows = *cols = NULL;
	if (ret || (ret = stargemm__pack_settings(&q.below, &q.extent)))
		return ret;
	q.extent = q.extent < most ? q.extent : most;
	if (stargemm__pack_layout(&q, &A->pack))
		return stargemm__error(-ENOMEM, "%s: out of memory for the packs of %" PRId64
				       " x %" PRId64 " tiles", fn, A->mt, A->nt);
	if (!A->pack)
		return 0;
	*rows = dist->row_proc ? NULL : malloc((size_t)A->mt * sizeof(int));
	*cols = dist->col_proc ? NULL : malloc((size_t)A->nt * sizeof(int));
	A->packs = calloc((size_t)(A->pack->gmt * A->pack->gnt), sizeof(*A->packs));
	if ((!dist->row_proc && !*rows) || (!dist->col_proc && !*cols) || !A->packs)
		return stargemm__error(-ENOMEM, "%s: out of memory for the packs", fn);
	if (*rows)
		stargemm__pack_cyclic(A->pack->row_group, A->mt, A->grid.P, *rows);
	if (*cols)
		stargemm__pack_cyclic(A->pack->col_group, A->nt, A->grid.Q, *cols);
	return 0;
}

/* The distribution of @p A's tiles (packs first: their layout may set it). */
static int distribute(struct stargemm_matrix *A, const struct stargemm_distribution *dist,
		      int sparse, const char *fn)
{
	int *rows = NULL, *cols = NULL, ret = 0;
	char what[2][96];

	snprintf(what[0], sizeof(what[0]), "%s: row_proc", fn);
	snprintf(what[1], sizeof(what[1]), "%s: col_proc", fn);
	/* Packs are multiplied by batches (codelets/batch.c), in core or out of core over
	 * packs (src/packlist.c), on CPUs or GPUs. */
	if (sparse == 1)
		ret = plan_packs(A, dist, &rows, &cols, fn);
	if (!ret)
		ret = stargemm__axis_init(&A->rows, A->mt, A->grid.P, rows ? rows : dist->row_proc,
					  what[0]);
	if (!ret)
		ret = stargemm__axis_init(&A->cols, A->nt, A->grid.Q, cols ? cols : dist->col_proc,
					  what[1]);
	free(rows);
	free(cols);
	return ret;
}

/* Count this rank's tiles against the managed storage (src/storage.c); tiles allocated
 * here are reserved in the pinned host pool at once (src/hostpool.c), so that their
 * slab is pinned at their total size. */
static int reserve_storage(struct stargemm_matrix *A, const char *fn)
{
	int64_t bytes = 0, tiles = 0;
	int ret;

	/* Tiles in a user's array are the user's memory, not the library's; generated
	 * tiles are transient, as received ones. */
	for (int64_t j = 0; !A->pack && !A->local.base && !A->gen && j < A->nt; j++)
		for (int64_t i = 0; i < A->mt; i++)
			if (stargemm_matrix_tile_present(A, i, j) &&
			    stargemm_matrix_owner(A, i, j) == stargemm_rank()) {
				bytes += (int64_t)stargemm__tile_bytes(A, i, j);
				tiles++;
			}
	for (int64_t J = 0; A->pack && J < A->pack->gnt; J++)
		for (int64_t I = 0; I < A->pack->gmt; I++)
			if (stargemm__pack_owner(A, I, J) == stargemm_rank())
				bytes += A->pack->elems[I + J * A->pack->gmt] *
					 (int64_t)A->elem_size;
	if ((ret = stargemm__storage_reserve(bytes, fn)) == 0)
		A->stored_bytes = bytes;
	if (ret == 0 && tiles > 0 && !stargemm__managed_storage())
		stargemm__host_reserve((size_t)bytes, tiles);
	return ret;
}

/* The offset of each tile of an axis (tile offsets @p off) in its process's local
 * array: the process's tiles one after the other, in order, from @p start for this
 * process (@p me: its process row or column in the grid; its tiles are the only ones
 * registered in place). NULL: out of memory. */
static int64_t *local_offsets(const int64_t *off, const struct stargemm__axis *ax, int me,
			      int64_t start)
{
	int64_t *local = malloc((size_t)(ax->n > 0 ? ax->n : 1) * sizeof(*local));
	int64_t *next = calloc((size_t)ax->nproc, sizeof(*next));

	if (next)
		next[me] = start;
	for (int64_t t = 0; local && next && t < ax->n; t++) {
		local[t] = next[ax->proc[t]];
		next[ax->proc[t]] += off[t + 1] - off[t];
	}
	if (!next) {
		free(local);
		local = NULL;
	}
	free(next);
	return local;
}

/* Handles (and storage) for every present tile, or every non-empty pack. */
static int register_all(struct stargemm_matrix *A, const char *fn)
{
	int64_t *lrow = NULL, *lcol = NULL;
	int ret = 0, p, q;

	if (A->pack) {
		A->tag_count = A->pack->gmt * A->pack->gnt;
		A->tag_base = stargemm__reserve_tags(A->tag_count);
		A->tag_comm = stargemm__comm();
		for (int64_t J = 0; J < A->pack->gnt && !ret; J++)
			for (int64_t I = 0; I < A->pack->gmt && !ret; I++)
				ret = register_pack(A, I, J);
		return ret;
	}
	A->tiles = calloc((size_t)(A->mt * A->nt), sizeof(*A->tiles));
	A->storage = calloc((size_t)(A->mt * A->nt), sizeof(*A->storage));
	if (!A->tiles || !A->storage)
		return stargemm__error(-ENOMEM, "%s: out of memory for %" PRId64 " x %" PRId64
				       " tile descriptors", fn, A->mt, A->nt);
	A->tag_count = A->mt * A->nt;
	A->tag_base = stargemm__reserve_tags(A->tag_count);
	A->tag_comm = stargemm__comm();
	stargemm__grid_coords(&A->grid, stargemm_rank(), &p, &q);
	if (A->local.base &&
	    (!(lrow = local_offsets(A->row_off, &A->rows, p, A->local.row0)) ||
	     !(lcol = local_offsets(A->col_off, &A->cols, q, A->local.col0))))
		ret = stargemm__error(-ENOMEM, "%s: out of memory", fn);
	for (int64_t j = 0; j < A->nt && !ret; j++)
		for (int64_t i = 0; i < A->mt && !ret; i++)
			if (stargemm__present(A, i, j))
				ret = register_tile(A, i, j, lrow, lcol);
	free(lrow);
	free(lcol);
	return ret;
}

/* The zeros of a packed matrix never written: StarPU allocates a pack at its first
 * write, and a pack read before any write (a gather or a product before the fill)
 * stopped StarPU with an assertion ("handle is not initialized"). One task per pack,
 * on its owner. */
static int zero_packs(struct stargemm_matrix *A, const char *fn)
{
	for (int64_t idx = 0; idx < A->pack->gmt * A->pack->gnt; idx++) {
		int ret;

		if (!A->packs[idx])
			continue;
		ret = starpu_mpi_task_insert(stargemm__comm(), &stargemm_zero_cl, STARPU_W,
					     A->packs[idx], 0);
		if (ret)
			return stargemm__error(-EIO, "%s: task submission failed for the zeros of "
					       "pack %" PRId64 " (%d)", fn, idx, ret);
	}
	return 0;
}

void stargemm__zero_if_unwritten(const struct stargemm_matrix *A)
{
	/* The flag records a fact about the values, not about the descriptor that the
	 * reading calls take as const. */
	struct stargemm_matrix *X = (struct stargemm_matrix *)A;
	char msg[160];

	if (A->written)
		return;
	X->written = 1;
	if (A->pack) {
		if (zero_packs(X, "the zeros of a matrix never written"))
			stargemm__task_failed(stargemm_last_error());
		return;
	}
	for (int64_t j = 0; j < A->nt; j++)
		for (int64_t i = 0; i < A->mt; i++) {
			int ret;

			if (!stargemm__present(A, i, j))
				continue;
			ret = starpu_mpi_task_insert(stargemm__comm(), &stargemm_zero_cl,
						     STARPU_W, stargemm__tile(A, i, j), 0);
			if (!ret)
				continue;
			/* Zeros are written by each tile's owner alone: no other rank waits
			 * for the ones not inserted. */
			snprintf(msg, sizeof(msg), "the zeros of a matrix never written: task "
				 "submission failed for tile (%" PRId64 ", %" PRId64 ") (%d)", i,
				 j, ret);
			stargemm__task_failed(msg);
			return;
		}
}

/* What a constructor asks for: an irregular tiling, dense (sparse = 0) or with the
 * pattern of the npresent tiles listed in present (sparse = 1; 2: never packed), of
 * elements of a type ('d' for the constructors without one). */
struct shape {
	int64_t mt;
	const int64_t *row_sizes;
	int64_t nt;
	const int64_t *col_sizes;
	int sparse;
	int64_t npresent;
	const int64_t *present;
	int type;
};

/* A generated matrix's generator (stargemm_matrix_create_generated()). */
struct generation {
	stargemm_generate_fn fn;
	void *arg;
};

/* The leading dimension of the user's array under an in-place matrix, as the tiles'
 * (src/sizes.h): within BLAS's int, and within MPI's stride when tiles may move. */
static int check_local_ld(const struct stargemm__local *local, const int64_t *row_sizes,
			  int64_t mt, size_t elem, const char *fn)
{
	int64_t tallest = 0;

	if (!local || !local->base)
		return 0;
	for (int64_t i = 0; i < mt; i++)
		tallest = row_sizes[i] > tallest ? row_sizes[i] : tallest;
	return stargemm__check_tile(tallest, 1, local->ld, elem, stargemm_nranks() > 1, fn,
				    "the local array");
}

/* The descriptor of @p sh distributed by @p dist, its tiles registered (in place in
 * @p local when not NULL; generated by @p gen when not NULL). */
static int create_with(struct stargemm_matrix **out, const struct shape *sh,
		       const struct stargemm_distribution *dist,
		       const struct stargemm__local *local, const struct generation *gen,
		       const char *fn)
{
	const int64_t mt = sh->mt, nt = sh->nt, *row_sizes = sh->row_sizes,
		      *col_sizes = sh->col_sizes;
	const struct stargemm__element *type = stargemm__element(sh->type);
	struct stargemm_matrix *A;
	int64_t max_rows, max_cols, m, n;
	int P, Q, ret;

	stargemm__clear_error();
	if (!out)
		return stargemm__error(-EINVAL, "%s: the output pointer is NULL", fn);
	*out = NULL;
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "%s: call stargemm_init() first", fn);
	if (!type)
		return stargemm__error(-EINVAL, "%s: unknown element type %d (expected "
				       "STARGEMM_S, _D, _C or _Z)", fn, sh->type);
	if ((ret = check_sizes(mt, row_sizes, "row", fn, &m)) ||
	    (ret = check_sizes(nt, col_sizes, "column", fn, &n)))
		return ret;
	if (!dist)
		return stargemm__error(-EINVAL, "%s: the distribution is NULL", fn);
	P = dist->P;
	Q = dist->Q;
	if ((ret = check_grid(P, Q, fn)))
		return ret;
	if ((ret = stargemm__check_matrix_size(m, n, mt, nt, type->size, fn)))
		return ret;
	A = calloc(1, sizeof(*A));
	if (!A)
		return stargemm__error(-ENOMEM, "%s: out of memory", fn);
	A->mt = mt;
	A->nt = nt;
	A->session = stargemm__session();
	A->grid = (struct stargemm__grid){ P, Q, NULL, NULL };
	A->npresent = mt * nt;
	A->type = type;
	A->elem_size = type->size;
	if (local)
		A->local = *local;
	A->row_off = offsets_from_sizes(mt, row_sizes);
	A->col_off = offsets_from_sizes(nt, col_sizes);
	if (!A->row_off || !A->col_off) {
		stargemm_matrix_destroy(A);
		return stargemm__error(-ENOMEM, "%s: out of memory for %" PRId64 " x %" PRId64
				       " tile descriptors", fn, mt, nt);
	}
	/* Agreed: a failure here may be this rank's only (memory, an environment
	 * setting), and every rank must reserve the same tags below. */
	ret = check_local_ld(local, row_sizes, mt, type->size, fn);
	if (!ret)
		ret = stargemm__grid_init(&A->grid, P, Q, dist->grid, fn);
	if (gen && !ret)
		ret = stargemm__generator_new(A, gen->fn, gen->arg, fn);
	if (sh->sparse && !ret)
		ret = set_pattern(A, sh->npresent, sh->present, fn);
	if (!ret)
		ret = distribute(A, dist, sh->sparse, fn);
	if ((ret = stargemm__agree(ret))) {
		stargemm_matrix_destroy(A);
		return ret;
	}
	A->m = A->row_off[mt];
	A->n = A->col_off[nt];
	max_rows = stargemm__largest_tile(A->row_off, mt);
	max_cols = stargemm__largest_tile(A->col_off, nt);
	if ((ret = stargemm__check_tile(max_rows, max_cols, max_rows, A->elem_size,
					stargemm_nranks() > 1, fn, "its largest tile"))) {
		stargemm_matrix_destroy(A);
		return ret;
	}
	ret = reserve_storage(A, fn);
	if ((ret = stargemm__agree(ret ? ret : register_all(A, fn)))) {
		stargemm_matrix_destroy(A);
		return ret;
	}
	/* Tiles and packs never written read as zeros: stargemm__zero_if_unwritten()
	 * writes them before the first read, and a product with beta = 0 only writes C. */
	A->written = local != NULL || A->gen != NULL;
	*out = A;
	return 0;
}

static int create(struct stargemm_matrix **out, const struct shape *sh,
		  const struct stargemm_distribution *dist,
		  const struct stargemm__local *local, const char *fn)
{
	return create_with(out, sh, dist, local, NULL, fn);
}

int stargemm_matrix_create_irregular(struct stargemm_matrix **out, int64_t mt,
				     const int64_t *row_sizes, int64_t nt,
				     const int64_t *col_sizes, int P, int Q)
{
	struct stargemm_distribution cyclic = { P, Q, NULL, NULL, NULL };
	struct shape sh = { mt, row_sizes, nt, col_sizes, 0, 0, NULL, 'd' };

	return create(out, &sh, &cyclic, NULL, "stargemm_matrix_create");
}

int stargemm_matrix_create_sparse(struct stargemm_matrix **out, int64_t mt,
				  const int64_t *row_sizes, int64_t nt, const int64_t *col_sizes,
				  int64_t npresent, const int64_t *present, int P, int Q)
{
	struct stargemm_distribution cyclic = { P, Q, NULL, NULL, NULL };
	struct shape sh = { mt, row_sizes, nt, col_sizes, 1, npresent, present, 'd' };

	return create(out, &sh, &cyclic, NULL, "stargemm_matrix_create_sparse");
}

int stargemm_matrix_create_distributed(struct stargemm_matrix **out, int64_t mt,
				       const int64_t *row_sizes, int64_t nt,
				       const int64_t *col_sizes, int64_t npresent,
				       const int64_t *present,
				       const struct stargemm_distribution *dist)
{
	struct shape sh = { mt, row_sizes, nt, col_sizes, npresent >= 0, npresent, present,
			    'd' };

	return create(out, &sh, dist, NULL, "stargemm_matrix_create_distributed");
}

int stargemm_matrix_create_distributed_type(struct stargemm_matrix **out, stargemm_type type,
					    int64_t mt, const int64_t *row_sizes, int64_t nt,
					    const int64_t *col_sizes, int64_t npresent,
					    const int64_t *present,
					    const struct stargemm_distribution *dist)
{
	struct shape sh = { mt, row_sizes, nt, col_sizes, npresent >= 0, npresent, present,
			    (int)type };

	return create(out, &sh, dist, NULL, "stargemm_matrix_create_distributed_type");
}

int stargemm_matrix_create_generated(struct stargemm_matrix **out, stargemm_type type,
				     int64_t mt, const int64_t *row_sizes, int64_t nt,
				     const int64_t *col_sizes, int64_t npresent,
				     const int64_t *present,
				     const struct stargemm_distribution *dist,
				     stargemm_generate_fn generate, void *arg)
{
	static const char fn[] = "stargemm_matrix_create_generated";
	struct shape sh = { mt, row_sizes, nt, col_sizes, npresent >= 0 ? 2 : 0, npresent,
			    present, (int)type };
	struct generation gen = { generate, arg };

	if (out)
		*out = NULL;
	if (!generate)
		return stargemm__error(-EINVAL, "%s: the generator is NULL", fn);
	return create_with(out, &sh, dist, NULL, &gen, fn);
}

int stargemm__matrix_create_pattern(struct stargemm_matrix **out, int type, int64_t mt,
				    const int64_t *row_sizes, int64_t nt,
				    const int64_t *col_sizes, int64_t npresent,
				    const int64_t *present,
				    const struct stargemm_distribution *dist, int packable,
				    const char *fn)
{
	struct shape sh = { mt, row_sizes, nt, col_sizes, npresent < 0 ? 0 : packable ? 1 : 2,
			    npresent, present, type };

	return create(out, &sh, dist, NULL, fn);
}

int stargemm__matrix_create_like(struct stargemm_matrix **out, const struct stargemm_matrix *S,
				 int64_t npresent, const int64_t *present, int packable,
				 const char *fn)
{
	struct stargemm_distribution dist = { S->grid.P, S->grid.Q, S->rows.proc, S->cols.proc,
					      S->grid.rank };
	int64_t *rows = malloc((size_t)(S->mt > 0 ? S->mt : 1) * sizeof(*rows));
	int64_t *cols = malloc((size_t)(S->nt > 0 ? S->nt : 1) * sizeof(*cols));
	int ret;

	for (int64_t i = 0; rows && i < S->mt; i++)
		rows[i] = stargemm__rows_of(S, i);
	for (int64_t j = 0; cols && j < S->nt; j++)
		cols[j] = stargemm__cols_of(S, j);
	if (!rows || !cols)
		ret = stargemm__error(-ENOMEM, "%s: out of memory for a %" PRId64 " x %" PRId64
				      " tiling", fn, S->mt, S->nt);
	else
		ret = stargemm__matrix_create_pattern(out, S->type->letter, S->mt, rows, S->nt,
						      cols, npresent, present, &dist, packable, fn);
	free(rows);
	free(cols);
	return ret;
}

int stargemm__matrix_create_tiled_in_place(struct stargemm_matrix **out, int type, int64_t mt,
					   const int64_t *row_sizes, int64_t nt,
					   const int64_t *col_sizes,
					   const struct stargemm_distribution *dist,
					   const struct stargemm__local *local, const char *fn)
{
	struct shape sh = { mt, row_sizes, nt, col_sizes, 0, 0, NULL, type };

	return create(out, &sh, dist, local, fn);
}

int64_t stargemm_matrix_present_count(const struct stargemm_matrix *A)
{
	return A ? A->npresent : 0;
}

int stargemm_matrix_tile_present(const struct stargemm_matrix *A, int64_t i, int64_t j)
{
	return A && i >= 0 && i < A->mt && j >= 0 && j < A->nt && stargemm__present(A, i, j);
}

/* The sizes of the tiles of @p b elements (the last one ragged) of an axis of @p n
 * elements, their number in @p count; NULL: out of memory. */
static int64_t *regular_sizes(int64_t n, int64_t b, int64_t *count)
{
	int64_t *sizes;

	*count = n / b + (n % b != 0);
	sizes = malloc((size_t)(*count > 0 ? *count : 1) * sizeof(*sizes));
	for (int64_t i = 0; sizes && i < *count; i++)
		sizes[i] = n - i * b >= b ? b : n - i * b;
	return sizes;
}

int stargemm_matrix_create(struct stargemm_matrix **out, int64_t m, int64_t n,
			   int64_t mb, int64_t nb, int P, int Q)
{
	return stargemm_matrix_create_type(out, STARGEMM_D, m, n, mb, nb, P, Q);
}

int stargemm_matrix_create_type(struct stargemm_matrix **out, stargemm_type type, int64_t m,
				int64_t n, int64_t mb, int64_t nb, int P, int Q)
{
	static const char fn[] = "stargemm_matrix_create";
	struct stargemm_distribution cyclic = { P, Q, NULL, NULL, NULL };
	struct shape sh = { 0 };
	int64_t mt, nt, *rows, *cols;
	int ret;

	stargemm__clear_error();
	if (!out)
		return stargemm__error(-EINVAL, "%s: the output pointer is NULL", fn);
	*out = NULL;
	if (m <= 0 || n <= 0)
		return stargemm__error(-EINVAL, "%s: matrix sizes must be > 0, got M=%" PRId64
				       " N=%" PRId64, fn, m, n);
	if (mb <= 0 || nb <= 0)
		return stargemm__error(-EINVAL, "%s: tile sizes must be > 0, got mb=%" PRId64
				       " nb=%" PRId64, fn, mb, nb);
	if ((ret = stargemm__check_matrix_size(m, n, m / mb + (m % mb != 0),
					       n / nb + (n % nb != 0), stargemm_type_size(type)
					       ? stargemm_type_size(type) : 1, fn)))
		return ret;
	rows = regular_sizes(m, mb, &mt);
	cols = regular_sizes(n, nb, &nt);
	if (!rows || !cols) {
		free(rows);
		free(cols);
		return stargemm__error(-ENOMEM, "%s: out of memory", fn);
	}
	sh = (struct shape){ mt, rows, nt, cols, 0, 0, NULL, (int)type };
	ret = create(out, &sh, &cyclic, NULL, fn);
	free(rows);
	free(cols);
	return ret;
}

void stargemm__sync_in_place(const struct stargemm_matrix *A)
{
	if (!A || !A->local.base || stargemm_ncuda_workers() == 0)
		return;
	for (int64_t j = 0; j < A->nt; j++)
		for (int64_t i = 0; i < A->mt; i++) {
			starpu_data_handle_t h = stargemm__tile(A, i, j);

			if (stargemm_matrix_owner(A, i, j) != stargemm_rank() ||
			    starpu_data_acquire_on_node(h, STARPU_MAIN_RAM, STARPU_R))
				continue;
			starpu_data_release_on_node(h, STARPU_MAIN_RAM);
		}
}

/* The deferred bring-back of an in-place matrix written on GPUs (src/wait.h). */
static void sync_deferred(void *A)
{
	stargemm__sync_in_place(A);
}

void stargemm__written_in_place(const struct stargemm_matrix *A)
{
	if (A->local.base && starpu_cuda_worker_get_count() > 0)
		stargemm__defer_to_wait(sync_deferred, (void *)A);
}

void stargemm__forget_in_place(const struct stargemm_matrix *A)
{
	stargemm__drop_deferred(sync_deferred, A);
}

static void free_tile(struct stargemm_matrix *A, int64_t idx)
{
	stargemm__host_free(A->storage[idx], stargemm__tile_bytes(A, idx % A->mt, idx / A->mt));
}

/* The packs' handles (StarPU frees their buffers). */
static void unregister_packs(struct stargemm_matrix *A)
{
	int64_t npacks = A->pack ? A->pack->gmt * A->pack->gnt : 0;

	for (int64_t idx = 0; A->packs && idx < npacks; idx++)
		if (A->packs[idx])
			starpu_data_unregister(A->packs[idx]);
}

int stargemm__matrix_drop_tile(struct stargemm_matrix *A, int64_t i, int64_t j)
{
	int64_t idx = stargemm__tile_index(A, i, j);

	if (!A->present) {   /* a dense matrix becomes block-sparse */
		A->present = malloc((size_t)(A->mt * A->nt));
		if (!A->present)
			return stargemm__error(-ENOMEM, "stargemm: out of memory for the pattern "
					       "of a %" PRId64 " x %" PRId64 " tile matrix", A->mt,
					       A->nt);
		memset(A->present, 1, (size_t)(A->mt * A->nt));
		A->npresent = A->mt * A->nt;
	}
	if (!A->present[idx])
		return 0;
	if (A->pack) {   /* its place in the pack stays, unused */
		A->present[idx] = 0;
		A->npresent--;
		return 0;
	}
	/* Its values are discarded: no copy back to the home node. */
	starpu_data_unregister_no_coherency(A->tiles[idx]);
	A->tiles[idx] = NULL;
	if (A->gen)
		A->gen->made[idx] = 0;
	else if (stargemm_matrix_owner(A, i, j) == stargemm_rank()) {
		int64_t bytes = (int64_t)stargemm__tile_bytes(A, i, j);

		stargemm__storage_release(bytes);
		A->stored_bytes -= bytes;
	}
	if (A->storage[idx]) {
		free_tile(A, idx);
		A->storage[idx] = NULL;
	}
	A->present[idx] = 0;
	A->npresent--;
	return 0;
}

/* The descriptor's own memory, for a matrix whose runtime has stopped. */
static void free_descriptor(struct stargemm_matrix *A)
{
	free(A->tiles);
	free(A->storage);
	free(A->present);
	free(A->row_off);
	free(A->col_off);
	free(A->packs);
	stargemm__pack_free(A->pack);
	stargemm__axis_free(&A->rows);
	stargemm__axis_free(&A->cols);
	stargemm__grid_free(&A->grid);
	stargemm__generator_free(A);
	free(A);
}

void stargemm_matrix_destroy(struct stargemm_matrix *A)
{
	if (!A)
		return;
	if (A->session != stargemm__session()) {
		/* StarPU stopped since (stargemm_finalize()): its handles are gone with it. */
		stargemm__error(-EINVAL, "stargemm_matrix_destroy: the matrix outlived the "
				"stargemm_finalize() of its runtime; only its descriptor is freed "
				"(its tiles' memory went with StarPU)");
		free_descriptor(A);
		return;
	}
	stargemm__forget_in_place(A);   /* its unregistration brings its tiles back */
	for (int64_t idx = 0; A->tiles && idx < A->mt * A->nt; idx++)
		if (A->tiles[idx])
			starpu_data_unregister(A->tiles[idx]);
	for (int64_t idx = 0; A->storage && idx < A->mt * A->nt; idx++)
		if (A->storage[idx])
			free_tile(A, idx);
	unregister_packs(A);
	stargemm__storage_release(A->stored_bytes);
	/* Every handle is unregistered: no message with its tags is left on this rank. */
	if (A->tag_count && A->tag_comm == stargemm__comm())
		stargemm__release_tags(A->tag_base, A->tag_count);
	free_descriptor(A);
}

stargemm_type stargemm_matrix_type(const struct stargemm_matrix *A)
{
	return A ? (stargemm_type)A->type->letter : STARGEMM_D;
}

size_t stargemm_type_size(stargemm_type type)
{
	const struct stargemm__element *e = stargemm__element(type);

	return e ? e->size : 0;
}

int64_t stargemm_matrix_m(const struct stargemm_matrix *A)
{
	return A->m;
}

int64_t stargemm_matrix_n(const struct stargemm_matrix *A)
{
	return A->n;
}

int64_t stargemm_matrix_mt(const struct stargemm_matrix *A)
{
	return A->mt;
}

int64_t stargemm_matrix_nt(const struct stargemm_matrix *A)
{
	return A->nt;
}

int64_t stargemm_matrix_tile_rows(const struct stargemm_matrix *A, int64_t i)
{
	return A->row_off[i + 1] - A->row_off[i];
}

int64_t stargemm_matrix_tile_cols(const struct stargemm_matrix *A, int64_t j)
{
	return A->col_off[j + 1] - A->col_off[j];
}

int64_t stargemm_matrix_row_offset(const struct stargemm_matrix *A, int64_t i)
{
	return A->row_off[i];
}

int64_t stargemm_matrix_col_offset(const struct stargemm_matrix *A, int64_t j)
{
	return A->col_off[j];
}

int stargemm__check_matrix(const struct stargemm_matrix *A, const char *name)
{
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "call stargemm_init() first");
	if (!A)
		return stargemm__error(-EINVAL, "matrix %s is NULL", name);
	return 0;
}
