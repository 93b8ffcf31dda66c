/*
 * tests/tap.h — the TAP output of the C unit tests (tests/tap.c): a line per case,
 * numbered, and the plan at the end; the automake TAP driver reads it.
 */
#ifndef STARGEMM_TESTS_TAP_H
#define STARGEMM_TESTS_TAP_H

/* Case @p name: "ok N - name", or "not ok N - name" when @p cond is 0. */
void tap_ok(int cond, const char *name);
/* The same, followed by @p detail as a comment line (none when NULL or empty). */
void tap_ok_detail(int cond, const char *name, const char *detail);
/* Prints the plan ("1..N", N the cases so far); returns the exit status: 1 when a case
 * failed, else 0. */
int tap_done(void);

#endif
