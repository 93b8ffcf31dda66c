/*
 * settings.c — the table of every environment variable stargemm reads: its name, its
 * default and its meaning, and the two functions that read one.
 *
 * Every default here is a choice that does not depend on the machine (a period, an
 * on/off switch) or one whose reason is given beside it; each row's meaning is what
 * the README's "Settings" table says. Nothing else in the library calls getenv().
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "error.h"
#include "settings.h"

static const struct stargemm__setting_row table[STARGEMM__NSETTINGS] = {
	/* Out of core, the ranks agree whether a task failed about every this many flops
	 * of each rank's work (src/execute.c): a tenth of a second of a 100 GFLOP/s rank,
	 * so that a failure stops every rank soon while the sums stay well under 1% of the
	 * time. */
	[STARGEMM__AGREE_FLOPS] = { "STARGEMM_AGREE_FLOPS", 1, 1e10,
		"flops of each rank's work between two agreements on task failures out of "
		"core (0: at every lookahead + 1 chunks)" },
	/* Tile products below 2 * 256^3 flops are batched (many products per task,
	 * codelets/batch.c); a batch holds about 5 ms of one core's work, so that a task
	 * costs under 0.1% of it (doc/design.md, "Batches"). */
	[STARGEMM__BATCH_BELOW] = { "STARGEMM_BATCH_BELOW", 1, 3.4e7,
		"tile products below this many flops are batched (0: no batches)" },
	[STARGEMM__BATCH_FLOPS] = { "STARGEMM_BATCH_FLOPS", 1, 5e8,
		"flops of one batch task (0: no batches)" },
	/* Unset: measured when the file is missing or stale (codelets/calibrate.c). */
	[STARGEMM__CALIBRATE] = { "STARGEMM_CALIBRATE", 1, NAN,
		"1: stargemm_init() measures the CPU kernels again and rewrites their file; "
		"0: measures nothing, the built-in kernel order serves (unset: measured when "
		"the file is missing or stale)" },
	[STARGEMM__DEVICE_POOL] = { "STARGEMM_DEVICE_POOL", 1, 1,
		"GPU tile buffers come from stargemm's pool of device memory (0: StarPU's "
		"allocator)" },
	[STARGEMM__DISK_ONE_FILE] = { "STARGEMM_DISK_ONE_FILE", 1, 1,
		"a disk node keeps its tiles in one file (src/disk.c; 0: StarPU's unistd "
		"backend, a file per tile)" },
	[STARGEMM__HOST_POOL] = { "STARGEMM_HOST_POOL", 1, 1,
		"with CUDA workers, the host tiles stargemm allocates and the host buffers "
		"StarPU allocates (received tiles) come from pinned slabs kept for the next "
		"ones (src/hostpool.c; 0: StarPU pins each)" },
	/* Chosen by src/host.c: 2048 with GPUs, else from the kernels measured on the
	 * machine (codelets/calibrate.c) and the problem's size. */
	[STARGEMM__HOST_TILE] = { "STARGEMM_HOST_TILE", 1, NAN,
		"tile side of the host call stargemm_?gemm() (1 to 65536; default 2048 with "
		"GPUs, else chosen from the kernels measured on the machine)" },
	[STARGEMM__KEEP_MEMORY] = { "STARGEMM_KEEP_MEMORY", 1, 1,
		"freed buffers below 32 MiB are kept in glibc's heaps, and up to 1 GiB of free "
		"heap top (0: glibc's defaults; also off when the user set glibc's malloc "
		"tunables)" },
	/* Auto: a product whose C has fewer tiles than the workers splits its inner
	 * dimension (src/ksplit.c). */
	[STARGEMM__KSPLIT] = { "STARGEMM_KSPLIT", 1, 1,
		"in core, a C of fewer tiles than the workers splits the inner dimension over "
		"ranks and workers and sums the partial tiles (0: never; 2: always)" },
	/* The stationary choice's network rate (src/network.c): measured unless set. */
	[STARGEMM__NETWORK_RATE] = { "STARGEMM_NETWORK_RATE", 1, NAN,
		"bytes per second a rank sends and receives in tiles over StarPU-MPI, for the "
		"stationary choice (unset: measured once, a ring of 16 tiles of 256 KiB)" },
	/* An axis of a block-sparse matrix is packed (several tiles per StarPU handle,
	 * src/pack.c) below a mean tile extent of 64, into groups of at least 256. */
	[STARGEMM__PACK_BELOW] = { "STARGEMM_PACK_BELOW", 1, 64,
		"an axis of a block-sparse matrix whose mean tile extent is below this is "
		"packed (0: never)" },
	[STARGEMM__PACK_EXTENT] = { "STARGEMM_PACK_EXTENT", 1, 256,
		"least extent of a pack's tile rows or columns, in elements" },
	/* Off: on the simulated grids it has not shortened a run yet, and was 1-2% slower
	 * once host buffers were kept (doc/out-of-core.md, "Tiles received over MPI are
	 * prefetched"). */
	[STARGEMM__PREFETCH_RECEIVED] = { "STARGEMM_PREFETCH_RECEIVED", 1, 0,
		"1: out of core on GPUs, a tile received over MPI is prefetched to its GPU as "
		"soon as it lands (0: when its task becomes ready)" },
	/* Below it, stargemm's cost per call exceeds what it gains (doc/performance.md,
	 * "ScaLAPACK drop-in"). */
	[STARGEMM__SCALAPACK_MIN_FLOPS] = { "STARGEMM_SCALAPACK_MIN_FLOPS", 1, 3e9,
		"drop-in calls of fewer flops per process go to ScaLAPACK (0: every call to "
		"stargemm)" },
	/* Beyond this many tile shapes the per-shape JIT kernels no longer stay in cache
	 * and the one kernel for every shape is faster (doc/design.md, "Small kernels"). */
	[STARGEMM__XSMM_SHAPES] = { "STARGEMM_XSMM_SHAPES", 1, 64,
		"batched products take libxsmm's kernels while the tilings give at most this "
		"many (m, n, k) shapes, else the one kernel for every shape" },
	[STARGEMM__FAULT] = { "STARGEMM_FAULT", 0, NAN,
		"WHAT:RANK:N makes the N-th event WHAT (insert, kernel, scratch or blas) fail on "
		"rank RANK, for the fault tests (unset: none)" },
	[STARGEMM__KERNEL_ISA] = { "STARGEMM_KERNEL_ISA", 0, NAN,
		"'avx2' or 'none': stargemm's small kernels use no wider instruction set than "
		"this, though the CPU has one ('avx512': the default, the CPU's widest)" },
	[STARGEMM__PROGRESS] = { "STARGEMM_PROGRESS", 0, NAN,
		"'force': stargemm_set_progress(1) prints its line even when stderr is not a "
		"terminal" },
	[STARGEMM__SCALAPACK] = { "STARGEMM_SCALAPACK", 0, NAN,
		"'off': every drop-in call goes to ScaLAPACK; 'count': rank 0 prints at "
		"MPI_Finalize how the calls went" },
	[STARGEMM__SCALAPACK_START] = { "STARGEMM_SCALAPACK_START", 0, NAN,
		"'first-call': the drop-in starts stargemm at the first call it runs, on that "
		"grid's processes only (a grid of other processes goes to ScaLAPACK); else in "
		"MPI_Init, on every process, so that every grid runs on it" },
	[STARGEMM__STATIONARY] = { "STARGEMM_STATIONARY", 0, NAN,
		"'A', 'B' or 'C': in core, the operand that stays where it lives (unset or 'auto': "
		"chosen by the cost model, src/stationary.c); the bsgemm option overrides it" },
	[STARGEMM__STARPU_COMM_STATS] = { "STARPU_COMM_STATS", 0, NAN,
		"StarPU's; when unset and transfers are counted, stargemm sets it and hides "
		"StarPU's report" },
	[STARGEMM__STARPU_DISABLE_PINNING] = { "STARPU_DISABLE_PINNING", 1, 0,
		"StarPU's; when > 0 nothing is pinned, and the pinned host pool is off" },
	[STARGEMM__STARPU_FXT_TRACE] = { "STARPU_FXT_TRACE", 0, NAN,
		"StarPU's; stargemm sets 0 unless set (no trace unless asked for)" },
	[STARGEMM__STARPU_HOME] = { "STARPU_HOME", 0, NAN,
		"StarPU's; the kernels' file is under $STARPU_HOME/.starpu/sampling/stargemm "
		"(else $HOME's)" },
	[STARGEMM__STARPU_HOSTNAME] = { "STARPU_HOSTNAME", 0, NAN,
		"StarPU's; names the kernels' file (else the machine's name)" },
	[STARGEMM__STARPU_NCPU] = { "STARPU_NCPU", 0, NAN,
		"StarPU's; when set, the drop-in leaves the CPU worker count to it" },
	[STARGEMM__STARPU_PERF_MODEL_DIR] = { "STARPU_PERF_MODEL_DIR", 0, NAN,
		"StarPU's; when set, the kernels' file is under it, in stargemm/" },
	[STARGEMM__STARPU_SCHED] = { "STARPU_SCHED", 0, NAN,
		"StarPU's; when set (and stargemm_config.sched_policy is not), its policy "
		"replaces stargemm's out-of-core policy" },
	[STARGEMM__STARPU_SIMGRID_CUDA_MALLOC_COST] = { "STARPU_SIMGRID_CUDA_MALLOC_COST", 1, 1,
		"StarPU's; in simulation, 0: pinning host memory takes no simulated time "
		"(the pinned host pool's slabs as StarPU's own buffers)" },
	[STARGEMM__STARPU_USE_NUMA] = { "STARPU_USE_NUMA", 1, 0,
		"StarPU's; when > 0 StarPU may bind host buffers to NUMA nodes, and pins them "
		"itself: they are kept under a host budget, not in the pinned host pool" },
	[STARGEMM__GLIBC_TUNABLES] = { "GLIBC_TUNABLES", 0, NAN,
		"glibc's; with a glibc.malloc. tunable, STARGEMM_KEEP_MEMORY does nothing" },
	[STARGEMM__MALLOC_MMAP_THRESHOLD] = { "MALLOC_MMAP_THRESHOLD_", 0, NAN,
		"glibc's; when set, STARGEMM_KEEP_MEMORY does nothing" },
	[STARGEMM__MALLOC_TRIM_THRESHOLD] = { "MALLOC_TRIM_THRESHOLD_", 0, NAN,
		"glibc's; when set, STARGEMM_KEEP_MEMORY does nothing" },
	[STARGEMM__HOME] = { "HOME", 0, NAN,
		"the kernels' file is under $HOME/.starpu/sampling/stargemm when STARPU_HOME "
		"and STARPU_PERF_MODEL_DIR are unset" },
	[STARGEMM__SMPI_GLOBAL_SIZE] = { "SMPI_GLOBAL_SIZE", 0, NAN,
		"SimGrid's SMPI sets it to the simulated ranks; in simulation with GPUs, "
		"each rank's host budget is half the machine's memory over them" },
};

const struct stargemm__setting_row *stargemm__setting_row(enum stargemm__setting s)
{
	return (int)s >= 0 && s < STARGEMM__NSETTINGS ? &table[s] : NULL;
}

int stargemm__setting(enum stargemm__setting s, double *value)
{
	const struct stargemm__setting_row *row = &table[s];
	const char *env = getenv(row->name);
	char *end;

	*value = row->dflt;
	if (!env)
		return 0;
	errno = 0;
	*value = strtod(env, &end);
	if (errno || end == env || *end || !(*value >= 0.0) || !isfinite(*value))
		return stargemm__error(-EINVAL, "environment variable %s='%s': expected a "
				       "number >= 0", row->name, env);
	return 0;
}

const char *stargemm__setting_text(enum stargemm__setting s)
{
	return getenv(table[s].name);
}
