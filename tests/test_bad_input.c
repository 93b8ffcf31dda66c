/*
 * tests/test_bad_input.c — every invalid call returns its error code and a message
 * naming the violated constraint; nothing crashes or aborts. Output: TAP, one test
 * per case. Runs on one process.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stargemm.h"

static int ntests;

/* One TAP line: the call returned @p expected and its message contains @p needle. */
/* A call's result: @p got must be @p expected and the last error must mention
 * @p needle (NULL: no message at all, for a call that must succeed). */
static void expect(int got, int expected, const char *needle, const char *what)
{
	const char *msg = stargemm_last_error();
	int ok = got == expected && (needle ? strstr(msg, needle) != NULL : msg[0] == '\0');

	printf("%s %d - %s\n", ok ? "ok" : "not ok", ++ntests, what);
	printf("#   returned %d (expected %d), message: \"%s\" (must %s \"%s\")\n", got,
	       expected, msg, needle ? "mention" : "be empty, not", needle ? needle : msg);
}

/* A condition that involves no call's message. */
static void check(int cond, const char *what)
{
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ++ntests, what);
}

static struct stargemm_matrix *matrix(int64_t m, int64_t n, int64_t tile)
{
	struct stargemm_matrix *X = NULL;

	if (stargemm_matrix_create(&X, m, n, tile, tile, 1, 1) != 0)
		printf("# setup failed: %s\n", stargemm_last_error());
	return X;
}

static void before_init(void)
{
	struct stargemm_matrix *X = NULL;

	expect(stargemm_matrix_create(&X, 10, 10, 4, 4, 1, 1), -EINVAL, "stargemm_init",
	       "creating a matrix before stargemm_init is refused");
	expect(stargemm_finalize(), -EINVAL, "not initialised",
	       "stargemm_finalize before stargemm_init is refused");
	expect(stargemm_set_progress(2), -EINVAL, "on must be 0 or 1",
	       "stargemm_set_progress(2) is refused");
	expect(stargemm_set_progress(0), 0, NULL, "stargemm_set_progress(0) succeeds");
}

/* A setting that stargemm reads once StarPU runs, refused before MPI and StarPU start
 * (src/runtime.c, check_settings()): StarPU-MPI 1.3 stops with a barrier on
 * MPI_COMM_WORLD, which processes outside stargemm's communicator would not join. */
static void bad_setting(const char *name, const char *value, int *argc, char ***argv)
{
	char what[160];
	int mpi_started;

	setenv(name, value, 1);
	snprintf(what, sizeof(what), "%s='%s' is refused before MPI and StarPU start", name,
		 value);
	expect(stargemm_init(NULL, argc, argv), -EINVAL, name, what);
	MPI_Initialized(&mpi_started);
	snprintf(what, sizeof(what), "%s='%s': MPI was not started for it", name, value);
	check(!mpi_started, what);
	unsetenv(name);
}

static void bad_configs(int *argc, char ***argv)
{
	struct stargemm_config cfg;

	stargemm_config_init(&cfg);
	cfg.disk_dir = "/tmp";
	cfg.disk_mib = 8;
	expect(stargemm_init(&cfg, argc, argv), -EINVAL, "disk_mib >= 16",
	       "a disk node smaller than StarPU's minimum is refused");
	stargemm_config_init(&cfg);
	cfg.disk_dir = "/nonexistent/stargemm-disk";
	cfg.disk_mib = 64;
	expect(stargemm_init(&cfg, argc, argv), -EINVAL, "is not an existing directory",
	       "a disk node in a missing directory is refused");
	cfg.disk_dir = "/proc/self";
	expect(stargemm_init(&cfg, argc, argv), -EACCES, "is not writable",
	       "a disk node in a directory that cannot be written is refused");
	stargemm_config_init(&cfg);
	cfg.ram_limit_mib = -5;
	expect(stargemm_init(&cfg, argc, argv), -EINVAL, "ram_limit_mib must be >= 0",
	       "a negative RAM budget is refused");
	bad_setting("STARGEMM_DEVICE_POOL", "abc", argc, argv);
	bad_setting("STARGEMM_FAULT", "foo:0:1", argc, argv);
}

