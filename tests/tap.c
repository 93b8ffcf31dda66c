/*
 * tests/tap.c — the TAP output of the C unit tests (tests/tap.h): one counter of cases
 * and failures per program.
 */
#include <stdio.h>

#include "tap.h"

static int ncases, nfailed;

void tap_ok(int cond, const char *name)
{
	tap_ok_detail(cond, name, NULL);
}

void tap_ok_detail(int cond, const char *name, const char *detail)
{
	ncases++;
	nfailed += !cond;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ncases, name);
	if (detail && *detail)
		printf("#   %s\n", detail);
}

int tap_done(void)
{
	printf("1..%d\n", ncases);
	fflush(stdout);
	return nfailed ? 1 : 0;
}
