/*
 * tests/test_calibrate.c — the CPU kernels measured on the machine
 * (codelets/calibrate.c) and the choices made from them (codelets/smallgemm.c): no MPI,
 * no StarPU run. TAP output.
 *
 * Properties checked:
 *  - the pick: over 20,000 random rate tables and sets of kernels that take a product,
 *    the kernel picked takes it and none that takes it was measured faster;
 *  - the choice of a batched product from a synthetic calibration, over every shape
 *    of sides 1..300 in steps and every type, alpha and tiling: the kernel chosen takes
 *    the product (libxsmm: real, alpha = 1, sides up to 256, not for irregular tilings
 *    when the one kernel takes them; the one kernel: sides up to 256 on a CPU with its
 *    instruction set), and is the fastest of those in the product's side class; with
 *    nothing measured, the built-in order;
 *  - the side classes: the cube root of m n k, nearest power of two from 4 to 256;
 *  - the file: a valid text parses; a line that does not parse, an unknown type or
 *    side, a negative, NaN or missing rate, a BLAS rate of 0, another identity, no
 *    identity, an empty file are each refused with a reason;
 *  - the round trip, in a temporary STARPU_PERF_MODEL_DIR: a missing file is measured
 *    (with a message) and written, every BLAS rate > 0; a second call reads it (no
 *    message, the same rates); a corrupt file and a stale one (another identity) are
 *    measured again with a message naming why and rewritten valid; STARGEMM_CALIBRATE=1
 *    measures again, =0 measures nothing, =7 is refused with a message;
 *  - STARGEMM_KERNEL_ISA: none leaves no small kernel, avx2 limits them to AVX2 + FMA
 *    (where the CPU has it), another value is refused, unset is the CPU's widest.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "internal.h"
#include "../codelets/calibrate.h"
#include "tap.h"



static uint64_t rng = 0xca11b;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static void test_pick(void)
{
	int good = 1;

	for (int trial = 0; trial < 20000; trial++) {
		double rate[STARGEMM__SMALL_NKERNELS];
		unsigned can = (unsigned)(uniform() * 8) | 1u << STARGEMM__SMALL_BLAS;
		enum stargemm__small_kernel k;

		for (int i = 0; i < STARGEMM__SMALL_NKERNELS; i++)
			rate[i] = uniform() < 0.1 ? 0.0 : 100 * uniform();
		k = stargemm__small_pick(rate, can);
		if (!(can >> k & 1u))
			good = 0;
		for (int i = 0; i < STARGEMM__SMALL_NKERNELS; i++)
			if ((can >> i & 1u) && rate[i] > rate[k])
				good = 0;
	}
	tap_ok(good, "pick: the kernel picked takes the product, none that takes it is faster");
}

static void test_classes(void)
{
	tap_ok(stargemm__cal_class(1, 1, 1) == 0 && stargemm__cal_class(4, 4, 4) == 0 &&
	   stargemm__cal_class(8, 8, 8) == 1 && stargemm__cal_class(11, 11, 11) == 1 &&
	   stargemm__cal_class(12, 12, 12) == 2 && stargemm__cal_class(256, 256, 256) == 6 &&
	   stargemm__cal_class(4096, 4096, 4096) == 6 && stargemm__cal_class(64, 1, 1) == 0 &&
	   stargemm__cal_class(256, 16, 16) == 3,
	   "classes: the cube root of m n k, nearest power of two from 4 to 256");
}

/* Whether kernel @p k takes the product, by the rules codelets/smallgemm.c states. */
static int takes(int k, const struct stargemm__element *t, int m, int n, int kk,
		 double alpha, int one_kernel)
{
	int one = m <= 256 && n <= 256 && kk <= 256 && stargemm__dgemm_any_usable();

	switch (k) {
	case STARGEMM__SMALL_ONE:
		return one;
	case STARGEMM__SMALL_XSMM:
#ifdef HAVE_LIBXSMM
		return !t->is_complex && alpha == 1.0 && m <= 256 && n <= 256 && kk <= 256 &&
		       !(one_kernel && one);
#else
		return 0;
#endif
	default:
		return 1;
	}
}

