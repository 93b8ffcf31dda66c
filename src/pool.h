/*
 * pool.h — the device buffer pool (src/pool.c): tiles registered through it take their
 * GPU buffers from one allocation per GPU instead of a cudaMalloc each.
 */
#ifndef STARGEMM_POOL_H
#define STARGEMM_POOL_H

#include <stdint.h>
#include <starpu.h>

/* After StarPU has started: the pool serves the tiles registered from now on when the
 * runtime has CUDA workers and STARGEMM_DEVICE_POOL is not 0 (its default: 1).
 * -EINVAL (with the error set) for a bad STARGEMM_DEVICE_POOL. */
int stargemm__pool_init(void);
/* After starpu_shutdown() (which frees every device buffer, and with the last one of
 * a GPU its slab): forget the pools. */
void stargemm__pool_shutdown(void);
/* Register a tile: starpu_matrix_data_register()'s arguments and handle, through the
 * pool when it is on (a handle with the pool's interface, the matrix one's except
 * for device allocations), else a plain matrix handle. */
void stargemm__tile_register(starpu_data_handle_t *h, int home, uintptr_t ptr, uint32_t ld,
			     uint32_t nx, uint32_t ny, size_t elem_size);
/* The footprint StarPU gives @p h were it a matrix handle: its shape hashed with the
 * matrix interface's id (StarPU's default task footprint mixes in each handle's
 * interface id, which for the pool's tiles is another one). */
uint32_t stargemm__matrix_footprint(starpu_data_handle_t h);

#endif
