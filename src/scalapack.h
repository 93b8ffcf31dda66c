/*
 * scalapack.h — the BLACS, ScaLAPACK and PBLAS functions stargemm calls or stands in
 * for, which have no C header of their own: used by libstargemm-scalapack
 * (src/scalapack.c), the benchmark's ScaLAPACK peer (bench/scalapack.c) and the
 * drop-in's test (tests/test_scalapack.c). Not installed.
 */
#ifndef STARGEMM_SCALAPACK_H
#define STARGEMM_SCALAPACK_H

/* BLACS's C interface. */
void Cblacs_get(int ctxt, int what, int *value);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
/* The grid whose process (p, q) is process usermap[p + q ldumap] of the system context. */
void Cblacs_gridmap(int *ctxt, int *usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
/* The elementwise sum of every grid process's m x n integer matrix @p a, over @p scope
 * ("All": the whole grid), into every process's @p a (rdest -1). */
void Cigsum2d(int ctxt, const char *scope, const char *top, int m, int n, int *a, int lda,
	      int rdest, int cdest);

/* ScaLAPACK's tools (Fortran: arguments by address). */
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
	    const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
	       const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);

/* PBLAS's error handler: reports a bad argument (INFO < 0: minus its position, or minus
 * 100 x a descriptor's position + the entry) and, in ScaLAPACK's library, aborts. */
void PB_Cabort(int ictxt, char *rout, int info);

/* p?gemm_: sub(C) = alpha op(sub(A)) op(sub(B)) + beta sub(C), the scalars and arrays of
 * the routine's type. */
typedef void pgemm_fn(const char *ta, const char *tb, const int *m, const int *n,
		      const int *k, const void *alpha, const void *a, const int *ia,
		      const int *ja, const int *desca, const void *b, const int *ib,
		      const int *jb, const int *descb, const void *beta, void *c, const int *ic,
		      const int *jc, const int *descc);
pgemm_fn psgemm_, pdgemm_, pcgemm_, pzgemm_;

#endif /* STARGEMM_SCALAPACK_H */