static void test_choice(void)
{
	struct stargemm__calibration cal;
	const char *types = "sdcz";
	const int sides[] = { 1, 3, 5, 8, 13, 20, 31, 48, 64, 97, 128, 200, 256, 257, 300 };
	int nsides = (int)(sizeof(sides) / sizeof(sides[0])), good = 1, order = 1;

	memset(&cal, 0, sizeof(cal));
	cal.measured = 1;
	for (int ti = 0; ti < STARGEMM__CAL_TYPES; ti++) {
		for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
			for (int k = 0; k < STARGEMM__SMALL_NKERNELS; k++)
				cal.small[ti][si][k] = 1 + 50 * uniform();
		for (int bi = 0; bi < STARGEMM__CAL_BIG; bi++)
			cal.big[ti][bi] = 40;
	}
	stargemm__calibration_set(&cal);
	for (int ti = 0; ti < 4; ti++) {
		const struct stargemm__element *t = stargemm__element(types[ti]);

		for (int a = 0; a < nsides; a++)
		for (int b = 0; b < nsides; b++)
		for (int c = 0; c < nsides; c++)
		for (int alpha_one = 0; alpha_one < 2; alpha_one++)
		for (int irregular = 0; irregular < 2; irregular++) {
			int m = sides[a], n = sides[b], k = sides[c];
			double alpha = alpha_one ? 1.0 : -0.5;
			enum stargemm__small_kernel got = stargemm__small_choice(t, 'N', m, n, k,
									alpha, irregular);
			const double *rate = cal.small[ti][stargemm__cal_class(m, n, k)];

			if (!takes(got, t, m, n, k, alpha, irregular))
				good = 0;
			for (int i = 0; i < STARGEMM__SMALL_NKERNELS; i++)
				if (takes(i, t, m, n, k, alpha, irregular) && rate[i] > rate[got])
					good = 0;
		}
	}
	tap_ok(good, "choice: every shape, type, alpha and tiling takes a kernel that takes it "
	   "and none measured faster in its class");
	stargemm__calibration_set(NULL);
	/* nothing measured: the built-in order */
	if (stargemm__dgemm_any_usable())
		order = stargemm__small_choice(stargemm__element('z'), 'N', 20, 20, 20, 1.0, 0) ==
			STARGEMM__SMALL_ONE &&
			stargemm__small_choice(stargemm__element('d'), 'N', 20, 20, 20, 1.0, 1) ==
			STARGEMM__SMALL_ONE;
#ifdef HAVE_LIBXSMM
	order = order && stargemm__small_choice(stargemm__element('d'), 'N', 20, 20, 20, 1.0,
						0) == STARGEMM__SMALL_XSMM;
#endif
	order = order && stargemm__small_choice(stargemm__element('d'), 'N', 300, 20, 20, 1.0,
						0) == STARGEMM__SMALL_BLAS;
	tap_ok(order, "choice without measurements: the built-in order");
}

/* A valid file's text for identity @p id into @p buf. */
static void valid_text(char *buf, size_t size, const char *id)
{
	size_t used = (size_t)snprintf(buf, size, "# comment\nidentity %s\n\n", id);

	for (int ti = 0; ti < 4; ti++) {
		for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
			used += (size_t)snprintf(buf + used, size - used, "small %c %d 1.5 %s 3\n",
						 "sdcz"[ti], 4 << si, ti >= 2 ? "0" : "2.25");
		for (int bi = 0; bi < STARGEMM__CAL_BIG; bi++)
			used += (size_t)snprintf(buf + used, size - used, "big %c %d %d\n",
						 "sdcz"[ti], STARGEMM__CAL_BIG_SIDE(bi), 41 + bi);
	}
}

