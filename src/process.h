/*
 * process.h — this process's place in the run (src/process.c): whether stargemm is up,
 * its communicator, rank and rank count, its MPI thread level, its StarPU-MPI tags,
 * and the record of tasks that failed.
 *
 * Part of the leaf floor (doc/design.md, "Layers"): it calls nothing of stargemm's but
 * src/error.c, so that kernels, collectives and planners can ask for the rank or
 * report a failed task without calling up into the runtime. src/runtime.c, which
 * starts and stops MPI and StarPU, writes the state through the setters below.
 */
#ifndef STARGEMM_PROCESS_H
#define STARGEMM_PROCESS_H

#include <mpi.h>
#include <stdint.h>

/* ---- read by every floor ---------------------------------------------------------- */

/* Whether stargemm_init() succeeded and stargemm_finalize() has not run. */
int stargemm__initialized(void);
/* The number of this runtime among the process's runs (1 for the first
 * stargemm_init(), then one more per init after a finalize); 0 when not
 * initialised. A matrix records the run it was created in. */
int64_t stargemm__session(void);
/* stargemm's communicator (valid once MPI is up). */
MPI_Comm stargemm__comm(void);
/* MPI calls from the application thread are allowed beside StarPU-MPI's thread. */
int stargemm__mpi_thread_multiple(void);
/* Tiles are StarPU-allocated (home node -1) so that they can be evicted to disk. */
int stargemm__managed_storage(void);
/* Reserve @p count consecutive StarPU-MPI tags of the current communicator: the first
 * released range that holds them, else fresh ones. Identical on every rank as long as
 * reservations and releases are made collectively in the same order (matrices are
 * created and destroyed so, sums begun and ended so). */
int64_t stargemm__reserve_tags(int64_t count);
/* Give back tags reserved by stargemm__reserve_tags() once nothing on this rank uses
 * them any more (the handles unregistered, the messages done), for a later
 * reservation. Tags of another communicator than the current one must not be given
 * back here. */
void stargemm__release_tags(int64_t first, int64_t count);

/* Record a task that failed after the call's arguments were accepted: a kernel that
 * reports a failure it cannot return (cuBLAS status), or a task of a product that could
 * not be inserted (src/execute.c). The next stargemm_wait() returns -EIO with @p msg on
 * every rank (stargemm__check_task_failures(), src/runtime.c). Thread-safe. */
void stargemm__task_failed(const char *msg);
/* Whether this rank recorded a failed task since the last check. */
int stargemm__task_failures(void);
/* How many failed tasks this rank recorded since the last call, and the first one's
 * message into @p msg (@p size bytes); clears the record. */
int stargemm__take_task_failures(char *msg, size_t size);

/* Make @p comm, of which this process is rank @p rank of @p nranks, the communicator
 * of the calls that follow, until another is made so: stargemm__comm(),
 * stargemm_rank(), stargemm_nranks() and the tags become its (the grids of the
 * ScaLAPACK drop-in, src/scalapack.c, each on a communicator of its processes, on a
 * StarPU-MPI started on all of them). The one in use is set aside with its rank, size
 * and next tag, and taken back as it was when made current again (then @p rank,
 * @p nranks and @p tag_base are not read); a new one draws its tags from @p tag_base
 * on, which its processes must agree on and which must keep its tags apart from the
 * other communicators' of this process (StarPU-MPI 1.3 looks a handle up by its tag
 * alone). 0, or -ENOMEM. */
int stargemm__process_use_comm(MPI_Comm comm, int rank, int nranks, int64_t tag_base);

/* ---- written by src/runtime.c ------------------------------------------------------ */

/* MPI is up at thread level MULTIPLE (1) or lower (0). */
void stargemm__process_set_thread_multiple(int multiple);
/* stargemm's communicator, then (once StarPU-MPI is up) this process's rank in it and
 * their number. */
void stargemm__process_set_comm(MPI_Comm comm);
void stargemm__process_set_rank(int rank, int nranks);
/* stargemm_init() succeeded (tiles StarPU-allocated with @p managed_storage): tags
 * from 1, no failed task; stargemm_finalize() ran. */
void stargemm__process_started(int managed_storage);
void stargemm__process_stopped(void);

#endif
