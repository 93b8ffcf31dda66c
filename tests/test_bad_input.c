/*
 * tests/test_bad_input.c — every invalid call returns its error code and a message
 * naming the violated constraint; nothing crashes or aborts, and a correct product
 * follows. Sizes past 32 bits (refused with the limit named, or for the host call
 * computed right), every field of the options and of the configuration, and the
 * lifecycle (calls before stargemm_init(), after stargemm_finalize(), a second init).
 * Output: TAP, one test per case. Runs on one process.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
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

/* A product on ragged tiles, checked against the reference BLAS: the library is still
 * usable after what came before (@p after names it). */
static void product_follows(const char *after)
{
	struct stargemm_matrix *A = NULL, *B = NULL, *C = NULL;
	double *a, *b, *c0, *c = NULL, res = INFINITY;
	char what[200];

	stargemm_matrix_create(&A, 37, 29, 8, 8, 1, 1);
	stargemm_matrix_create(&B, 29, 23, 8, 8, 1, 1);
	stargemm_matrix_create(&C, 37, 23, 8, 8, 1, 1);
	stargemm_matrix_fill_random(A, 1);
	stargemm_matrix_fill_random(B, 2);
	stargemm_matrix_fill_random(C, 3);
	a = sg_gather_new(A);
	b = sg_gather_new(B);
	c0 = sg_gather_new(C);
	if (a && b && c0 && stargemm_pdgemm('N', 'N', 0.5, A, B, 2.0, C) == 0 &&
	    (c = sg_gather_new(C)))
		res = sg_gemm_residual('N', 'N', 37, 23, 29, 0.5, a, b, 2.0, c0, c);
	snprintf(what, sizeof(what), "after %s, a product is correct (residual %.2g)", after,
		 res);
	printf("%s %d - %s\n", res < SG_RESIDUAL_BOUND ? "ok" : "not ok", ++ntests, what);
	sg_free_case(a, b, c0, c, A, B, C);
}

static void before_init(void)
{
	struct stargemm_matrix *X = NULL;
	struct stargemm_transfer_stats st;
	double x = 1.0;
	int64_t nb;

	expect(stargemm_matrix_create(&X, 10, 10, 4, 4, 1, 1), -EINVAL, "stargemm_init",
	       "creating a matrix before stargemm_init is refused");
	expect(stargemm_finalize(), -EINVAL, "not initialised",
	       "stargemm_finalize before stargemm_init is refused");
	expect(stargemm_set_progress(2), -EINVAL, "on must be 0 or 1",
	       "stargemm_set_progress(2) is refused");
	expect(stargemm_set_progress(0), 0, NULL, "stargemm_set_progress(0) succeeds");
	expect(stargemm_pdgemm('N', 'N', 1.0, X, X, 0.0, X), -EINVAL, "stargemm_init",
	       "a product before stargemm_init is refused");
	expect(stargemm_dgemm('N', 'N', 1, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &x, 1), -EINVAL,
	       "stargemm_init", "the host call before stargemm_init is refused");
	expect(stargemm_wait(), -EINVAL, "not initialised",
	       "stargemm_wait before stargemm_init is refused");
	expect(stargemm_tile_recommend(STARGEMM_D, 10, 10, 10, &nb), -EINVAL, "stargemm_init",
	       "the recommended tile before stargemm_init is refused");
	expect(stargemm_transfers_get(&st), -EINVAL, "stargemm_init", "the counters before stargemm_init "
	       "are refused");
	stargemm_matrix_destroy(NULL);
	check(1, "destroying NULL before stargemm_init is a no-op");
}

/* Sizes that the layers below cannot hold: refused with -EOVERFLOW naming the limit
 * before anything is allocated, or, for the host call, computed right. */
