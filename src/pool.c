/*
 * pool.c — the device buffer pool: each GPU's tiles carved out of one allocation.
 *
 * Why: StarPU 1.3 gives a load a device buffer freed by another tile only when both
 * tiles have the same shape (memalloc.c: the data footprint must match; registering a
 * common allocsize does not change that). Otherwise, on a full GPU, it frees buffers
 * (cudaFree, which synchronises the device) and allocates one (cudaMalloc), on the GPU
 * worker's thread, which meanwhile gives its GPU no task. With the irregular tiles of
 * block-sparse products nearly every load does that (their simulated cost, and the
 * rates with and without the pool: doc/design.md, Decisions, "Device buffers from one
 * allocation per GPU").
 *
 * How: tiles are registered with a copy of StarPU's matrix interface whose allocate
 * and free methods, on a CUDA memory node, take and give back blocks of one slab per
 * node (src/arena.c) instead of calling cudaMalloc and cudaFree; on other nodes (host
 * memory, disk) they are the matrix interface's own, as is every other method, so
 * that codelets read the tiles as matrices (the interface structure, with its id
 * field, is the matrix one). The copy has an interface id of its own, as StarPU
 * requires: StarPU reuses a buffer only for a handle of the same interface id, so a
 * block of the slab never reaches a plain matrix handle, which would cudaFree it. For
 * an id it does not know StarPU-MPI would pack and unpack every transfer; the MPI
 * datatype it builds for a matrix is registered for this id instead (zero copy). Not
 * in SimGrid mode: StarPU-MPI 1.3 receives a message of a registered datatype that
 * arrives before its receive is posted as raw bytes and unpacks it with MPI_Unpack in
 * a callback on one of its threads (_starpu_mpi_early_data_cb()), which SMPI does not
 * run outside a rank: two simulated ranks with tiles of several shapes out of core
 * never ended. Simulated, the tiles are packed and unpacked (the transfer is simulated
 * the same way; doc/performance.md).
 *
 * StarPU's accounting of device memory is kept as the matrix interface keeps it
 * (through starpu_malloc_on_node() with STARPU_MALLOC_COUNT): a tile's allocation
 * counts its allocsize with starpu_memory_allocate() and returns -ENOMEM when StarPU's
 * budget refuses it, or when no free range of the slab holds the tile; StarPU then
 * evicts buffers (through the free method, which gives the bytes back to both) and
 * tries again. The slab itself is allocated without STARPU_MALLOC_COUNT.
 *
 * The slab is the node's budget (starpu_memory_get_total()), allocated by the first
 * tile's allocation. Where the device cannot give that much (on a real GPU StarPU's
 * CUDA allocator refuses more than 90% of the free memory, and its default budget is
 * 90% of the total), each try asks for 1/32 less; the part of the budget the slab
 * lacks is then counted as used, so that StarPU's budget is what the slab holds. The
 * slab is released when its last tile is freed: at the latest in starpu_shutdown(),
 * where each CUDA worker frees its node's buffers, before it destroys its device
 * context (drivers/cuda/driver_cuda.c); after starpu_shutdown() no StarPU node method
 * may be called. Buffers of destroyed matrices stay in StarPU's cache until evicted,
 * so the slab does not come and go between products.
 */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "internal.h"
#include "pool.h"

/* Tiles start on cudaMalloc's alignment. */
#define POOL_ALIGN 256
/* Each try at a slab asks for 1/SHRINK less than the one before. */
#define SHRINK 32

struct device_pool {
	starpu_pthread_mutex_t lock;
	int has_lock;             /* a CUDA node's pool: lock initialised */
	uintptr_t base;           /* the slab; 0: none */
	size_t bytes;             /* its size */
	size_t lacking;           /* the node's budget beyond the slab, counted as used */
	struct stargemm__arena arena;
};

static struct {
	int on;                   /* tiles are registered through the pool */
	struct device_pool nodes[STARPU_MAXNODES];
	struct starpu_data_interface_ops ops;
	int have_ops;             /* ops built (once per process: ids are never given back) */
} pool;

/* ---- slabs ---------------------------------------------------------------------- */

