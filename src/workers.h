/*
 * workers.h — this rank's StarPU workers as stargemm uses them (src/workers.c): pausing
 * them while the calling thread works alone; and whether StarPU traces. Their counts are public (src/stargemm.h)
 * and the devices' numbering is the executor's contract with the policy (src/contract.h);
 * both are defined in src/workers.c too.
 *
 * On the runtime-services floor (doc/design.md, "Layers"): StarPU only.
 */
#ifndef STARGEMM_WORKERS_H
#define STARGEMM_WORKERS_H

/* Before work of the calling thread alone (inspecting, creating matrices): when no task
 * is pending, pause StarPU's workers (returns 1), since StarPU 1.3 keeps its last awake
 * worker polling for tasks and, on the caller's core, that slows the caller down.
 * stargemm__quiet_end() resumes them; call it before waiting for tasks. */
int stargemm__quiet_begin(void);
void stargemm__quiet_end(int paused);

/* Whether StarPU records (or, before stargemm_init(), would record) an FxT trace: a
 * StarPU built with FxT and STARPU_FXT_TRACE set and not 0 (stargemm_init() sets 0
 * unless the user set it). Its StarPU-MPI then starts with a barrier of every process
 * of MPI_COMM_WORLD (src/runtime.c, src/scalapack.c). */
int stargemm__fxt_tracing(void);

#endif
