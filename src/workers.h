/*
 * workers.h — this rank's StarPU workers as stargemm uses them (src/workers.c): pausing
 * them while the calling thread works alone. Their counts are public (src/stargemm.h)
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

#endif