static void bad_ooc(void)
{
	struct stargemm_matrix *A = matrix(10, 7, 4), *B = matrix(7, 9, 4), *C = matrix(10, 9, 4);
	struct stargemm_ooc_options opt;
	struct stargemm_plan plan;

	stargemm_ooc_options_init(&opt);
	opt.usable_fraction = 1.5;
	expect(stargemm_pdgemm_ooc('N', 'N', 1, A, B, 0, C, &opt, &plan), -EINVAL,
	       "usable_fraction", "an out-of-core usable fraction above 1 is refused");
	stargemm_ooc_options_init(&opt);
	opt.device_bytes = 100;
	expect(stargemm_pdgemm_ooc('N', 'N', 1, A, B, 0, C, &opt, &plan), -EINVAL,
	       "cannot hold one tile", "a device smaller than a tile is refused before any task");
	expect(stargemm_pdgemm_plan('N', 'N', A, B, C, NULL, NULL), -EINVAL, "plan is NULL",
	       "planning into a NULL plan");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
}

static void bad_matrices(void)
{
	struct stargemm_matrix *X = NULL;
	int64_t sizes[] = { 4, 0, 4 }, good[] = { 4, 4 };

	expect(stargemm_matrix_create(&X, 0, 10, 4, 4, 1, 1), -EINVAL, "M=0",
	       "zero number of rows");
	expect(stargemm_matrix_create(&X, 10, -3, 4, 4, 1, 1), -EINVAL, "N=-3",
	       "negative number of columns");
	expect(stargemm_matrix_create(&X, 10, 10, 0, 4, 1, 1), -EINVAL, "mb=0",
	       "zero tile size");
	expect(stargemm_matrix_create(&X, 10, 10, 4, -2, 1, 1), -EINVAL, "nb=-2",
	       "negative tile size");
	expect(stargemm_matrix_create(&X, 10, 10, 4, 4, 2, 1), -EINVAL, "number of MPI",
	       "P x Q grid larger than the number of processes");
	expect(stargemm_matrix_create(&X, 10, 10, 4, 4, 0, 1), -EINVAL, "P=0",
	       "non-positive grid dimension");
	expect(stargemm_matrix_create(NULL, 10, 10, 4, 4, 1, 1), -EINVAL, "NULL",
	       "NULL output pointer");
	expect(stargemm_matrix_create_irregular(&X, 3, sizes, 2, good, 1, 1), -EINVAL,
	       "tile row 1 has size 0", "irregular tiling with an empty tile");
	expect(stargemm_matrix_create_irregular(&X, 2, NULL, 2, good, 1, 1), -EINVAL, "NULL",
	       "irregular tiling without a sizes array");
	check(X == NULL, "no matrix is returned by a failed create");
}

static void bad_gemms(void)
{
	struct stargemm_matrix *A = matrix(10, 7, 4), *B = matrix(7, 9, 4),
			       *C = matrix(10, 9, 4), *Bk = matrix(8, 9, 4),
			       *Cm = matrix(11, 9, 4), *Bt = matrix(7, 9, 3), *A2 = matrix(10, 10, 4);

	expect(stargemm_pdgemm('N', 'N', 1, A, Bk, 0, C), -EINVAL, "columns of op(A) (7) must "
	       "equal rows of op(B) (8)", "inner dimensions differ");
	expect(stargemm_pdgemm('N', 'N', 1, A, B, 0, Cm), -EINVAL, "rows of op(A) (10) must "
	       "equal rows of C (11)", "C has the wrong number of rows");
	expect(stargemm_pdgemm('T', 'N', 1, A, B, 0, C), -EINVAL, "rows of op(A) (7)",
	       "transposition makes the dimensions incompatible");
	expect(stargemm_pdgemm('N', 'N', 1, A, Bt, 0, C), -EINVAL, "tiling",
	       "same sizes but different tilings");
	expect(stargemm_pdgemm('N', 'N', 1, NULL, B, 0, C), -EINVAL, "matrix A is NULL",
	       "NULL A");
	expect(stargemm_pdgemm('N', 'N', 1, A, B, 0, NULL), -EINVAL, "matrix C is NULL",
	       "NULL C");
	expect(stargemm_pdgemm('X', 'N', 1, A, B, 0, C), -EINVAL, "'N', 'T' or 'C'",
	       "invalid transposition character");
	expect(stargemm_pdgemm('N', 'N', 1, A2, A2, 0, A2), -EINVAL, "must not be the same",
	       "C aliasing A and B");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	stargemm_matrix_destroy(Bk);
	stargemm_matrix_destroy(Cm);
	stargemm_matrix_destroy(Bt);
	stargemm_matrix_destroy(A2);
}

