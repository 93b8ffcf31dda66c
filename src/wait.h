/*
 * wait.h — waiting for a rank's tasks (src/wait.c): stargemm_wait(), the work deferred
 * to it, and the agreement of the ranks on failed tasks.
 *
 * On the runtime-services floor (doc/design.md, "Layers"): below the descriptor and the
 * executor, which call the wait and defer work to it; what they defer (free a work
 * list, bring an in-place matrix back to its array) is handed down as a function and
 * its argument, so that the wait never calls up into them.
 */
#ifndef STARGEMM_WAIT_H
#define STARGEMM_WAIT_H

typedef void (*stargemm__deferred_fn)(void *arg);

/* Run @p fn(@p arg) once after the next wait for every task (stargemm_wait(),
 * stargemm_finalize()); a pair already recorded is not recorded twice. When there is
 * no memory to record it, this rank's tasks are waited for and it runs now. */
void stargemm__defer_to_wait(stargemm__deferred_fn fn, void *arg);
/* Drop the recorded pair (@p fn, @p arg), if any, without running it. */
void stargemm__drop_deferred(stargemm__deferred_fn fn, const void *arg);
/* Run the recorded pairs, in the order recorded, and forget them (after a wait for
 * every task; stargemm_finalize()). */
void stargemm__run_deferred(void);

/* Collective: -EIO on every rank if any rank recorded a failed task since the last
 * call (src/process.h), with the message of the lowest such rank; else 0. Clears the
 * record. */
int stargemm__check_task_failures(void);
/* Wait for every submitted task (collective, as stargemm_wait()). @p ret != 0: an
 * error already recorded, returned with its message kept (stargemm_wait() would
 * clear it) and the wait's own failure appended; 0: stargemm_wait()'s status. */
int stargemm__wait_after(int ret);

#endif
