/*
 * tests/pblas_count.c — for tests/pblas.sh: counts, on each process of an MPI run, how
 * its p?gemm_ calls went through libstargemm-scalapack. Preloaded after it
 * (LD_PRELOAD="libstargemm-scalapack.so pblas_count.so"), it sits between the drop-in
 * and the libraries below it:
 *   - stargemm_gemm(): the drop-in's product of a call it runs (src/scalapack.c,
 *     by_stargemm()), counted when it returns 0 and when it fails, then passed on to
 *     libstargemm;
 *   - psgemm_, pdgemm_, pcgemm_, pzgemm_: the drop-in sends a call it does not run to
 *     "the next definition of the symbol" (dlsym(RTLD_NEXT)), which is this one; counted,
 *     then passed on to ScaLAPACK's.
 * The program's own calls reach the drop-in first (preloaded before this), and its
 * error exits and calls with nothing to do reach neither. At exit each process writes
 * "RANK STARGEMM_OK STARGEMM_FAILED SCALAPACK" to $PBLAS_COUNT_DIR/rank.RANK, its rank
 * read from $PMI_RANK (MPICH's launcher).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "stargemm.h"

static long long gemm_ok, gemm_failed, to_scalapack;

static void *next_symbol(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f) {
		fprintf(stderr, "pblas_count: no %s after this library\n", name);
		abort();
	}
	return f;
}

int stargemm_gemm(stargemm_trans transa, stargemm_trans transb, const void *alpha,
		  const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		  const void *beta, struct stargemm_matrix *C)
{
	static int (*next)(stargemm_trans, stargemm_trans, const void *,
			   const struct stargemm_matrix *, const struct stargemm_matrix *,
			   const void *, struct stargemm_matrix *);
	int ret;

	if (!next)
		*(void **)&next = next_symbol("stargemm_gemm");
	ret = next(transa, transb, alpha, A, B, beta, C);
	if (ret == 0)
		gemm_ok++;
	else
		gemm_failed++;
	return ret;
}

/* ScaLAPACK's signature (src/scalapack.h), arguments by address. */
#define PGEMM(name)                                                                        \
	void name(const char *ta, const char *tb, const int *m, const int *n, const int *k,  \
		  const void *alpha, const void *a, const int *ia, const int *ja,            \
		  const int *desca, const void *b, const int *ib, const int *jb,             \
		  const int *descb, const void *beta, void *c, const int *ic, const int *jc, \
		  const int *descc)                                                          \
	{                                                                                  \
		static void (*next)(const char *, const char *, const int *, const int *,  \
				    const int *, const void *, const void *, const int *,  \
				    const int *, const int *, const void *, const int *,   \
				    const int *, const int *, const void *, void *,        \
				    const int *, const int *, const int *);                \
		if (!next)                                                                 \
			*(void **)&next = next_symbol(#name);                              \
		to_scalapack++;                                                            \
		next(ta, tb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c,  \
		     ic, jc, descc);                                                       \
	}
PGEMM(psgemm_)
PGEMM(pdgemm_)
PGEMM(pcgemm_)
PGEMM(pzgemm_)

__attribute__((destructor)) static void write_counts(void)
{
	const char *dir = getenv("PBLAS_COUNT_DIR"), *rank = getenv("PMI_RANK");
	char path[4096];
	FILE *f;

	if (!dir || !rank) {
		fprintf(stderr, "pblas_count: PBLAS_COUNT_DIR or PMI_RANK unset\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/rank.%s", dir, rank);
	if (!(f = fopen(path, "w"))) {
		perror(path);
		return;
	}
	fprintf(f, "%s %lld %lld %lld\n", rank, gemm_ok, gemm_failed, to_scalapack);
	fclose(f);
}