static void sizes_past_32_bits(void)
{
	const int64_t big = (int64_t)1 << 32;
	double a[3] = { 1, 2, 3 }, b[2] = { 4, 5 }, c[6], want[6] = { 4, 8, 12, 5, 10, 15 };
	double a6[6] = { 1, 2, 3, 4, 5, 6 }, ones[2] = { 1, 1 };
	int64_t rows[2] = { INT64_MAX / 2 + 1, INT64_MAX / 2 + 1 }, one = 1, huge_tile = big / 2;
	struct stargemm_matrix *X = NULL;
	struct stargemm_plan_request r = { 0 };
	struct stargemm_plan plan;
	double local[4];
	int same;

	for (int t = 0; t < 2; t++) {
		int64_t lda = t ? (int64_t)1 << 61 : big + 1;
		char what[160];

		memset(c, 0, sizeof(c));
		expect(stargemm_dgemm('N', 'N', 3, 2, 1, 1.0, a, lda, b, 1, 0.0, c, 3), 0, NULL,
		       t ? "the host call with lda = 2^61 (k = 1) succeeds"
			 : "the host call with lda = 2^32 + 1 (k = 1) succeeds");
		same = !memcmp(c, want, sizeof(c));
		snprintf(what, sizeof(what), "and its C is BLAS's {4 8 12 5 10 15} (got {%g %g %g "
			 "%g %g %g})", c[0], c[1], c[2], c[3], c[4], c[5]);
		check(same, what);
	}
	memset(c, 0, sizeof(c));
	expect(stargemm_dgemm('N', 'N', 3, 1, 2, 1.0, a6, 3, ones, 2 * big, 0.0, c, big + 7), 0,
	       NULL, "the host call with ldb = 2^33 and ldc = 2^32 + 7 (n = 1) succeeds");
	check(c[0] == 5 && c[1] == 7 && c[2] == 9, "and its C is BLAS's {5 7 9}");
	expect(stargemm_matrix_create(&X, (int64_t)1 << 40, (int64_t)1 << 40, 1, 1, 1, 1),
	       -EOVERFLOW, "limit of 2^40 tiles", "a matrix of 2^80 tiles is refused at once");
	expect(stargemm_matrix_create(&X, INT64_MAX, INT64_MAX, (int64_t)1 << 62,
				      (int64_t)1 << 62, 1, 1), -EOVERFLOW, "more than 2^63 bytes",
	       "a matrix of more than 2^63 bytes is refused");
	expect(stargemm_matrix_create(&X, big, 4, big, 4, 1, 1), -EOVERFLOW, "2^31 - 1 "
	       "(BLAS's and cuBLAS's int)", "a tile side of 2^32 is refused (StarPU would "
	       "truncate it to 0)");
	expect(stargemm_matrix_create(&X, huge_tile, 4, huge_tile, 4, 1, 1), -EOVERFLOW,
	       "2^31 - 1", "a tile side of 2^31 is refused (BLAS's int)");
	expect(stargemm_matrix_create_irregular(&X, 2, rows, 1, &one, 1, 1), -EOVERFLOW,
	       "add up to more than 2^63 - 1", "irregular tile sizes whose sum overflows");
	expect(stargemm_matrix_create_local(&X, 2, 2, 2, 2, 1, 1, local, big), -EOVERFLOW,
	       "leading dimension 4294967296", "a local array with lld = 2^32 is refused");
	X = matrix(10, 7, 4);
	expect(stargemm_matrix_scatter(X, local, big, 0), -EOVERFLOW, "leading dimension",
	       "a scatter from an array with ld = 2^32 is refused");
	expect(stargemm_matrix_gather(X, local, (int64_t)1 << 61, 0), -EOVERFLOW,
	       "leading dimension", "a gather into an array with ld = 2^61 is refused");
	stargemm_matrix_destroy(X);
	r = (struct stargemm_plan_request){ .mt = (int64_t)1 << 40, .nt = (int64_t)1 << 40,
		.kt = 1, .tile_bytes = 8, .P = 1, .Q = 1, .devices = 1,
		.device_bytes = (int64_t)1 << 50 };
	expect(stargemm_plan_compute(&r, &plan), -EOVERFLOW, "2^40 tiles",
	       "a plan for C of 2^80 tiles is refused");
	r.mt = r.nt = r.kt = (int64_t)1 << 13;
	r.device_bytes = INT64_MAX;
	r.tile_bytes = 1;
	r.devices = 7;
	expect(stargemm_plan_compute(&r, &plan), 0, NULL, "a plan for a device of 2^63 bytes");
	check(plan.tiles_needed <= plan.capacity && plan.b >= 1 && plan.c >= 1 && plan.d >= 1,
	      "and it fits its device (no overflow in the need)");
	r.devices = 1 << 20;
	expect(stargemm_plan_compute(&r, &plan), -EINVAL, "at most 1024 devices",
	       "a plan for 2^20 devices per rank is refused");
	product_follows("sizes past 32 bits");
}

