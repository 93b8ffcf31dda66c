/*
 * stats.h — the transfer counters and the peak of StarPU-allocated host memory
 * (src/stats.c, stargemm_transfers_get()). Runtime-services floor (doc/design.md,
 * "Layers").
 */
#ifndef STARGEMM_STATS_H
#define STARGEMM_STATS_H



/* Forget the counters (stargemm_finalize()). */
void stargemm__transfers_shutdown(void);
/* Record the current StarPU-allocated host memory in the peak (stats.c). */
void stargemm__sample_memory(void);

#endif