/* @p text with the first occurrence of @p from replaced by @p to, into @p out. */
static void edited(char *out, size_t size, const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);

	if (!at) {
		snprintf(out, size, "%s", text);
		return;
	}
	snprintf(out, size, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

static void test_parse(void)
{
	static char text[8192], bad[8192];
	struct stargemm__calibration cal;
	char why[512];
	const char *id = "test identity; cpu X";
	const struct { const char *from, *to, *what; } cases[] = {
		{ "small d 16 1.5 2.25 3", "small d 16 1.5 2.25", "a line with a rate missing" },
		{ "small d 16 1.5 2.25 3", "small d 16 1.5 2.25 3 4", "a line with a field more" },
		{ "small d 16", "small q 16", "an unknown type" },
		{ "small d 16", "small d 17", "an unknown side" },
		{ "small d 16 1.5", "small d 16 -1.5", "a negative rate" },
		{ "small d 16 1.5", "small d 16 nan", "a NaN rate" },
		{ "small d 16 1.5 2.25 3", "small d 16 1.5 2.25 0", "a BLAS rate of 0" },
		{ "small d 16 1.5 2.25 3\n", "", "a missing side" },
		{ "big z 1024 42\n", "", "a missing large side" },
		{ "big z 512", "big z 256", "a large side other than 512, 1024, 2048" },
		{ "big z 512 41", "big z 512 0", "side 512 not measured" },
		{ "test identity; cpu X", "test identity; cpu Y", "another identity" },
		{ "identity test identity; cpu X\n", "", "no identity line" },
		{ "small s 4", "smal s 4", "an unknown keyword" },
	};

	valid_text(text, sizeof(text), id);
	tap_ok(stargemm__calibration_parse(text, id, &cal, why, sizeof(why)) == 0 && cal.measured &&
	   cal.small[1][2][STARGEMM__SMALL_XSMM] == 2.25 && cal.big[3][0] == 41 &&
	   cal.big[3][2] == 43 &&
	   cal.small[3][0][STARGEMM__SMALL_XSMM] == 0,
	   "parse: a valid file");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		edited(bad, sizeof(bad), text, cases[i].from, cases[i].to);
		why[0] = '\0';
		tap_ok(strcmp(bad, text) != 0 &&
		   stargemm__calibration_parse(bad, id, &cal, why, sizeof(why)) != 0 &&
		   why[0] != '\0' && !cal.measured, cases[i].what);
		printf("# %s: %s\n", cases[i].what, why);
	}
	tap_ok(stargemm__calibration_parse("", id, &cal, why, sizeof(why)) != 0 &&
	   stargemm__calibration_parse(NULL, id, &cal, why, sizeof(why)) != 0,
	   "parse: an empty file is refused");
}

/* What stargemm__calibrate() wrote on stderr, into @p out (stderr sent to a file). */
static void calibrate_capturing(const char *dir, char *out, size_t size)
{
	char log[4200];
	FILE *f;
	size_t got = 0;

	snprintf(log, sizeof(log), "%s/stderr", dir);
	fflush(stderr);
	int saved = dup(2);

	if (!freopen(log, "w", stderr))
		abort();
	stargemm__calibrate();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	out[0] = '\0';
	if ((f = fopen(log, "r"))) {
		got = fread(out, 1, size - 1, f);
		fclose(f);
	}
	out[got] = '\0';
	fprintf(stdout, "# stderr: %s", got ? out : "(nothing)\n");
}

/* Whether the file at @p path parses as this process's calibration. */
static int file_valid(const char *path)
{
	static char text[1 << 16];
	struct stargemm__calibration cal;
	char why[512];
	FILE *f = fopen(path, "r");
	size_t got;

	if (!f)
		return 0;
	got = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[got] = '\0';
	return stargemm__calibration_parse(text, stargemm__calibration_identity(), &cal, why,
					   sizeof(why)) == 0;
}