/* Every field of the out-of-core and block-sparse options out of its range, refused
 * before any task. */
static void bad_option_fields(void)
{
	struct stargemm_matrix *A = matrix(10, 7, 4), *B = matrix(7, 9, 4), *C = matrix(10, 9, 4);
	struct stargemm_ooc_options o;
	struct stargemm_bsgemm_options bo;
	struct { const char *what, *needle; int field; double value; } ooc[] = {
		{ "b = -1", "b=-1", 0, -1 }, { "c = -2", "c=-2", 1, -2 },
		{ "d = -3", "d=-3", 2, -3 }, { "lookahead = -1", "lookahead=-1", 3, -1 },
		{ "c_fraction = NaN", "c_fraction", 4, NAN },
		{ "c_fraction = 1", "c_fraction", 4, 1.0 },
		{ "c_fraction = -0.5", "c_fraction", 4, -0.5 },
		{ "device_bytes = -1", "device_bytes must be >= 0", 5, -1 },
		{ "usable_fraction = NaN", "usable_fraction", 6, NAN },
		{ "usable_fraction = -0.1", "usable_fraction", 6, -0.1 },
	};
	char what[160];

	for (size_t i = 0; i < sizeof(ooc) / sizeof(ooc[0]); i++) {
		stargemm_ooc_options_init(&o);
		switch (ooc[i].field) {
		case 0: o.b = (int64_t)ooc[i].value; break;
		case 1: o.c = (int64_t)ooc[i].value; break;
		case 2: o.d = (int64_t)ooc[i].value; break;
		case 3: o.lookahead = (int)ooc[i].value; break;
		case 4: o.c_fraction = ooc[i].value; break;
		case 5: o.device_bytes = (int64_t)ooc[i].value; break;
		default: o.usable_fraction = ooc[i].value; break;
		}
		snprintf(what, sizeof(what), "out-of-core option %s is refused", ooc[i].what);
		expect(stargemm_pdgemm_ooc('N', 'N', 1, A, B, 0, C, &o, NULL), -EINVAL,
		       ooc[i].needle, what);
	}
	stargemm_bsgemm_options_init(&bo);
	bo.filter_eps = NAN;
	expect(stargemm_bsgemm('N', 'N', 1, A, B, 0, C, &bo, NULL), -EINVAL, "filter_eps",
	       "block-sparse filter_eps = NaN is refused");
	bo.filter_eps = -1;
	expect(stargemm_bsgemm('N', 'N', 1, A, B, 0, C, &bo, NULL), -EINVAL, "filter_eps",
	       "block-sparse filter_eps = -1 is refused");
	stargemm_bsgemm_options_init(&bo);
	bo.out_of_core = 2;
	expect(stargemm_bsgemm('N', 'N', 1, A, B, 0, C, &bo, NULL), -EINVAL,
	       "out_of_core must be 0 or 1", "block-sparse out_of_core = 2 is refused");
	stargemm_bsgemm_options_init(&bo);
	bo.stationary = 'X';
	expect(stargemm_bsgemm('N', 'N', 1, A, B, 0, C, &bo, NULL), -EINVAL, "stationary must",
	       "block-sparse stationary = 'X' is refused");
	bo.stationary = 'A';
	bo.out_of_core = 1;
	expect(stargemm_bsgemm('N', 'N', 1, A, B, 0, C, &bo, NULL), -EINVAL, "in core",
	       "block-sparse stationary 'A' out of core is refused");
	stargemm_bsgemm_options_init(&bo);
	bo.reuse_b = -1;
	expect(stargemm_bsgemm('N', 'N', 1, A, B, 0, C, &bo, NULL), -EINVAL, "reuse_a and reuse_b",
	       "block-sparse reuse_b = -1 is refused");
	stargemm_bsgemm_options_init(&bo);
	bo.out_of_core = 1;
	bo.ooc.device_bytes = -5;
	expect(stargemm_bsgemm('N', 'N', 1, A, B, 0, C, &bo, NULL), -EINVAL, "device_bytes",
	       "block-sparse out of core with device_bytes = -5 is refused");
	stargemm_matrix_destroy(A);
	stargemm_matrix_destroy(B);
	stargemm_matrix_destroy(C);
	product_follows("options out of range");
}