static void release_slab(struct device_pool *p, unsigned node)
{
	starpu_free_on_node_flags(node, p->base, p->bytes, 0);
	if (p->lacking)
		starpu_memory_deallocate(node, p->lacking);
	stargemm__arena_destroy(&p->arena);
	p->base = 0;
	p->bytes = p->lacking = 0;
}

/* The next size to try after a slab of @p bytes was refused (0: stop). */
static size_t smaller(size_t bytes)
{
	size_t step = bytes / SHRINK + POOL_ALIGN;

	return step < bytes ? bytes - step : 0;
}

/* The node's slab, as close to its budget as the device gives and at least @p need
 * bytes; -ENOMEM when there is none. Flags 0: not counted in StarPU's budget. */
static int create_slab(struct device_pool *p, unsigned node, size_t need)
{
	starpu_ssize_t total = starpu_memory_get_total(node);
	size_t bytes = total > 0 ? (size_t)total : 0;
	uintptr_t base = 0;

	while (bytes >= need && bytes > 0 &&
	       !(base = starpu_malloc_on_node_flags(node, bytes, 0)))
		bytes = smaller(bytes);
	if (!base)
		return -ENOMEM;
	if (stargemm__arena_init(&p->arena, bytes, POOL_ALIGN) != 0) {
		starpu_free_on_node_flags(node, base, bytes, 0);
		return -ENOMEM;
	}
	p->base = base;
	p->bytes = bytes;
	p->lacking = (size_t)total - bytes;
	if (p->lacking)
		starpu_memory_allocate(node, p->lacking, STARPU_MEMORY_OVERFLOW);
	return 0;
}

/* A block of @p size bytes of node @p node's slab (made if there is none). */
static int take(unsigned node, size_t size, uintptr_t *addr)
{
	struct device_pool *p = &pool.nodes[node];
	size_t off;
	int ret;

	starpu_pthread_mutex_lock(&p->lock);
	ret = p->base ? 0 : create_slab(p, node, size);
	if (ret == 0 && (ret = stargemm__arena_alloc(&p->arena, size, &off)) == 0)
		*addr = p->base + off;
	else if (p->base && p->arena.nblocks == 0)
		release_slab(p, node);
	starpu_pthread_mutex_unlock(&p->lock);
	return ret;
}

static void give_back(unsigned node, uintptr_t addr, size_t size)
{
	struct device_pool *p = &pool.nodes[node];
	int ret;

	starpu_pthread_mutex_lock(&p->lock);
	ret = p->base && addr >= p->base ? stargemm__arena_free(&p->arena, addr - p->base, size)
					 : -EINVAL;
	STARPU_ASSERT_MSG(ret == 0, "stargemm: device buffer %#lx of %zu bytes on memory node "
			  "%u is not a live block of its pool", (unsigned long)addr, size, node);
	if (p->arena.nblocks == 0)
		release_slab(p, node);
	starpu_pthread_mutex_unlock(&p->lock);
}

/* ---- the interface's methods ---------------------------------------------------- */

/* As the matrix interface allocates (a buffer of allocsize bytes, leading dimension
 * nx), from the pool on a CUDA node. */
static starpu_ssize_t tile_allocate(void *data_interface, unsigned node)
{
	struct starpu_matrix_interface *m = data_interface;
	size_t size = m->allocsize;
	uintptr_t addr;

	if (starpu_node_get_kind(node) != STARPU_CUDA_RAM)
		return starpu_interface_matrix_ops.allocate_data_on_node(data_interface, node);
	if (starpu_memory_allocate(node, size, 0) != 0)
		return -ENOMEM;
	if (take(node, size, &addr) != 0) {
		starpu_memory_deallocate(node, size);
		return -ENOMEM;
	}
	m->ptr = m->dev_handle = addr;
	m->offset = 0;
	m->ld = m->nx;
	return (starpu_ssize_t)size;
}

static void tile_free(void *data_interface, unsigned node)
{
	struct starpu_matrix_interface *m = data_interface;

	if (starpu_node_get_kind(node) != STARPU_CUDA_RAM) {
		starpu_interface_matrix_ops.free_data_on_node(data_interface, node);
		return;
	}
	give_back(node, m->dev_handle, m->allocsize);
	starpu_memory_deallocate(node, m->allocsize);
}