static void bad_io(void)
{
	struct stargemm_matrix *A = matrix(10, 7, 4);
	double full[70];

	expect(stargemm_matrix_scatter(A, full, 9, 0), -EINVAL, "ld=9 must be >= M=10",
	       "scatter with a too small leading dimension");
	expect(stargemm_matrix_scatter(A, NULL, 10, 0), -EINVAL, "NULL on the root",
	       "scatter from a NULL array");
	expect(stargemm_matrix_gather(A, full, 10, 3), -EINVAL, "root rank 3",
	       "gather to a rank outside the communicator");
	expect(stargemm_matrix_fill(A, NULL, NULL), -EINVAL, "fill function is NULL",
	       "fill without a function");
	expect(stargemm_matrix_scatter(NULL, full, 10, 0), -EINVAL, "matrix A is NULL",
	       "scatter into a NULL matrix");
	stargemm_matrix_destroy(A);
}

int main(int argc, char **argv)
{
	before_init();
	bad_configs(&argc, &argv);
	if (stargemm_init(NULL, &argc, &argv) != 0) {
		printf("Bail out! stargemm_init failed: %s\n", stargemm_last_error());
		return 1;
	}
	if (stargemm_nranks() != 1) {
		printf("Bail out! run on exactly one process\n");
		stargemm_finalize();
		return 1;
	}
	expect(stargemm_init(NULL, &argc, &argv), -EINVAL, "already initialised",
	       "a second stargemm_init is refused");
	/* The StarPU settings stargemm_init exports when the user has not (src/runtime.c);
	 * tests/mpirun.sh sets neither of the first two. */
	check(getenv("STARPU_CUDA_PIPELINE") && !strcmp(getenv("STARPU_CUDA_PIPELINE"), "4"),
	      "stargemm_init sets a CUDA pipeline of 4 GEMMs per GPU by default");
	check(getenv("STARPU_WORKERS_GETBIND") && !strcmp(getenv("STARPU_WORKERS_GETBIND"), "1"),
	      "stargemm_init has workers follow the process's affinity mask by default");
	check(getenv("STARPU_FXT_TRACE") && !strcmp(getenv("STARPU_FXT_TRACE"), "0"),
	      "stargemm_init leaves FxT tracing off by default (tests/bad_input.tap unsets it)");
	if (stargemm_ncuda_workers() > 0)
		check(getenv("STARPU_LIMIT_CPU_MEM") &&
		      atoll(getenv("STARPU_LIMIT_CPU_MEM")) ==
			      (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) /
				      (1024 * 1024),
		      "stargemm_init, with CUDA workers and no RAM budget given, sets StarPU's "
		      "host budget to this rank's share of the machine's memory (the only "
		      "rank here), so that StarPU keeps the pinned buffers of received tiles "
		      "(tests/bad_input.tap unsets it)");
	else
		check(getenv("STARPU_LIMIT_CPU_MEM") == NULL,
		      "stargemm_init, without CUDA workers and no RAM budget given, sets no "
		      "host budget: StarPU frees unpinned buffers at once (tests/bad_input.tap "
		      "unsets it)");
	bad_matrices();
	bad_gemms();
	bad_io();
	bad_ooc();
	expect(stargemm_finalize(), 0, NULL, "stargemm_finalize succeeds, with no message");
	expect(stargemm_finalize(), -EINVAL, "not initialised",
	       "a second stargemm_finalize is refused");
	expect(stargemm_wait(), -EINVAL, "not initialised",
	       "stargemm_wait after finalize is refused");
	printf("1..%d\n", ntests);   /* the plan last: it counts what ran */
	return 0;
}