/* A matrix that outlives the runtime, and what may and may not follow a finalize. */
static void after_finalize(struct stargemm_matrix *survivor, int *argc, char ***argv)
{
	struct stargemm_matrix *X = NULL;
	double x = 1.0;

	expect(stargemm_matrix_create(&X, 10, 10, 4, 4, 1, 1), -EINVAL, "stargemm_init",
	       "creating a matrix after stargemm_finalize is refused");
	expect(stargemm_pdgemm('N', 'N', 1.0, survivor, survivor, 0.0, survivor), -EINVAL,
	       "stargemm_init", "a product on a matrix that outlived the runtime is refused");
	expect(stargemm_dgemm('N', 'N', 1, 1, 1, 1.0, &x, 1, &x, 1, 0.0, &x, 1), -EINVAL,
	       "stargemm_init", "the host call after stargemm_finalize is refused");
	stargemm_matrix_destroy(survivor);
	check(strstr(stargemm_last_error(), "outlived the stargemm_finalize()") != NULL,
	      "destroying a matrix after stargemm_finalize frees its descriptor, with a "
	      "message, and does not abort");
	expect(stargemm_init(NULL, argc, argv), -EINVAL, "MPI cannot start again",
	       "stargemm_init after the stargemm_finalize that ended MPI is refused");
	expect(stargemm_finalize(), -EINVAL, "not initialised",
	       "and stargemm_finalize after that refused init is refused too");
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
	stargemm_config_init(&cfg);
	cfg.ncpus = -2;
	expect(stargemm_init(&cfg, argc, argv), -EINVAL, "ncpus and ncuda must be >= -1",
	       "ncpus = -2 is refused");
	stargemm_config_init(&cfg);
	cfg.ncuda = -7;
	expect(stargemm_init(&cfg, argc, argv), -EINVAL, "ncpus and ncuda must be >= -1",
	       "ncuda = -7 is refused");
	stargemm_config_init(&cfg);
	cfg.sched_policy = "no-such-policy";
	expect(stargemm_init(&cfg, argc, argv), -EINVAL, "unknown scheduling policy "
	       "'no-such-policy'", "an unknown scheduling policy is refused");
	stargemm_config_init(&cfg);
	cfg.count_transfers = 2;
	expect(stargemm_init(&cfg, argc, argv), -EINVAL, "count_transfers must be 0 or 1",
	       "count_transfers = 2 is refused");
	stargemm_config_init(&cfg);
	cfg.disk_mib = -1;
	expect(stargemm_init(&cfg, argc, argv), -EINVAL, "disk_mib must be >= 0",
	       "disk_mib = -1 is refused");
	bad_setting("STARPU_SCHED", "no-such-policy", argc, argv);
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
	struct stargemm_matrix *survivor;

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
	sizes_past_32_bits();
	bad_option_fields();
	survivor = matrix(6, 6, 4);
	expect(stargemm_finalize(), 0, NULL, "stargemm_finalize succeeds, with no message");
	after_finalize(survivor, &argc, &argv);
	expect(stargemm_finalize(), -EINVAL, "not initialised",
	       "a second stargemm_finalize is refused");
	expect(stargemm_wait(), -EINVAL, "not initialised",
	       "stargemm_wait after finalize is refused");
	printf("1..%d\n", ntests);   /* the plan last: it counts what ran */
	return 0;
}
