/*
 * progress.h — the progress line of stargemm_set_progress() (src/progress.c).
 * Runtime-services floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_PROGRESS_H
#define STARGEMM_PROGRESS_H

#include <stdint.h>

/* The progress line (progress.c, stargemm_set_progress()). Whether this process prints
 * it (asked for, rank 0, stderr a terminal or STARGEMM_PROGRESS=force); then, before
 * inserting a product, count its @p tasks local tasks and @p flops (every rank's):
 * returns 1 if they are counted, and each must then call
 * stargemm__progress_task_done() (a StarPU callback) when it ends. The next wait
 * (stargemm_wait(), once every task is done) ends the line. */
int stargemm__progress_wanted(void);
int stargemm__progress_begin(int64_t tasks, double flops);
void stargemm__progress_task_done(void *unused);
void stargemm__progress_end(void);

#endif
