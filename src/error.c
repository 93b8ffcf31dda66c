/*
 * error.c — the last error message of each thread, returned by stargemm_last_error().
 *
 * Public functions return negative errno codes; the message says which constraint was
 * violated and with which values, so that a user can fix the call without a debugger.
 */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"
#include "stargemm.h"

static __thread char last_error[1024];

int stargemm__error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return code;
}

void stargemm__clear_error(void)
{
	last_error[0] = '\0';
}

const char *stargemm_last_error(void)
{
	return last_error;
}
