#!/bin/sh
# tests/install.sh — `make install` (into a staging directory, DESTDIR), then a program
# outside the tree built with `pkg-config --cflags --libs stargemm` against the
# installed header and library only, and run: a ragged block-sparse product checked
# against the dense one; with Fortran, a Fortran program built against the installed
# module (stargemm.mod, libstargemm_fortran) and run. The installed stargemm.pc is read with its prefix moved under
# the staging directory (its Requires, StarPU's .pc files, stay where they are).
stage="$BUILDDIR/tests/install.stage"
work="$BUILDDIR/tests/install.work"
rm -rf "$stage" "$work" && mkdir -p "$work"
unset MAKEFLAGS MFLAGS MAKELEVEL
make -C "$BUILDDIR" install DESTDIR="$stage" >"$work/install.log" 2>&1 ||
	{ echo "FAIL: make install"; tail -20 "$work/install.log"; exit 1; }
prefix=$(sed -n 's/^prefix=//p' "$BUILDDIR/stargemm.pc")
pc=$(find "$stage" -name stargemm.pc | head -n1)
[ -n "$pc" ] || { echo "FAIL: no stargemm.pc installed"; exit 1; }
[ -f "$stage$prefix/include/stargemm.h" ] || { echo "FAIL: stargemm.h not installed"; exit 1; }
sed "s|^prefix=.*|prefix=$stage$prefix|" "$pc" >"$work/stargemm.pc"
# StarPU's .pc files: where configure found them (Makefile.am exports its path)
PKG_CONFIG_PATH="$work:${CONFIGURED_PKG_CONFIG_PATH}${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs stargemm) ||
	{ echo "FAIL: pkg-config stargemm"; exit 1; }
cat >"$work/example.c" <<'PROGRAM'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stargemm.h>

int main(int argc, char **argv)
{
	struct stargemm_config cfg;
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL, *D = NULL;
	int64_t sizes[4] = { 7, 30, 12, 3 }, present[] = { 0, 0, 1, 1, 2, 3, 3, 0, 1, 2 };
	double *c = malloc(52 * 52 * sizeof(double)), *d = malloc(52 * 52 * sizeof(double));
	double diff = 0.0;
	int ret;

	stargemm_config_init(&cfg);
	if (!c || !d || stargemm_init(&cfg, &argc, &argv)) {
		fprintf(stderr, "init: %s\n", stargemm_last_error());
		return 1;
	}
	ret = stargemm_matrix_create_sparse(&A, 4, sizes, 4, sizes, 5, present, 1, 1);
	ret = ret ? ret : stargemm_matrix_create_irregular(&B, 4, sizes, 4, sizes, 1, 1);
	ret = ret ? ret : stargemm_matrix_create_product(&C, 'N', 'N', A, B, NULL);
	ret = ret ? ret : stargemm_matrix_create_irregular(&D, 4, sizes, 4, sizes, 1, 1);
	ret = ret ? ret : stargemm_matrix_fill_random(A, 1);
	ret = ret ? ret : stargemm_matrix_fill_random(B, 2);
	ret = ret ? ret : stargemm_bsgemm('N', 'N', 1.0, A, B, 0.0, C, NULL, NULL);
	ret = ret ? ret : stargemm_pdgemm('N', 'N', 1.0, A, B, 0.0, D);
	ret = ret ? ret : stargemm_matrix_gather(C, c, 52, 0);
	ret = ret ? ret : stargemm_matrix_gather(D, d, 52, 0);
	for (int e = 0; !ret && e < 52 * 52; e++)
		diff = fmax(diff, fabs(c[e] - d[e]));
	if (ret)
		fprintf(stderr, "error %d: %s\n", ret, stargemm_last_error());
	else
		printf("installed stargemm: block-sparse and dense products differ by %g\n", diff);
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	stargemm_matrix_destroy(D);
	stargemm_finalize();
	free(c);
	free(d);
	return ret || diff > 1e-12;
}
PROGRAM
# shellcheck disable=SC2086 # $flags is pkg-config's word list
mpicc.mpich -o "$work/example" "$work/example.c" $flags -lm ||
	{ echo "FAIL: the example does not build with: $flags"; exit 1; }
# the installed library, and StarPU's (the example links it directly, as pkg-config says)
starpu_lib=$(pkg-config --variable=libdir starpu-1.3 2>/dev/null)
LD_LIBRARY_PATH="$stage$prefix/lib:$starpu_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	"$SRCDIR/tests/mpirun.sh" 1 "$work/example" || { echo "FAIL: the example failed"; exit 1; }
# Fortran, when the module was built: a program using it, against the installed
# stargemm.mod and libstargemm_fortran.
fc=$(sed -n 's/^FC = //p' "$BUILDDIR/Makefile")
if [ -f "$stage$prefix/include/stargemm.mod" ] && [ -n "$fc" ]; then
	cat >"$work/example.f90" <<'PROGRAM'
program example
   use, intrinsic :: iso_c_binding
   use stargemm
   implicit none
   type(c_ptr) :: a, c
   real(c_double) :: norm
   integer(c_int) :: ret

   ret = stargemm_init()
   if (ret == 0) ret = stargemm_matrix_create(a, 50_c_int64_t, 40_c_int64_t, 16_c_int64_t, &
      16_c_int64_t, 1_c_int, 1_c_int)
   if (ret == 0) ret = stargemm_matrix_fill_random(a, 3_c_int64_t)
   if (ret == 0) ret = stargemm_matrix_create(c, 40_c_int64_t, 40_c_int64_t, 16_c_int64_t, &
      16_c_int64_t, 1_c_int, 1_c_int)
   if (ret == 0) ret = stargemm_pdgemm('T', 'N', 1.0d0, a, a, 0.0d0, c)
   if (ret == 0) ret = stargemm_matrix_norm(c, norm)
   if (ret /= 0) print '(a)', stargemm_error_message()
   if (ret == 0) print '(a, es12.5)', 'installed stargemm from Fortran: ||A^T A||_F = ', norm
   call stargemm_matrix_destroy(a)
   call stargemm_matrix_destroy(c)
   if (stargemm_finalize() /= 0 .or. ret /= 0) stop 1
end program example
PROGRAM
	# shellcheck disable=SC2086 # $flags is pkg-config's word list
	(cd "$work" && "$fc" -I"$stage$prefix/include" -o example_f example.f90 \
		-L"$stage$prefix/lib" -lstargemm_fortran $flags) ||
		{ echo "FAIL: the Fortran example does not build"; exit 1; }
	LD_LIBRARY_PATH="$stage$prefix/lib:$starpu_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		"$SRCDIR/tests/mpirun.sh" 1 "$work/example_f" ||
		{ echo "FAIL: the Fortran example failed"; exit 1; }
fi
rm -rf "$stage" "$work"
