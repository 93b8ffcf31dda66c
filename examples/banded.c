/*
 * examples/banded.c — the pieces the application drivers share (examples/banded.h):
 * the banded test matrices' elements, tilings and patterns, a clock, option parsing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "banded.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

double banded_unit(int64_t r, int64_t c)
{
	uint64_t lo = (uint64_t)(r < c ? r : c), hi = (uint64_t)(r < c ? c : r);

	return (double)(mix(lo * 0x9e3779b97f4a7c15ULL + hi) >> 11) * 0x1.0p-53;
}

double banded_offdiagonal(int64_t r, int64_t c, int64_t band, double decay)
{
	int64_t d = r > c ? r - c : c - r;

	if (d > band)
		return 0.0;
	return 0.1 * exp(-decay * (double)d) * (2.0 * banded_unit(r, c) - 1.0);
}

double banded_bound(int64_t band, double decay)
{
	double b = 1.0;

	for (int64_t k = 1; k <= band; k++)
		b += 0.2 * exp(-decay * (double)k);
	return b;
}

int64_t *banded_tiling(int64_t n, int64_t lo, int64_t hi, int64_t *count)
{
	int64_t *s = malloc((size_t)(n / lo + 2) * sizeof(*s)), done = 0;
	uint64_t span = (uint64_t)(hi - lo + 1);

	*count = 0;
	while (s && done < n) {
		int64_t t = lo + (int64_t)(mix((uint64_t)*count + 17) % span);

		s[*count] = t < n - done ? t : n - done;
		done += s[(*count)++];
	}
	return s;
}

int64_t *banded_pattern(const int64_t *sizes, int64_t nt, int64_t band, int64_t *npairs)
{
	int64_t *pairs = malloc((size_t)(2 * nt * nt) * sizeof(*pairs)), r0 = 0;

	*npairs = 0;
	for (int64_t i = 0; pairs && i < nt; r0 += sizes[i++])
		for (int64_t j = 0, c0 = 0; j < nt; c0 += sizes[j++]) {
			/* the distance between the rows' and the columns' element spans */
			int64_t gap = c0 > r0 + sizes[i] - 1 ? c0 - (r0 + sizes[i] - 1)
				    : r0 > c0 + sizes[j] - 1 ? r0 - (c0 + sizes[j] - 1) : 0;

			if (gap <= band) {
				pairs[2 * *npairs] = i;
				pairs[2 * *npairs + 1] = j;
				(*npairs)++;
			}
		}
	return pairs;
}

double banded_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int banded_parse(const char *prog, int argc, char **argv, const struct banded_option *opts,
		 size_t n)
{
	for (int a = 1; a < argc; a++) {
		const struct banded_option *o = opts;

		while (o < opts + n && strcmp(argv[a], o->name))
			o++;
		if (o < opts + n && o->flag) {
			*o->flag = 1;
			continue;
		}
		if (o == opts + n || a + 1 >= argc) {
			fprintf(stderr, "%s: unknown option or missing value: '%s'\n", prog, argv[a]);
			return -1;
		}
		a++;
		if (o->i)
			*o->i = atoll(argv[a]);
		else if (o->d)
			*o->d = atof(argv[a]);
		else
			*o->text = argv[a];
	}
	return 0;
}
