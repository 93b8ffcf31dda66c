/*
 * process.c — this process's place in the run: up or not, communicator, rank, thread
 * level, tags, and the record of failed tasks (declared in src/process.h, where the
 * reason for a leaf apart from src/runtime.c is given).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#include "process.h"
#include "stargemm.h"

static struct {
	int initialized;
	MPI_Comm comm;
	int rank, nranks;
	int thread_multiple;  /* MPI calls allowed beside StarPU-MPI's thread */
	int64_t next_tag;
	int managed_storage;  /* StarPU allocates tiles (evictable to disk) */
	int64_t session;      /* stargemm_init()s that succeeded in this process */
} proc = { .rank = 0, .nranks = 1, .next_tag = 1 };

/* The state of the communicators used before and set aside (stargemm__process_use_comm()):
 * each keeps its rank, size and next tag. */
struct comm_state {
	MPI_Comm comm;
	int rank, nranks;
	int64_t next_tag;
};
static struct comm_state *aside;
static int naside;

static atomic_int task_failures;
static char task_failure_msg[512];

int stargemm_rank(void)
{
	return proc.rank;
}

int stargemm_nranks(void)
{
	return proc.nranks;
}

int stargemm__initialized(void)
{
	return proc.initialized;
}

int64_t stargemm__session(void)
{
	return proc.initialized ? proc.session : 0;
}

MPI_Comm stargemm__comm(void)
{
	return proc.comm;
}

int stargemm__mpi_thread_multiple(void)
{
	return proc.thread_multiple || proc.nranks == 1;
}

int stargemm__managed_storage(void)
{
	return proc.managed_storage;
}

/* The tag ranges released below proc.next_tag, sorted and apart (never adjacent),
 * for the current communicator: StarPU-MPI 1.3 keeps an entry per (source, tag) it
 * ever had to wait for until it stops, so that fresh tags for every matrix grew its
 * table by 0.3-0.5 KiB per product (tests/soak_2ranks.sh); reused tags reuse them. */
static struct tag_range { int64_t first, count; } *freed;
static int nfreed, capfreed;

static void forget_freed_tags(void)
{
	free(freed);
	freed = NULL;
	nfreed = capfreed = 0;
}

int64_t stargemm__reserve_tags(int64_t count)
{
	int64_t first;

	for (int e = 0; e < nfreed; e++) {   /* the first released range that holds it */
		if (freed[e].count < count)
			continue;
		first = freed[e].first;
		freed[e].first += count;
		freed[e].count -= count;
		if (freed[e].count == 0)
			memmove(&freed[e], &freed[e + 1], (size_t)(nfreed-- - e - 1) * sizeof(*freed));
		return first;
	}
	first = proc.next_tag;
	proc.next_tag += count;
	return first;
}

void stargemm__release_tags(int64_t first, int64_t count)
{
	int e = 0;

	if (count <= 0 || first < 1 || first + count > proc.next_tag)
		return;
	while (e < nfreed && freed[e].first < first)
		e++;
	if (e > 0 && freed[e - 1].first + freed[e - 1].count == first) {   /* joins e - 1 */
		freed[e - 1].count += count;
		if (e < nfreed && first + count == freed[e].first) {
			freed[e - 1].count += freed[e].count;
			memmove(&freed[e], &freed[e + 1], (size_t)(nfreed-- - e - 1) * sizeof(*freed));
		}
	} else if (e < nfreed && first + count == freed[e].first) {        /* joins e */
		freed[e].first = first;
		freed[e].count += count;
	} else {
		if (nfreed == capfreed) {
			int more = capfreed ? 2 * capfreed : 16;
			struct tag_range *grown = realloc(freed, (size_t)more * sizeof(*freed));

			if (!grown)   /* not reused: fresh tags instead, as before */
				return;
			freed = grown;
			capfreed = more;
		}
		memmove(&freed[e + 1], &freed[e], (size_t)(nfreed - e) * sizeof(*freed));
		freed[e] = (struct tag_range){ first, count };
		nfreed++;
	}
	/* The last range, up to next_tag, goes back to the never-used tags. */
	if (nfreed && freed[nfreed - 1].first + freed[nfreed - 1].count == proc.next_tag)
		proc.next_tag = freed[--nfreed].first;
}

/* The first failure's message is written by the thread that counted it first, before
 * the count is seen by stargemm__take_task_failures() (after every task is done). */
void stargemm__task_failed(const char *msg)
{
	if (atomic_fetch_add(&task_failures, 1) == 0)
		snprintf(task_failure_msg, sizeof(task_failure_msg), "%s", msg);
}

int stargemm__task_failures(void)
{
	return atomic_load(&task_failures) > 0;
}

int stargemm__take_task_failures(char *msg, size_t size)
{
	int n = atomic_exchange(&task_failures, 0);

	snprintf(msg, size, "%s", n > 0 ? task_failure_msg : "");
	return n;
}

void stargemm__process_set_thread_multiple(int multiple)
{
	proc.thread_multiple = multiple;
}

void stargemm__process_set_comm(MPI_Comm comm)
{
	proc.comm = comm;
}

void stargemm__process_set_rank(int rank, int nranks)
{
	proc.rank = rank;
	proc.nranks = nranks;
}

void stargemm__process_started(int managed_storage)
{
	proc.managed_storage = managed_storage;
	atomic_store(&task_failures, 0);
	proc.next_tag = 1;
	forget_freed_tags();
	proc.session++;
	proc.initialized = 1;
}

void stargemm__process_stopped(void)
{
	proc.initialized = 0;
	forget_freed_tags();
	free(aside);
	aside = NULL;
	naside = 0;
}

/* The entry of @p comm among those set aside, or -1. */
static int aside_index(MPI_Comm comm)
{
	for (int e = 0; e < naside; e++)
		if (aside[e].comm == comm)
			return e;
	return -1;
}

int stargemm__process_use_comm(MPI_Comm comm, int rank, int nranks, int64_t tag_base)
{
	struct comm_state now = { proc.comm, proc.rank, proc.nranks, proc.next_tag }, *grown;
	int e = aside_index(proc.comm), found;

	if (comm == proc.comm)
		return 0;
	if (e < 0) {
		if (!(grown = realloc(aside, (size_t)(naside + 1) * sizeof(*aside))))
			return stargemm__error(-ENOMEM, "stargemm: out of memory for a "
					       "communicator's state");
		aside = grown;
		e = naside++;
	}
	aside[e] = now;
	found = aside_index(comm);
	if (found >= 0) {
		rank = aside[found].rank;
		nranks = aside[found].nranks;
		tag_base = aside[found].next_tag;
	}
	proc.comm = comm;
	proc.rank = rank;
	proc.nranks = nranks;
	proc.next_tag = tag_base;
	forget_freed_tags();   /* they were the other communicator's */
	return 0;
}
