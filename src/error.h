/*
 * error.h — recording the message of stargemm_last_error() (src/error.c). Apart from
 * internal.h so that the pure modules' tests (tests/test_inspect.c, no StarPU) can
 * clear it too.
 */
#ifndef STARGEMM_ERROR_H
#define STARGEMM_ERROR_H

/* Record an error message for stargemm_last_error() and return @p code. */
int stargemm__error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Forget the last error (called on entry of public functions). */
void stargemm__clear_error(void);

#endif
