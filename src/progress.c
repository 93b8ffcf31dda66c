/*
 * progress.c — the progress line of long products: rank 0's tasks done of those
 * submitted, seconds, and an estimated rate, on stderr, rewritten in place ('\r'),
 * ended with a newline by the wait that follows (stargemm_set_progress() in
 * stargemm.h says what the user sees).
 *
 * Off unless asked for: the library prints nothing by default, and only on rank 0,
 * only when its stderr is a terminal (STARGEMM_PROGRESS=force lifts that condition:
 * under mpiexec the ranks write to pipes, and the tests read a file).
 *
 * Who prints. The executor gives each of rank 0's tasks a callback that counts it
 * (an atomic increment); the callback that finds an update due (at most 4 a second)
 * and wins the print flag writes the line, with one write(2) of some 70 bytes; the
 * others return at once. Not the inserting thread: in core it returns as soon as the
 * tasks are submitted and then sits in StarPU's wait (starpu_mpi_wait_for_all()), with
 * no hook to print from; nor a thread of its own, which would wake on the cores the
 * workers compute on. What a worker pays: a clock read and an atomic increment per
 * task, and the write about every 250 ms, which is far below the noise of a task. The
 * final line comes from the waiting thread (stargemm__progress_end()), once StarPU
 * says every task is done, so its count is exact and nothing is printed after it.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <starpu.h>

#include "error.h"
#include "process.h"
#include "progress.h"
#include "settings.h"
#include "stargemm.h"

/* Microseconds between two updates of the line. */
#define PROGRESS_PERIOD_US 250000LL

static struct {
	int on;                 /* stargemm_set_progress() */
	int force;              /* STARGEMM_PROGRESS=force: print without a terminal */
	/* The line being counted, since the first product submitted after the last wait.
	 * total and flops grow when a product is submitted (stargemm_pdgemm_submit()
	 * may add one while another runs); the callbacks read them to print. */
	atomic_llong total;     /* rank 0's tasks submitted; 0: no line */
	_Atomic double flops;   /* flops of their products, every rank's */
	atomic_llong done;      /* tasks finished (the callbacks) */
	atomic_llong next_us;   /* earliest time of the next update */
	atomic_flag printing;   /* held by the callback that writes the line */
	double start_us;        /* when the line began (starpu_timing_now()) */
} pg = { .printing = ATOMIC_FLAG_INIT };

int stargemm_set_progress(int on)
{
	const char *env = stargemm__setting_text(STARGEMM__PROGRESS);

	stargemm__clear_error();
	if (on != 0 && on != 1)
		return stargemm__error(-EINVAL, "stargemm_set_progress: on must be 0 or 1, got %d",
				       on);
	if (on && env && *env && strcmp(env, "force") != 0)
		return stargemm__error(-EINVAL, "environment variable STARGEMM_PROGRESS='%s': "
				       "expected 'force' (print the progress line even when "
				       "stderr is not a terminal) or nothing", env);
	pg.on = on;
	pg.force = env && *env;
	return 0;
}

int stargemm__progress_wanted(void)
{
	return pg.on && stargemm_rank() == 0 && (pg.force || isatty(STDERR_FILENO));
}

/* Write the line: "\rstargemm: done/total tasks, seconds, GFLOP/s", and @p end. */
static void print_line(long long done, double now_us, const char *end)
{
	long long total = atomic_load(&pg.total);
	double seconds = (now_us - pg.start_us) * 1e-6;
	double share = total > 0 ? (double)done / (double)total : 0.0;
	double rate = seconds > 0 ? atomic_load(&pg.flops) * share / seconds * 1e-9 : 0.0;
	int width = snprintf(NULL, 0, "%lld", total);
	char line[160];

	snprintf(line, sizeof(line), "\rstargemm: %*lld/%lld tasks %9.2f s %10.2f GFLOP/s%s",
		 width, done, total, seconds, rate, end);
	fputs(line, stderr);
}

int stargemm__progress_begin(int64_t tasks, double flops)
{
	if (tasks <= 0)
		return 0;
	/* A new line: no task of an earlier one is left (its wait ended it). */
	if (atomic_load(&pg.total) == 0) {
		pg.start_us = starpu_timing_now();
		atomic_store(&pg.done, 0);
		atomic_store(&pg.next_us, 0);
		atomic_store(&pg.flops, 0.0);
	}
	atomic_store(&pg.flops, atomic_load(&pg.flops) + flops);
	atomic_fetch_add(&pg.total, (long long)tasks);
	return 1;
}

void stargemm__progress_task_done(void *unused)
{
	double now;

	(void)unused;
	atomic_fetch_add(&pg.done, 1);
	now = starpu_timing_now();
	if ((long long)now < atomic_load(&pg.next_us) || atomic_flag_test_and_set(&pg.printing))
		return;
	/* Another callback may have printed between the test and the flag. */
	if ((long long)now >= atomic_load(&pg.next_us)) {
		atomic_store(&pg.next_us, (long long)now + PROGRESS_PERIOD_US);
		print_line(atomic_load(&pg.done), now, "");
	}
	atomic_flag_clear(&pg.printing);
}

void stargemm__progress_end(void)
{
	if (atomic_load(&pg.total) == 0)
		return;
	print_line(atomic_load(&pg.done), starpu_timing_now(), "\n");
	atomic_store(&pg.total, 0);
}
