/*
 * calibrate.h — the rates of the CPU kernels measured on the machine that runs the
 * program (codelets/calibrate.c), from which the small products' kernel
 * (codelets/smallgemm.c) and the recommended tile (src/tile.c) are chosen.
 *
 * Why measured: which of libxsmm's kernels, stargemm's own and the BLAS is fastest for
 * a tile product depends on the CPU and on the libraries' versions (libxsmm beat
 * OpenBLAS up to 256 a side on one AVX-512 machine and only up to 64 on an AVX2 one:
 * doc/performance.md, "Kernel choice"), so no constant holds everywhere. The
 * measurements are kept in a file per machine beside StarPU's performance models and
 * redone when it is missing, does not parse, or was made by another CPU or another
 * version of a library. Kernels floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_CALIBRATE_H
#define STARGEMM_CALIBRATE_H

#include <stddef.h>

#include "codelets.h"

enum {
	STARGEMM__CAL_TYPES = 4,   /* s, d, c, z (stargemm__cal_type()) */
	STARGEMM__CAL_SIDES = 7,   /* cubes of side 4, 8, 16, ..., 256 */
	STARGEMM__CAL_KERNELS = 3, /* enum stargemm__small_kernel */
	STARGEMM__CAL_BIG = 3      /* large BLAS products per type: sides 512, 1024, 2048 */
};

/* The side of large product @p i (512 << i). */
#define STARGEMM__CAL_BIG_SIDE(i) (512 << (i))

struct stargemm__calibration {
	int measured;   /* 0: nothing measured (SimGrid, STARGEMM_CALIBRATE=0): the order */
	/* GFLOP/s of one core on products of side 4 << i, per type and kernel; 0 where the
	 * kernel does not take the product on this build and CPU. */
	double small[STARGEMM__CAL_TYPES][STARGEMM__CAL_SIDES][STARGEMM__CAL_KERNELS];
	/* GFLOP/s of one core on one BLAS product of side STARGEMM__CAL_BIG_SIDE(i), per
	 * type: the tile products of a dense product, whose rate still grows with the side
	 * there on some CPUs (doc/performance.md, "At the recommended tile"). 0 beyond 512: not measured
	 * (one product would have taken too long), nor any larger side. */
	double big[STARGEMM__CAL_TYPES][STARGEMM__CAL_BIG];
};

/* The index of type letter @p letter ('s', 'd', 'c', 'z') in the tables; -1 else. */
int stargemm__cal_type(char letter);
/* The side class of a product: the index i whose side 4 << i is nearest (in ratio) to
 * the cube root of m n k. */
int stargemm__cal_class(int m, int n, int k);

/* One core's BLAS rate in GFLOP/s on a tile product of side @p side of type index
 * @p ti, from @p cal (which must be measured): the small table's BLAS rate up to 256,
 * the large sides' beyond, interpolated in log(side) between measured sides, the
 * largest measured side's beyond it. */
double stargemm__cal_blas_rate(const struct stargemm__calibration *cal, int ti, double side);

/* The calibration in use (never NULL; .measured = 0 before stargemm__calibrate()). */
const struct stargemm__calibration *stargemm__calibration(void);
/* Puts @p cal in use (the tests' synthetic tables); NULL: back to nothing measured. */
void stargemm__calibration_set(const struct stargemm__calibration *cal);

/* Reads the machine's calibration file, or measures (a few seconds on one core) and
 * writes it when it is missing, does not parse, is another machine's or library's, or
 * STARGEMM_CALIBRATE=1; STARGEMM_CALIBRATE=0 measures nothing. Says on stderr why it
 * measures. Processes of one machine measure one at a time (a lock file), and the
 * others read what the first wrote. Before StarPU's threads start (stargemm_init). */
void stargemm__calibrate(void);

/* The file's path into @p path (@p size bytes): $STARPU_PERF_MODEL_DIR, else
 * $STARPU_HOME/.starpu/sampling, else $HOME/.starpu/sampling, then
 * stargemm/kernels.<host> (host: $STARPU_HOSTNAME, else the machine's name). -1 when
 * there is no such directory to name (no HOME). */
int stargemm__calibration_path(char *path, size_t size);

/* The lock file @p path followed by @p suffix, created if need be and taken exclusively
 * (waiting for its holder, a process of this machine): its descriptor, closed to
 * release it; -1 when it cannot be opened. The kernels' file is measured under
 * "kernels.HOST.lock", StarPU started under "kernels.HOST.start.lock" (src/runtime.c). */
int stargemm__lock_file(const char *path, const char *suffix);

/* Parses a calibration file's text @p text into @p cal; 0, or -1 with the reason in
 * @p why (@p why_size bytes): a line that does not parse, a missing or negative rate,
 * or an identity line other than @p identity (another CPU, ISA or library version). */
int stargemm__calibration_parse(const char *text, const char *identity,
				struct stargemm__calibration *cal, char *why, size_t why_size);
/* A note when the BLAS runs kernels older than the CPU (OpenBLAS on a CPU newer than
 * it knows falls back to kernels without AVX: Debian 12's 0.3.21 runs its Prescott
 * kernels, at a sixth of the rate, on Xeons of family 6 model 207) naming the
 * OPENBLAS_CORETYPE to export; NULL when there is nothing to say. Said when the
 * kernels are measured, and kept in their file. */
const char *stargemm__blas_core_note(void);
/* The rule of that note: the OPENBLAS_CORETYPE to suggest for OpenBLAS core @p core on a
 * CPU with AVX2 and FMA (@p avx2_fma), AVX-512 F/VL/BW/DQ (@p avx512), made by AMD
 * (@p amd): NULL when the core already has AVX2 kernels or the CPU has no AVX2. */
const char *stargemm__blas_core_advice(const char *core, int avx2_fma, int avx512, int amd);
/* The identity line of this process: stargemm's, libxsmm's and the BLAS's versions,
 * the small kernels' instruction set, the CPU's name. */
const char *stargemm__calibration_identity(void);

#endif
