/*
 * process.c — this process's place in the run: up or not, communicator, rank, thread
 * level, tags, and the record of failed tasks (declared in src/process.h, where the
 * reason for a leaf apart from src/runtime.c is given).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "process.h"
#include "stargemm.h"

static struct {
	int initialized;
	MPI_Comm comm;
	int rank, nranks;
	int thread_multiple;  /* MPI calls allowed beside StarPU-MPI's thread */
	int64_t next_tag;
	int managed_storage;  /* StarPU allocates tiles (evictable to disk) */
} proc = { .rank = 0, .nranks = 1, .next_tag = 1 };

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

int64_t stargemm__reserve_tags(int64_t count)
{
	int64_t first = proc.next_tag;

	proc.next_tag += count;
	return first;
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
	proc.initialized = 1;
}

void stargemm__process_stopped(void)
{
	proc.initialized = 0;
}
