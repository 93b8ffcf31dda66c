/*
 * tests/test_loads.c — unit tests of the meter of a work list's loads (src/loads.c),
 * on the CPU: StarPU without MPI, tiles in host memory, loaded onto host memory (on a
 * GPU the same calls move them). TAP output.
 *
 * Checked:
 *  - loads of tiles already there are asked for and their callbacks, run at once
 *    inside the pump, let each go (a tile left acquired would hang its unregistration,
 *    and the test's timeout would fail it);
 *  - loads of a chunk marked done before their turn are dropped;
 *  - a load that waits (its tile written by a running task) holds its place, the
 *    others go on, and freeing the meter waits for it: its callback then runs on a
 *    StarPU thread;
 *  - behind a load of the window's size the others wait in the ring; beyond its room
 *    they are not metered (asked for at once, not counted); freeing the meter drops
 *    those waiting.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <starpu.h>

#include "loads.h"
#include "tap.h"

#define NTILES 80
#define TILE 256   /* doubles */
#define BIG (4 << 20)   /* doubles: 32 MiB, the meter's window (src/loads.c) */



static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static atomic_int started;

/* A task that holds its tile in write mode for 0.2 s. */
static void slow_write(void *buffers[], void *arg)
{
	struct timespec t = { 0, 200000000 };

	(void)buffers;
	(void)arg;
	atomic_store(&started, 1);
	nanosleep(&t, NULL);
}

static struct starpu_codelet slow_cl = {
	.cpu_funcs = { slow_write },
	.nbuffers = 1,
	.modes = { STARPU_W },
};

/* Push tiles [first, first + count) for @p chunk. */
static void push(struct stargemm__loads *l, starpu_data_handle_t *h, int first, int count,
		 int64_t chunk)
{
	for (int t = first; t < first + count; t++)
		stargemm__loads_push(l, h[t], STARPU_MAIN_RAM, chunk);
}

/* Insert the slow task on @p h and wait until it runs (it then holds the tile). */
static void hold_with_task(starpu_data_handle_t h)
{
	atomic_store(&started, 0);
	starpu_task_insert(&slow_cl, STARPU_W, h, 0);
	while (!atomic_load(&started))
		;
}

int main(void)
{
	static double tiles[NTILES][TILE];
	double *big = calloc(BIG, sizeof(double));
	starpu_data_handle_t h[NTILES], hbig;
	struct stargemm__loads *l;
	double t0, waited;

	setenv("STARPU_NCPU", "2", 0);
	setenv("STARPU_SILENT", "1", 0);
	if (!big || starpu_init(NULL) != 0) {
		printf("1..0 # SKIP starpu_init failed\n");
		return 0;
	}
	for (int t = 0; t < NTILES; t++)
		starpu_vector_data_register(&h[t], STARPU_MAIN_RAM, (uintptr_t)tiles[t], TILE,
					    sizeof(double));
	starpu_vector_data_register(&hbig, STARPU_MAIN_RAM, (uintptr_t)big, BIG, sizeof(double));

	tap_ok(stargemm__loads_new(60, &l) == 0, "a meter with room for 60 waiting loads");
	push(l, h, 0, 40, 0);
	tap_ok(stargemm__loads_asked(l) == 40, "40 loads of tiles already there: all asked for");
	stargemm__loads_chunk_done(l, 1);
	push(l, h, 40, 10, 1);
	tap_ok(stargemm__loads_asked(l) == 40, "the loads of a chunk already done are dropped");
	push(l, h, 50, 30, 2);
	tap_ok(stargemm__loads_asked(l) == 70, "the next chunk's loads are asked for");
	stargemm__loads_free(l);

	/* A load that waits: tile 0 is written by a running task. */
	tap_ok(stargemm__loads_new(NTILES, &l) == 0, "a second meter");
	hold_with_task(h[0]);
	t0 = now();
	push(l, h, 0, 1, 0);
	push(l, h, 1, 30, 1);
	tap_ok(stargemm__loads_asked(l) == 31, "a waiting load holds its place, the others go on");
	stargemm__loads_free(l);
	waited = now() - t0;
	tap_ok(waited > 0.1, "freeing the meter waits for the load under way");
	printf("#   waited %.3f s for a task of 0.2 s\n", waited);

	/* A tile of the window's size under way: the next loads wait their turn; beyond
	 * the ring's room they are not metered; freeing the meter drops those waiting. */
	tap_ok(stargemm__loads_new(3, &l) == 0, "a meter with room for 3 waiting loads");
	hold_with_task(hbig);
	stargemm__loads_push(l, hbig, STARPU_MAIN_RAM, 0);
	push(l, h, 1, 3, 0);
	tap_ok(stargemm__loads_asked(l) == 1, "behind a load of the window's size, the others wait");
	push(l, h, 4, 1, 0);
	tap_ok(stargemm__loads_asked(l) == 1, "a load beyond the ring's room is not metered");
	stargemm__loads_free(l);
	starpu_task_wait_for_all();

	for (int t = 0; t < NTILES; t++)
		starpu_data_unregister(h[t]);
	starpu_data_unregister(hbig);
	free(big);
	tap_ok(1, "every tile could be unregistered: each load was let go");
	starpu_shutdown();
	return tap_done();
}
