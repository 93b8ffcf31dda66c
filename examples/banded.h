/*
 * examples/banded.h — what the application drivers (examples/sign.c,
 * examples/chebyshev.c) share (examples/banded.c): the banded test matrices of a gapped,
 * local system — elements that decay as e^(-decay |r - c|) away from the diagonal and
 * vanish beyond a band — on irregular tilings, with the tiles that meet the band as
 * their pattern; a clock; the parsing of the drivers' options.
 */
#ifndef BANDED_H
#define BANDED_H

#include <stddef.h>
#include <stdint.h>

/* A value uniform in [0, 1), a pure function of the unordered pair (r, c). */
double banded_unit(int64_t r, int64_t c);
/* Off the diagonal (r != c): 0.1 e^(-decay |r - c|) times a symmetric value in [-1, 1),
 * zero beyond the band. */
double banded_offdiagonal(int64_t r, int64_t c, int64_t band, double decay);
/* A Gershgorin bound of a matrix whose diagonal is within [-1, 1] and whose other
 * elements are banded_offdiagonal(): 1 + 0.2 sum_{k=1..band} e^(-decay k). */
double banded_bound(int64_t band, double decay);
/* Tile sizes drawn in [lo, hi] until n elements (the last one ragged), their number in
 * *count; a new array, NULL when out of memory. */
int64_t *banded_tiling(int64_t n, int64_t lo, int64_t hi, int64_t *count);
/* The (i, j) pairs of the tiles of a square tiling (@p sizes, nt tiles a side) that
 * hold elements within the band, their number in *npairs; a new array, or NULL. */
int64_t *banded_pattern(const int64_t *sizes, int64_t nt, int64_t band, int64_t *npairs);
/* Seconds of a monotonic clock. */
double banded_now(void);

/* An option of a driver: "--name VALUE" into an integer, a double or a text, or the
 * flag "--name" (exactly one of the four set). */
struct banded_option {
	const char *name;
	int64_t *i;
	double *d;
	const char **text;
	int *flag;
};
/* Parse argv by @p opts (n of them); -1 with a message naming @p prog on an unknown
 * option or a missing value. */
int banded_parse(const char *prog, int argc, char **argv, const struct banded_option *opts,
		 size_t n);

#endif