/* Whether @p x and @p y hold the same rates to the file's three decimals. */
static int same_rates(const struct stargemm__calibration *x, const struct stargemm__calibration *y)
{
	int same = x->measured == y->measured;

	for (int ti = 0; ti < STARGEMM__CAL_TYPES; ti++) {
		for (int bi = 0; bi < STARGEMM__CAL_BIG; bi++)
			same = same && fabs(x->big[ti][bi] - y->big[ti][bi]) <= 6e-4;
		for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
			for (int k = 0; k < STARGEMM__SMALL_NKERNELS; k++)
				same = same && fabs(x->small[ti][si][k] - y->small[ti][si][k]) <= 6e-4;
	}
	return same;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void test_file(void)
{
	char dir[] = "/tmp/stargemm-calibrate-XXXXXX", path[4096], msg[4096];
	struct stargemm__calibration first;
	int blas_positive = 1;

	if (!mkdtemp(dir)) {
		tap_ok(0, "file: a temporary directory");
		return;
	}
	setenv("STARPU_PERF_MODEL_DIR", dir, 1);
	unsetenv("STARGEMM_CALIBRATE");
	tap_ok(stargemm__calibration_path(path, sizeof(path)) == 0 &&
	   strncmp(path, dir, strlen(dir)) == 0 && strstr(path, "/stargemm/kernels."),
	   "file: under STARPU_PERF_MODEL_DIR/stargemm/");
	printf("# %s\n# identity %s\n", path, stargemm__calibration_identity());

	calibrate_capturing(dir, msg, sizeof(msg));
	first = *stargemm__calibration();
	for (int ti = 0; ti < STARGEMM__CAL_TYPES; ti++) {
		blas_positive = blas_positive && first.big[ti][0] > 0;   /* 512: always */
		for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
			blas_positive = blas_positive &&
					first.small[ti][si][STARGEMM__SMALL_BLAS] > 0;
	}
	tap_ok(first.measured && blas_positive && file_valid(path) &&
	   strstr(msg, "measuring") && strstr(msg, "no file yet"),
	   "file: a missing file is measured, with a message, and written");
	for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
		printf("# d side %3d: one %6.2f xsmm %6.2f blas %6.2f GFLOP/s\n", 4 << si,
		       first.small[1][si][0], first.small[1][si][1], first.small[1][si][2]);
	for (int bi = 0; bi < STARGEMM__CAL_BIG; bi++)
		printf("# d side %d: blas %6.2f GFLOP/s\n", STARGEMM__CAL_BIG_SIDE(bi),
		       first.big[1][bi]);

	calibrate_capturing(dir, msg, sizeof(msg));
	tap_ok(msg[0] == '\0' && same_rates(stargemm__calibration(), &first),
	   "file: a second call reads it, silently, the same rates (to the file's 0.001)");

	write_text(path, "identity x\nsmall d 4 garbage\n");
	calibrate_capturing(dir, msg, sizeof(msg));
	tap_ok(stargemm__calibration()->measured && file_valid(path) && strstr(msg, "measuring") &&
	   strstr(msg, "made for another machine"),
	   "file: another identity is measured again, with a message, and rewritten");

	write_text(path, "\x01\x02 not a calibration\n");
	calibrate_capturing(dir, msg, sizeof(msg));
	tap_ok(stargemm__calibration()->measured && file_valid(path) && strstr(msg, "measuring") &&
	   strstr(msg, "does not parse"),
	   "file: a corrupt file is measured again, with a message, and rewritten");

	setenv("STARGEMM_CALIBRATE", "1", 1);
	calibrate_capturing(dir, msg, sizeof(msg));
	tap_ok(stargemm__calibration()->measured && strstr(msg, "STARGEMM_CALIBRATE=1"),
	   "file: STARGEMM_CALIBRATE=1 measures again");
	setenv("STARGEMM_CALIBRATE", "0", 1);
	calibrate_capturing(dir, msg, sizeof(msg));
	tap_ok(!stargemm__calibration()->measured && msg[0] == '\0',
	   "file: STARGEMM_CALIBRATE=0 measures nothing");
	setenv("STARGEMM_CALIBRATE", "7", 1);
	calibrate_capturing(dir, msg, sizeof(msg));
	tap_ok(stargemm__calibration()->measured && strstr(msg, "STARGEMM_CALIBRATE"),
	   "file: STARGEMM_CALIBRATE=7 is refused with a message, the file read");
	unsetenv("STARGEMM_CALIBRATE");

	unlink(path);
	snprintf(msg, sizeof(msg), "%.4000s.lock", path);
	unlink(msg);
	snprintf(msg, sizeof(msg), "%s/stderr", dir);
	unlink(msg);
	snprintf(msg, sizeof(msg), "%s/stargemm", dir);
	rmdir(msg);
	rmdir(dir);
}

/* STARGEMM_KERNEL_ISA, read by stargemm__small_init() (nothing measured: =0). */
static void test_isa_limit(void)
{
	int widest = stargemm__small_isa();

	setenv("STARGEMM_CALIBRATE", "0", 1);
	setenv("STARGEMM_KERNEL_ISA", "none", 1);
	stargemm__small_init();
	tap_ok(stargemm__small_isa() == STARGEMM__ISA_NONE && !stargemm__dgemm_any_usable(),
	   "STARGEMM_KERNEL_ISA=none: no small kernel");
	setenv("STARGEMM_KERNEL_ISA", "avx2", 1);
	stargemm__small_init();
	tap_ok(stargemm__small_isa() == (widest < STARGEMM__ISA_AVX2 ? widest : STARGEMM__ISA_AVX2),
	   "STARGEMM_KERNEL_ISA=avx2: AVX2 + FMA where the CPU has it");
	setenv("STARGEMM_KERNEL_ISA", "sse", 1);
	stargemm__small_init();
	tap_ok(stargemm__small_isa() == widest, "STARGEMM_KERNEL_ISA=sse: refused, the widest");
	unsetenv("STARGEMM_KERNEL_ISA");
	stargemm__small_init();
	unsetenv("STARGEMM_CALIBRATE");
	tap_ok(stargemm__small_isa() == widest, "STARGEMM_KERNEL_ISA unset: the CPU's widest");
}

/* The BLAS rate by tile side: the small table's up to 256, the large sides' measured
 * rates at 512, 1024, 2048, interpolated in log(side) between, flat beyond. */
static void test_blas_rate(void)
{
	struct stargemm__calibration cal;
	int d = stargemm__cal_type('d');

	memset(&cal, 0, sizeof(cal));
	cal.measured = 1;
	for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
		cal.small[d][si][STARGEMM__SMALL_BLAS] = si + 1;   /* 256: 7 */
	cal.big[d][0] = 40;
	cal.big[d][1] = 60;
	cal.big[d][2] = 80;
	tap_ok(stargemm__cal_blas_rate(&cal, d, 128) == 6 && stargemm__cal_blas_rate(&cal, d, 256) == 7,
	   "blas rate: the small table's up to 256");
	tap_ok(stargemm__cal_blas_rate(&cal, d, 512) == 40 &&
	   stargemm__cal_blas_rate(&cal, d, 1024) == 60 &&
	   stargemm__cal_blas_rate(&cal, d, 2048) == 80, "blas rate: the measured large sides");
	tap_ok(fabs(stargemm__cal_blas_rate(&cal, d, 1024 * sqrt(2.0)) - 70) < 1e-9 &&
	   fabs(stargemm__cal_blas_rate(&cal, d, 256 * sqrt(2.0)) - 23.5) < 1e-9,
	   "blas rate: halfway in log(side) between measured sides, halfway in rate");
	tap_ok(stargemm__cal_blas_rate(&cal, d, 8192) == 80, "blas rate: flat beyond 2048");
	cal.big[d][2] = 0;
	tap_ok(stargemm__cal_blas_rate(&cal, d, 2048) == 60 && stargemm__cal_blas_rate(&cal, d, 4096) == 60,
	   "blas rate: a side not measured (0) takes the largest measured side's");
}

/* The OPENBLAS_CORETYPE the BLAS core note suggests: only for a core without AVX2 on
 * a CPU with it; SkylakeX for AVX-512 on Intel, Haswell for AVX2 alone, Zen on AMD. */
static void test_core_advice(void)
{
	const char *a = stargemm__blas_core_advice("Prescott", 1, 1, 0);
	const char *b = stargemm__blas_core_advice("Prescott", 1, 0, 0);
	const char *c = stargemm__blas_core_advice("Core2", 1, 1, 1);

	tap_ok(a && strcmp(a, "SkylakeX") == 0 && b && strcmp(b, "Haswell") == 0 && c &&
		       strcmp(c, "Zen") == 0,
	       "core advice: Prescott on AVX-512 -> SkylakeX, on AVX2 -> Haswell, on AMD -> Zen");
	tap_ok(!stargemm__blas_core_advice("Haswell", 1, 1, 0) &&
		       !stargemm__blas_core_advice("SKYLAKEX", 1, 1, 0) &&
		       !stargemm__blas_core_advice("Zen", 1, 1, 1) &&
		       !stargemm__blas_core_advice("Prescott", 0, 0, 0) &&
		       !stargemm__blas_core_advice(NULL, 1, 1, 0),
	       "core advice: none for an AVX2 core (any case), a CPU without AVX2, no core");
}

int main(void)
{
	test_pick();
	test_classes();
	test_choice();
	test_blas_rate();
	test_core_advice();
	test_parse();
	test_file();
	test_isa_limit();
	return tap_done();
}
