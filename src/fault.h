/*
 * fault.h — fault injection for the tests (src/fault.c): STARGEMM_FAULT="WHAT:RANK:N"
 * makes the N-th event WHAT on rank RANK fail, so that the tests can check that a
 * failure anywhere reaches every rank as an error and loses nothing.
 *
 * Part of the leaf floor (doc/design.md, "Layers"): kernels and the executor ask it
 * whether to fail; it calls only src/settings.c and src/error.c.
 */
#ifndef STARGEMM_FAULT_H
#define STARGEMM_FAULT_H

enum stargemm__fault { STARGEMM_FAULT_INSERT = 0, STARGEMM_FAULT_KERNEL = 1,
		       STARGEMM_FAULT_SCRATCH = 2, STARGEMM_FAULT_BLAS = 3 };
/* Read STARGEMM_FAULT for rank @p rank (stargemm_init()); -EINVAL if it does not parse. */
int stargemm__fault_setup(int rank);
/* Whether this event of kind @p kind is the one to fail (thread-safe). */
int stargemm__fault(enum stargemm__fault kind);

#endif
