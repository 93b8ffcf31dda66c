/*
 * wait.c — stargemm_wait(): every task of this rank done, then the work deferred to the
 * wait (free the in-core work lists their tasks read, bring in-place matrices written
 * on GPUs back to the users' arrays), then the ranks agree whether a task failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "collective.h"
#include "error.h"
#include "process.h"
#include "progress.h"
#include "stargemm.h"
#include "wait.h"

static struct {
	struct deferred { stargemm__deferred_fn fn; void *arg; } *at;
	int n, cap;
} deferred;

void stargemm__defer_to_wait(stargemm__deferred_fn fn, void *arg)
{
	struct deferred *grown;

	for (int i = 0; i < deferred.n; i++)
		if (deferred.at[i].fn == fn && deferred.at[i].arg == arg)
			return;
	if (deferred.n == deferred.cap) {
		int more = deferred.cap ? 2 * deferred.cap : 8;

		if (!(grown = realloc(deferred.at, (size_t)more * sizeof(*grown)))) {
			/* Nowhere to record it: wait for this rank's tasks now rather than
			 * lose it. */
			starpu_task_wait_for_all();
			fn(arg);
			return;
		}
		deferred.at = grown;
		deferred.cap = more;
	}
	deferred.at[deferred.n++] = (struct deferred){ fn, arg };
}

void stargemm__drop_deferred(stargemm__deferred_fn fn, const void *arg)
{
	for (int i = 0; i < deferred.n; i++)
		if (deferred.at[i].fn == fn && deferred.at[i].arg == arg) {
			memmove(&deferred.at[i], &deferred.at[i + 1],
				(size_t)(deferred.n - i - 1) * sizeof(*deferred.at));
			deferred.n--;
			return;
		}
}

void stargemm__run_deferred(void)
{
	for (int i = 0; i < deferred.n; i++)
		deferred.at[i].fn(deferred.at[i].arg);
	free(deferred.at);
	deferred.at = NULL;
	deferred.n = deferred.cap = 0;
}

int stargemm__check_task_failures(void)
{
	char msg[STARGEMM__FAILURE_MSG];
	int local = stargemm__take_task_failures(msg, sizeof(msg));
	struct stargemm__failure f;

	/* Every rank must agree that the result is incomplete, not only the one whose
	 * task failed. */
	if (stargemm__share_failure(local > 0 ? -EIO : 0, msg, &f)) {
		f.count = local > 0;
		f.rank = stargemm_rank();
		snprintf(f.msg, sizeof(f.msg), "%s", msg);
	}
	if (f.count == 0)
		return 0;
	return stargemm__error(-EIO, "stargemm: a task failed on rank %d (%llu rank(s) with "
			       "failures): %s; the result is incomplete: C is undefined", f.rank,
			       (unsigned long long)f.count, f.msg);
}

int stargemm__wait_after(int ret)
{
	char msg[1024];
	int wret;

	if (!ret)
		return stargemm_wait();
	snprintf(msg, sizeof(msg), "%s", stargemm_last_error());
	wret = stargemm_wait();
	return stargemm__error(ret, "%s%s%s", msg, wret ? "; then: " : "",
			       wret ? stargemm_last_error() : "");
}

int stargemm_wait(void)
{
	stargemm__clear_error();
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "stargemm_wait: stargemm is not initialised");
	starpu_mpi_wait_for_all(stargemm__comm());
	stargemm__progress_end();
	stargemm__run_deferred();
	return stargemm__check_task_failures();
}
