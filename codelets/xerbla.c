/*
 * codelets/xerbla.c — BLAS's error handler, xerbla_, as stargemm needs it: a BLAS call
 * that a task's kernel makes and BLAS refuses (an argument out of range) must fail the
 * task, so that the product returns an error on every rank; BLAS's own handler prints a
 * line and returns, and the product would report success with C not computed.
 *
 * The BLAS library calls xerbla_ through the dynamic linker, so this definition, in a
 * library loaded before the BLAS, takes the calls. On a StarPU worker of a running
 * stargemm it records the task's failure (stargemm__task_failed(), reported by the next
 * stargemm_wait()); anywhere else — the program's own BLAS calls — it hands the call
 * to the next xerbla_ (the BLAS's), so that the program sees BLAS's usual behaviour.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "../src/internal.h"

typedef void xerbla_fn(const char *name, const int *info, size_t len);

void xerbla_(const char *name, const int *info, size_t len);

void xerbla_(const char *name, const int *info, size_t len)
{
	int n = 0;
	xerbla_fn *next;

	while (n < (int)len && n < 32 && name[n] && name[n] != ' ')
		n++;
	if (stargemm__initialized() && starpu_worker_get_id() >= 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "BLAS refused argument %d of %.*s in a task's kernel "
			 "(its xerbla_)", *info, n, name);
		stargemm__task_failed(msg);
		return;
	}
	next = (xerbla_fn *)dlsym(RTLD_NEXT, "xerbla_");
	if (next && next != xerbla_) {
		next(name, info, len);
		return;
	}
	fprintf(stderr, " ** On entry to %.*s parameter number %d had an illegal value\n", n,
		name, *info);
}
