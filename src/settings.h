/*
 * settings.h — every environment variable stargemm reads, in one table (src/settings.c).
 *
 * Part of the leaf floor (doc/design.md, "Layers"): no StarPU, no MPI; the functions
 * here call only src/error.c. A setting is read from the environment each time it is
 * consulted (when a product, an init or a drop-in call starts), so that a program may
 * change one between calls; its value is checked there and refused with a message
 * that names the variable. The README's "Settings" table lists the same rows
 * (tests/settings.sh holds the two together).
 */
#ifndef STARGEMM_SETTINGS_H
#define STARGEMM_SETTINGS_H

/* The variables, in the order of the table. Numbers: a number >= 0 (strtod); text:
 * the variable's value as it is, or NULL when unset. Foreign variables belong to
 * StarPU, MPI or glibc: stargemm reads them to leave the user's choice in place. */
enum stargemm__setting {
	/* numbers */
	STARGEMM__AGREE_FLOPS,
	STARGEMM__BATCH_BELOW,
	STARGEMM__BATCH_FLOPS,
	STARGEMM__CALIBRATE,
	STARGEMM__DEVICE_POOL,
	STARGEMM__DISK_ONE_FILE,
	STARGEMM__HOST_POOL,
	STARGEMM__HOST_TILE,
	STARGEMM__KEEP_MEMORY,
	STARGEMM__KSPLIT,
	STARGEMM__NETWORK_RATE,
	STARGEMM__PACK_BELOW,
	STARGEMM__PACK_EXTENT,
	STARGEMM__PREFETCH_RECEIVED,
	STARGEMM__SCALAPACK_MIN_FLOPS,
	STARGEMM__XSMM_SHAPES,
	/* text */
	STARGEMM__FAULT,
	STARGEMM__KERNEL_ISA,
	STARGEMM__PROGRESS,
	STARGEMM__SCALAPACK,
	STARGEMM__SCALAPACK_START,
	STARGEMM__STATIONARY,
	/* foreign, text */
	STARGEMM__STARPU_COMM_STATS,
	STARGEMM__STARPU_DISABLE_PINNING,
	STARGEMM__STARPU_FXT_TRACE,
	STARGEMM__STARPU_HOME,
	STARGEMM__STARPU_HOSTNAME,
	STARGEMM__STARPU_NCPU,
	STARGEMM__STARPU_PERF_MODEL_DIR,
	STARGEMM__STARPU_SCHED,
	STARGEMM__STARPU_SIMGRID_CUDA_MALLOC_COST,
	STARGEMM__STARPU_USE_NUMA,
	STARGEMM__GLIBC_TUNABLES,
	STARGEMM__MALLOC_MMAP_THRESHOLD,
	STARGEMM__MALLOC_TRIM_THRESHOLD,
	STARGEMM__HOME,
	STARGEMM__SMPI_GLOBAL_SIZE,
	STARGEMM__NSETTINGS
};

/* One row of the table. */
struct stargemm__setting_row {
	const char *name;     /* the environment variable */
	int is_number;        /* read as a number >= 0, else as text */
	double dflt;          /* a number's default; NAN: chosen by its reader (meaning) */
	const char *meaning;  /* what it sets, its default and accepted values, in a line */
};

/* The row of @p s (NULL out of range). */
const struct stargemm__setting_row *stargemm__setting_row(enum stargemm__setting s);

/* The number setting @p s into @p value: its default when unset, else the variable
 * read as a number >= 0; 0, or -EINVAL (message names the variable and its value)
 * when it is not such a number. */
int stargemm__setting(enum stargemm__setting s, double *value);

/* The text setting @p s: the variable's value, or NULL when unset. */
const char *stargemm__setting_text(enum stargemm__setting s);

#endif