#ifndef STARPU_SIMGRID
/* StarPU-MPI's datatype of a matrix: ny columns of nx elements, ld apart. */
static int tile_datatype(starpu_data_handle_t h, MPI_Datatype *type)
{
	const struct starpu_matrix_interface *m = starpu_data_get_interface_on_node(h,
										    STARPU_MAIN_RAM);

	if (MPI_Type_create_hvector((int)m->ny, (int)(m->nx * m->elemsize),
				    (MPI_Aint)m->ld * (MPI_Aint)m->elemsize, MPI_BYTE,
				    type) != MPI_SUCCESS)
		return -1;
	if (MPI_Type_commit(type) != MPI_SUCCESS) {
		MPI_Type_free(type);
		return -1;
	}
	return 0;
}

static void tile_datatype_free(MPI_Datatype *type)
{
	MPI_Type_free(type);
}
#endif

static void build_ops(void)
{
	if (pool.have_ops)
		return;
	pool.ops = starpu_interface_matrix_ops;
	pool.ops.allocate_data_on_node = tile_allocate;
	pool.ops.free_data_on_node = tile_free;
	pool.ops.interfaceid = starpu_data_interface_get_next_id();
	pool.ops.name = "STARGEMM_TILE_INTERFACE";
	pool.have_ops = 1;
}

/* ---- set-up --------------------------------------------------------------------- */

int stargemm__pool_init(void)
{
	double setting;
	int ret = stargemm__setting(STARGEMM__DEVICE_POOL, &setting);

	pool.on = 0;
	if (ret || setting == 0 || starpu_cuda_worker_get_count() == 0)
		return ret;
	build_ops();
#ifndef STARPU_SIMGRID
	starpu_mpi_interface_datatype_register(pool.ops.interfaceid, tile_datatype,
					       tile_datatype_free);
#endif
	for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++) {
		struct device_pool *p = &pool.nodes[node];

		if (starpu_node_get_kind(node) != STARPU_CUDA_RAM)
			continue;
		memset(p, 0, sizeof(*p));
		starpu_pthread_mutex_init(&p->lock, NULL);
		p->has_lock = 1;
	}
	pool.on = 1;
	return 0;
}

void stargemm__pool_shutdown(void)
{
	for (int node = 0; node < STARPU_MAXNODES; node++) {
		struct device_pool *p = &pool.nodes[node];

		if (!p->has_lock)
			continue;
		if (p->base)
			fprintf(stderr, "stargemm: %lld device buffers of memory node %d outlived "
				"StarPU; its pool's memory is left allocated\n",
				(long long)p->arena.nblocks, node);
		starpu_pthread_mutex_destroy(&p->lock);
		p->has_lock = 0;
	}
	pool.on = 0;
}

/* ---- tiles ---------------------------------------------------------------------- */

void stargemm__tile_register(starpu_data_handle_t *h, int home, uintptr_t ptr, uint32_t ld,
			     uint32_t nx, uint32_t ny, size_t elem_size)
{
	struct starpu_matrix_interface m = {
		.id = STARPU_MATRIX_INTERFACE_ID, .ptr = ptr, .dev_handle = ptr, .offset = 0,
		.ld = ld, .nx = nx, .ny = ny, .elemsize = elem_size,
		.allocsize = (size_t)nx * ny * elem_size,
	};

	if (pool.on)
		starpu_data_register(h, home, &m, &pool.ops);
	else
		starpu_matrix_data_register(h, home, ptr, ld, nx, ny, elem_size);
}

uint32_t stargemm__matrix_footprint(starpu_data_handle_t h)
{
	struct starpu_data_interface_ops *ops = starpu_data_get_interface_ops(h);
	uint32_t id = pool.have_ops && ops->interfaceid == pool.ops.interfaceid
			      ? (uint32_t)STARPU_MATRIX_INTERFACE_ID
			      : (uint32_t)ops->interfaceid;

	return starpu_hash_crc32c_be(ops->footprint(h), id);
}
