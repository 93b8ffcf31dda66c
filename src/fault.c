/*
 * fault.c — fault injection, so that the paths taken when something fails in the
 * middle of a product are tested (tests/task_failures.sh) and not only reasoned about.
 *
 * STARGEMM_FAULT="WHAT:RANK:N" makes the N-th event WHAT (counted from 1, per process
 * and per stargemm_init()) on rank RANK fail as a real failure would:
 *  - insert: a task insertion of a product (src/insert.c) is refused, as when StarPU
 *    refuses a task or memory for it runs out;
 *  - kernel: a GEMM kernel reports a failure, as cuBLAS does with a bad status
 *    (codelets/gemm.c, codelets/batch.c); its tile is left as it was;
 *  - scratch: a CPU kernel's scratch memory cannot be had (a batch's table of op(A)
 *    copies in codelets/batch.c, a product's op(A) copy in codelets/smallgemm.c); the
 *    kernel must go on without it, with the same result (tests/task_failures.sh);
 *  - blas: a CPU GEMM kernel hands BLAS a call it refuses (lda = 0), so that BLAS's
 *    refusal (its xerbla_, codelets/blas_guard.c) is seen to fail the task.
 * Unset: nothing is injected and each check costs one load. A value that does not
 * parse makes stargemm_init() fail with a message.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fault.h"
#include "settings.h"

static int fault_kind = -1;  /* enum stargemm__fault, or -1: none */
static int64_t fault_at;     /* the event that fails */
static atomic_llong events;  /* events of that kind so far on this rank */

static const char *const kind_names[] = { "insert", "kernel", "scratch", "blas" };

int stargemm__fault_setup(int rank)
{
	const char *env = stargemm__setting_text(STARGEMM__FAULT);
	char what[16], end;
	int r;
	long long n;

	fault_kind = -1;
	atomic_store(&events, 0);
	if (!env || !*env)
		return 0;
	if (sscanf(env, "%15[a-z]:%d:%lld%c", what, &r, &n, &end) != 3 || r < 0 || n < 1)
		return stargemm__error(-EINVAL, "stargemm_init: STARGEMM_FAULT='%s': expected "
				       "WHAT:RANK:N with WHAT insert, kernel, scratch or blas, RANK >= 0, "
				       "N >= 1", env);
	for (int k = 0; k < (int)(sizeof(kind_names) / sizeof(kind_names[0])); k++)
		if (strcmp(what, kind_names[k]) == 0) {
			fault_kind = r == rank ? k : -1;
			fault_at = n;
			return 0;
		}
	return stargemm__error(-EINVAL, "stargemm_init: STARGEMM_FAULT='%s': unknown event "
			       "'%s' (insert, kernel, scratch or blas)", env, what);
}

int stargemm__fault(enum stargemm__fault kind)
{
	if (fault_kind != (int)kind)
		return 0;
	return atomic_fetch_add(&events, 1) + 1 == fault_at;
}
