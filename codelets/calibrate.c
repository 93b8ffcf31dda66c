/*
 * codelets/calibrate.c — the CPU kernels' rates measured on the machine that runs the
 * program, kept in a file per machine beside StarPU's performance models
 * (codelets/calibrate.h says what they decide and why they are measured).
 *
 * What is measured, on one core, before StarPU's threads start: for each element type
 * and each cube side 4, 8, ..., 256, the rate of each small-product kernel that takes
 * it here (stargemm's one kernel for every shape, libxsmm's JIT kernel, one BLAS call),
 * the way a batch calls it (alpha = 1, beta = 1; from 64 a side A and B from memory, C
 * in cache); and one BLAS product of side 512, 1024 and 2048 per type, the tile
 * products of a dense product (whose tile is chosen from them, src/tile.c). Each rate
 * is the best of three trials of at least a millisecond after an untimed call; a large
 * side stops its trials after a quarter of a second, and a side whose one product would
 * take more than half a second at the rate of the side below is not measured (rate 0
 * in the file: the side below's serves; at 60 GFLOP/s a core, 2048 in c and z): a few
 * seconds in all.
 *
 * The file: comment lines, an identity line (stargemm's, libxsmm's and the BLAS's
 * versions, the kernels' instruction set, the CPU), then a line per type and side and a
 * line per type. A file that does not parse, lacks a rate, or names another identity is
 * measured again, with a message; so is a missing one. Processes of one machine take a
 * lock file in turn: the first measures and writes (to a temporary file renamed over
 * the old one), the others then read it. When the file cannot be written, the rates
 * serve this process only, with a message.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBXSMM
#include <libxsmm.h>
#endif

#include <starpu.h>

#include "../src/settings.h"
#include "calibrate.h"
#include "element.h"

#ifdef HAVE_OPENBLAS_GET_CONFIG
char *openblas_get_config(void);
#endif
#ifdef HAVE_OPENBLAS_GET_CORENAME
char *openblas_get_corename(void);
#endif
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
void openblas_set_num_threads(int nthreads);
#endif

#define TRIAL_S 1e-3    /* a trial runs at least this long (a clock tick is far less) */
#define TRIALS 3        /* the best of them is kept */
#define SIDE_S 0.25     /* a large side's trials stop once they took this long */
#define PRODUCT_S 0.5   /* a large side whose one product would take longer: not measured */

static const char letters[STARGEMM__CAL_TYPES] = { 's', 'd', 'c', 'z' };

static struct stargemm__calibration current;

int stargemm__cal_type(char letter)
{
	for (int i = 0; i < STARGEMM__CAL_TYPES; i++)
		if (letters[i] == letter)
			return i;
	return -1;
}

int stargemm__cal_class(int m, int n, int k)
{
	/* Class i (side 2^(i + 2)) up to the volume of the cube of side 2^(i + 2.5), the
	 * geometric mean of its side and the next: 2^(3 i + 7.5). Compared as doubles, no
	 * cube root: the batches ask it for every shape they meet. */
	double volume = (double)m * (double)n * (double)k, bound = 181.01933598375618;
	int i = 0;

	for (; i < STARGEMM__CAL_SIDES - 1 && volume > bound; i++)
		bound *= 8.0;   /* 2^7.5, then times 2^3 a class */
	return i;
}

double stargemm__cal_blas_rate(const struct stargemm__calibration *cal, int ti, double side)
{
	/* The measured sides: 256 (the small table's last), then the large ones measured
	 * (a rate of 0: not measured, nor any larger). */
	double sides[1 + STARGEMM__CAL_BIG], rates[1 + STARGEMM__CAL_BIG];
	int n = 1, i = 1;

	sides[0] = 4 << (STARGEMM__CAL_SIDES - 1);
	rates[0] = cal->small[ti][STARGEMM__CAL_SIDES - 1][STARGEMM__SMALL_BLAS];
	for (int bi = 0; bi < STARGEMM__CAL_BIG && cal->big[ti][bi] > 0; bi++, n++) {
		sides[n] = STARGEMM__CAL_BIG_SIDE(bi);
		rates[n] = cal->big[ti][bi];
	}
	if (side <= sides[0])
		return cal->small[ti][stargemm__cal_class((int)side, (int)side, (int)side)]
				 [STARGEMM__SMALL_BLAS];
	if (side >= sides[n - 1])
		return rates[n - 1];
	while (sides[i] < side)
		i++;
	return rates[i - 1] + (rates[i] - rates[i - 1]) * log(side / sides[i - 1]) /
				      log(sides[i] / sides[i - 1]);
}

const struct stargemm__calibration *stargemm__calibration(void)
{
	return &current;
}

void stargemm__calibration_set(const struct stargemm__calibration *cal)
{
	if (cal)
		current = *cal;
	else
		memset(&current, 0, sizeof(current));
}

/* ---- identity and path ----------------------------------------------------------- */

/* The CPU's name, family and model from /proc/cpuinfo's first processor, in one pass;
 * "?" for what it lacks. */
struct cpu_names {
	char model_name[256], family[32], model[32];
};

static void cpuinfo(struct cpu_names *cpu)
{
	struct { const char *key; char *out; size_t size; } want[] = {
		{ "model name", cpu->model_name, sizeof(cpu->model_name) },
		{ "cpu family", cpu->family, sizeof(cpu->family) },
		{ "model", cpu->model, sizeof(cpu->model) },
	};
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	int found = 0;

	for (int i = 0; i < 3; i++)
		snprintf(want[i].out, want[i].size, "?");
	while (f && found < 3 && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		for (int i = 0; i < 3 && colon; i++) {
			size_t len = strlen(want[i].key);

			if (strncmp(line, want[i].key, len) == 0 &&
			    (line[len] == ' ' || line[len] == '\t') && want[i].out[0] == '?') {
				snprintf(want[i].out, want[i].size, "%s", colon + 1 + (colon[1] == ' '));
				want[i].out[strcspn(want[i].out, "\n")] = '\0';
				found++;
			}
		}
	}
	if (f)
		fclose(f);
}

const char *stargemm__calibration_identity(void)
{
	static char id[1024];
	struct cpu_names cpu;
	const char *blas = "cblas";

#ifdef HAVE_OPENBLAS_GET_CONFIG
	blas = openblas_get_config();
#endif
	cpuinfo(&cpu);
	snprintf(id, sizeof(id), "stargemm %s; kernels %s; libxsmm %s; blas %s; cpu %s "
		 "(family %s model %s)", PACKAGE_VERSION,
		 stargemm__small_isa_name(stargemm__small_isa()),
#ifdef HAVE_LIBXSMM
		 LIBXSMM_VERSION,
#else
		 "none",
#endif
		 blas, cpu.model_name, cpu.family, cpu.model);
	for (char *p = id; *p; p++)   /* one line */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return id;
}

/* OpenBLAS's x86 kernels that use AVX2 and FMA, or AVX-512. */
static int core_has_avx2(const char *core)
{
	static const char *const cores[] = { "haswell", "zen", "skylakex", "cooperlake",
					     "sapphirerapids", "excavator" };

	for (size_t i = 0; i < sizeof(cores) / sizeof(cores[0]); i++)
		if (strcasecmp(core, cores[i]) == 0)
			return 1;
	return 0;
}

const char *stargemm__blas_core_advice(const char *core, int avx2_fma, int avx512, int amd)
{
	if (!core || !avx2_fma || core_has_avx2(core))
		return NULL;
	return amd ? "Zen" : avx512 ? "SkylakeX" : "Haswell";
}

const char *stargemm__blas_core_note(void)
{
	static char note[1024];
#if defined(HAVE_OPENBLAS_GET_CORENAME) && (defined(__x86_64__) || defined(__i386__))
	const char *core = openblas_get_corename(), *want;
	struct cpu_names cpu;
	int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
		     __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");

	want = stargemm__blas_core_advice(core, __builtin_cpu_supports("avx2") &&
						__builtin_cpu_supports("fma"),
					  avx512, __builtin_cpu_is("amd"));
	if (!want)
		return NULL;
	cpuinfo(&cpu);
	snprintf(note, sizeof(note), "OpenBLAS runs its %s kernels on this CPU (%s, family %s "
		 "model %s), which has %s: this OpenBLAS does not know the CPU. Export "
		 "OPENBLAS_CORETYPE=%s before the program starts for its %s kernels "
		 "(doc/performance.md, \"The BLAS's kernels\")",
		 core, cpu.model_name, cpu.family, cpu.model, avx512 ? "AVX-512" : "AVX2",
		 want, strcmp(want, "SkylakeX") == 0 ? "AVX-512" : "AVX2");
	return note;
#else
	(void)note;
	return NULL;
#endif
}

int stargemm__calibration_path(char *path, size_t size)
{
	const char *dir = stargemm__setting_text(STARGEMM__STARPU_PERF_MODEL_DIR);
	const char *home = stargemm__setting_text(STARGEMM__STARPU_HOME);
	const char *host = stargemm__setting_text(STARGEMM__STARPU_HOSTNAME);
	char name[256];
	int n;

	if (!home)
		home = stargemm__setting_text(STARGEMM__HOME);
	if (!host) {
		if (gethostname(name, sizeof(name)) != 0)
			snprintf(name, sizeof(name), "unknown");
		name[sizeof(name) - 1] = '\0';
		host = name;
	}
	if (dir)
		n = snprintf(path, size, "%s/stargemm/kernels.%s", dir, host);
	else if (home)
		n = snprintf(path, size, "%s/.starpu/sampling/stargemm/kernels.%s", home, host);
	else
		return -1;
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* ---- measuring --------------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The operands. From 64 a side, A and B of each product come from a pool larger than
 * the caches, in an order that defeats the prefetchers, as a product's tiles come from
 * memory; C, which a tile's chain of updates keeps, stays the same. A side whose A and
 * B do not both fit in the pool (2048 in z) reads A as B too. */
#define POOL_BYTES ((size_t)64 << 20)
#define LARGEST STARGEMM__CAL_BIG_SIDE(STARGEMM__CAL_BIG - 1)

struct operands {
	char *pool;            /* slots of A then B, of the side being measured */
	void *c;               /* one C of up to LARGEST a side */
	size_t slot_bytes, nslots, slot;   /* nslots: a power of two */
	int b_is_a;            /* the slot holds A only, read as B too */
	struct stargemm__small_cache cache;
};

static int operands_alloc(struct operands *o)
{
	size_t c_bytes = (size_t)LARGEST * LARGEST * 2 * sizeof(double);

	memset(o, 0, sizeof(*o));
	o->pool = malloc(POOL_BYTES);
	o->c = calloc(1, c_bytes);
	return o->pool && o->c ? 0 : -1;
}

static void operands_free(struct operands *o)
{
	stargemm__small_cache_free(&o->cache);
	free(o->pool);
	free(o->c);
}

/* The pool filled with small values of one sign in type @p t (C grows slowly, never
 * underflows), C zero. */
static void operands_as(struct operands *o, const struct stargemm__element *t)
{
	size_t n = POOL_BYTES / t->size, nc = (size_t)LARGEST * LARGEST;

	for (size_t i = 0; i < n; i++)
		t->store(o->pool, (int64_t)i, 1e-3 * (double)(1 + i % 7), 0.0);
	for (size_t i = 0; i < nc; i++)
		t->store(o->c, (int64_t)i, 0.0, 0.0);
}

/* Below this side a batch's tiles behave as if in cache: they lie together in their
 * packs and the batch prefetches the next product's (codelets/batch.c); measured
 * scattered, every kernel waits on memory alike (d, side 4: 0.3-0.5 GFLOP/s). */
#define STREAM_FROM 64

/* The pool cut into slots of an A and a B of side @p s (one slot below STREAM_FROM). */
static void operands_side(struct operands *o, const struct stargemm__element *t, int s)
{
	o->slot_bytes = 2 * (size_t)s * (size_t)s * t->size;
	o->b_is_a = o->slot_bytes > POOL_BYTES;
	if (o->b_is_a)
		o->slot_bytes /= 2;
	o->nslots = 1;
	while (s >= STREAM_FROM && 2 * o->nslots * o->slot_bytes <= POOL_BYTES)
		o->nslots *= 2;
	o->slot = 0;
}

/* One product C = A B + C of side @p s by @p how (STARGEMM__SMALL_BLAS: the type's BLAS
 * even above the small kernels' sides), its A and B the next slot's: a full-period
 * congruential walk over the slots. */
static void product(struct operands *o, const struct stargemm__element *t,
		    enum stargemm__small_kernel how, int s)
{
	const char *a = o->pool + o->slot * o->slot_bytes;
	const char *b = o->b_is_a ? a : a + o->slot_bytes / 2;

	o->slot = (o->slot * 1103515245u + 12345u) & (o->nslots - 1);
	if (how == STARGEMM__SMALL_BLAS)
		t->cpu_gemm('N', 'N', s, s, s, 1.0, a, s, b, s, 1.0, o->c, s);
	else
		stargemm__small_gemm_by(&o->cache, how, t, 'N', 'N', s, s, s, 1.0, a, s, b, s,
					1.0, o->c, s);
}

/* GFLOP/s of @p how on products of side @p s: the best of TRIALS trials, each of as
 * many products as fill TRIAL_S, after one untimed product (libxsmm generates its
 * kernel there; @p warm: the kernel ran at a smaller side just before, and a large
 * side needs no untimed product); a large side's trials stop after SIDE_S. */
static double rate(struct operands *o, const struct stargemm__element *t,
		   enum stargemm__small_kernel how, int s, int warm)
{
	double flops = t->fma_flops * (double)s * (double)s * (double)s, best = 0.0;
	double first = now();

	operands_side(o, t, s);
	if (!warm)
		product(o, t, how, s);
	for (int trial = 0; trial < TRIALS && (trial == 0 || now() - first < SIDE_S); trial++) {
		double start = now(), elapsed;
		long reps = 0;

		do {
			product(o, t, how, s);
			reps++;
		} while ((elapsed = now() - start) < TRIAL_S);
		if (reps * flops / elapsed > best)
			best = reps * flops / elapsed;
	}
	return 1e-9 * best;
}

/* Whether kernel @p how takes cube products of type @p t here. */
static int available(const struct stargemm__element *t, enum stargemm__small_kernel how)
{
	switch (how) {
	case STARGEMM__SMALL_ONE:
		return stargemm__dgemm_any_usable();
	case STARGEMM__SMALL_XSMM:
#ifdef HAVE_LIBXSMM
		return !t->is_complex;
#else
		return 0;
#endif
	default:
		return 1;
	}
}

static int measure(struct stargemm__calibration *cal)
{
	struct operands o;

	if (operands_alloc(&o) != 0) {
		operands_free(&o);
		return -1;
	}
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
	openblas_set_num_threads(1);   /* a worker's BLAS: one thread */
#endif
	memset(cal, 0, sizeof(*cal));
	for (int ti = 0; ti < STARGEMM__CAL_TYPES; ti++) {
		const struct stargemm__element *t = stargemm__element(letters[ti]);

		operands_as(&o, t);
		for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
			for (int k = 0; k < STARGEMM__CAL_KERNELS; k++)
				if (available(t, (enum stargemm__small_kernel)k))
					cal->small[ti][si][k] =
						rate(&o, t, (enum stargemm__small_kernel)k, 4 << si, 0);
		for (int bi = 0; bi < STARGEMM__CAL_BIG; bi++) {
			double side = STARGEMM__CAL_BIG_SIDE(bi);

			if (bi > 0 && t->fma_flops * side * side * side >
					      PRODUCT_S * 1e9 * cal->big[ti][bi - 1])
				break;   /* this side and the larger ones: not measured */
			cal->big[ti][bi] = rate(&o, t, STARGEMM__SMALL_BLAS, (int)side, bi > 0);
		}
	}
	cal->measured = 1;
	operands_free(&o);
	return 0;
}

/* ---- the file ---------------------------------------------------------------------- */

static int write_file(const char *path, const struct stargemm__calibration *cal)
{
	char tmp[4200];
	FILE *f;
	int ok;

	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	if (!(f = fopen(tmp, "w")))
		return -1;
	fprintf(f, "# stargemm's CPU kernels measured on this machine: GFLOP/s of one core "
		"(codelets/calibrate.c).\n# Delete this file, or set STARGEMM_CALIBRATE=1, to "
		"measure again.\nidentity %s\n", stargemm__calibration_identity());
	if (stargemm__blas_core_note())
		fprintf(f, "# %s\n", stargemm__blas_core_note());
	fprintf(f, "# small TYPE SIDE one xsmm blas (0: not here)\n");
	for (int ti = 0; ti < STARGEMM__CAL_TYPES; ti++)
		for (int si = 0; si < STARGEMM__CAL_SIDES; si++)
			fprintf(f, "small %c %d %.3f %.3f %.3f\n", letters[ti], 4 << si,
				cal->small[ti][si][0], cal->small[ti][si][1], cal->small[ti][si][2]);
	fprintf(f, "# big TYPE SIDE blas (0: not measured, a product would take over %g s)\n",
		PRODUCT_S);
	for (int ti = 0; ti < STARGEMM__CAL_TYPES; ti++)
		for (int bi = 0; bi < STARGEMM__CAL_BIG; bi++)
			fprintf(f, "big %c %d %.3f\n", letters[ti], STARGEMM__CAL_BIG_SIDE(bi),
				cal->big[ti][bi]);
	ok = fclose(f) == 0;
	if (!ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* A rate as the file gives it: finite and >= 0. */
static int parse_rate(const char *s, double *x)
{
	char *end;

	errno = 0;
	*x = strtod(s, &end);
	return end != s && errno == 0 && isfinite(*x) && *x >= 0.0 ? 0 : -1;
}

/* One "small" or "big" line's fields (after the keyword) into @p cal; marks it seen. */
static int parse_rates(const char *kind, char *fields, struct stargemm__calibration *cal,
		       unsigned char seen[STARGEMM__CAL_TYPES][STARGEMM__CAL_SIDES + STARGEMM__CAL_BIG])
{
	char *save = NULL, *type = strtok_r(fields, " \t", &save);
	char *side = strtok_r(NULL, " \t", &save), *v[STARGEMM__CAL_KERNELS];
	int big = strcmp(kind, "big") == 0, nv = big ? 1 : STARGEMM__CAL_KERNELS, ti, si;
	long s;

	for (int i = 0; i < nv; i++)
		v[i] = strtok_r(NULL, " \t", &save);
	if (!type || strlen(type) != 1 || (ti = stargemm__cal_type(type[0])) < 0 || !side ||
	    !v[nv - 1] || strtok_r(NULL, " \t", &save))
		return -1;
	s = strtol(side, NULL, 10);
	if (big) {
		int bi = 0;

		while (bi < STARGEMM__CAL_BIG && STARGEMM__CAL_BIG_SIDE(bi) != s)
			bi++;
		if (bi == STARGEMM__CAL_BIG || parse_rate(v[0], &cal->big[ti][bi]) ||
		    (bi == 0 && cal->big[ti][bi] <= 0))   /* 512 is always measured */
			return -1;
		seen[ti][STARGEMM__CAL_SIDES + bi] = 1;
		return 0;
	}
	for (si = 0; si < STARGEMM__CAL_SIDES && (4L << si) != s; si++)
		;
	if (si == STARGEMM__CAL_SIDES)
		return -1;
	for (int k = 0; k < STARGEMM__CAL_KERNELS; k++)
		if (parse_rate(v[k], &cal->small[ti][si][k]))
			return -1;
	if (cal->small[ti][si][STARGEMM__SMALL_BLAS] <= 0)   /* BLAS takes every product */
		return -1;
	seen[ti][si] = 1;
	return 0;
}

int stargemm__calibration_parse(const char *text, const char *identity,
				struct stargemm__calibration *cal, char *why, size_t why_size)
{
	unsigned char seen[STARGEMM__CAL_TYPES][STARGEMM__CAL_SIDES + STARGEMM__CAL_BIG] = { { 0 } };
	char *copy = strdup(text ? text : ""), *save = NULL, *line;
	int lineno = 0, has_identity = 0, ret = 0;

	memset(cal, 0, sizeof(*cal));
	for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (line[0] == '#' || line[strspn(line, " \t\r")] == '\0')
			continue;
		if (strncmp(line, "identity ", 9) == 0) {
			if (strcmp(line + 9, identity) != 0) {
				snprintf(why, why_size, "made for another machine or library "
					 "(%s)", line + 9);
				ret = -1;
			}
			has_identity = 1;
		} else if (strncmp(line, "small ", 6) == 0 || strncmp(line, "big ", 4) == 0) {
			line[strcspn(line, " ")] = '\0';
			if (parse_rates(line, line + strlen(line) + 1, cal, seen)) {
				snprintf(why, why_size, "line %d does not parse", lineno);
				ret = -1;
			}
		} else {
			snprintf(why, why_size, "line %d does not parse", lineno);
			ret = -1;
		}
	}
	for (int ti = 0; ti < STARGEMM__CAL_TYPES && !ret; ti++)
		for (int si = 0; si < STARGEMM__CAL_SIDES + STARGEMM__CAL_BIG && !ret; si++)
			if (!seen[ti][si]) {
				int small = si < STARGEMM__CAL_SIDES;

				snprintf(why, why_size, "no rate for type %c, %s %d", letters[ti],
					 small ? "side" : "large side",
					 small ? 4 << si
					       : STARGEMM__CAL_BIG_SIDE(si - STARGEMM__CAL_SIDES));
				ret = -1;
			}
	if (!ret && !has_identity) {
		snprintf(why, why_size, "no identity line");
		ret = -1;
	}
	free(copy);
	if (!copy && !ret) {
		snprintf(why, why_size, "out of memory");
		ret = -1;
	}
	cal->measured = !ret;
	return ret;
}

/* The file's text (malloc'd), NULL when it cannot be read. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	long size;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && size < (1L << 20) &&
	    fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1))) {
		size_t got = fread(text, 1, (size_t)size, f);

		text[got] = '\0';
	}
	fclose(f);
	return text;
}

/* The file at @p path parsed into @p cal; 0, or -1 with the reason in @p why. */
static int load(const char *path, struct stargemm__calibration *cal, char *why, size_t size)
{
	char *text = read_text(path);
	int ret;

	if (!text) {
		snprintf(why, size, "%s", errno == ENOENT ? "no file yet" : strerror(errno));
		return -1;
	}
	ret = stargemm__calibration_parse(text, stargemm__calibration_identity(), cal, why, size);
	free(text);
	return ret;
}

/* mkdir -p of @p path's directory. */
static void make_dirs(const char *path)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
}

/* Measure into @p cal and write @p path (NULL: nowhere), saying why on stderr. */
static void measure_and_write(const char *path, const char *why,
			      struct stargemm__calibration *cal)
{
	const char *note = stargemm__blas_core_note();

	fprintf(stderr, "stargemm: measuring the CPU kernels (a few seconds): %s: %s\n",
		path ? path : "no file (HOME unset)", why);
	if (note)
		fprintf(stderr, "stargemm: %s\n", note);
	if (measure(cal) != 0) {
		fprintf(stderr, "stargemm: no memory to measure the CPU kernels: the built-in "
			"order serves\n");
		memset(cal, 0, sizeof(*cal));
		return;
	}
	if (path && write_file(path, cal) != 0)
		fprintf(stderr, "stargemm: cannot write %s (%s): the measurements serve this "
			"process only\n", path, strerror(errno));
}

int stargemm__lock_file(const char *path, const char *suffix)
{
	char lock[4200];
	int fd;

	snprintf(lock, sizeof(lock), "%s%s", path, suffix);
	if ((fd = open(lock, O_RDWR | O_CREAT, 0644)) < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
		;
	return fd;
}

void stargemm__calibrate(void)
{
	struct stargemm__calibration cal;
	char path[4096], why[512] = "";
	double force = NAN;
	int fd = -1;

#ifdef STARPU_SIMGRID
	/* Simulated runs take the kernels' times from the performance models. */
	stargemm__calibration_set(NULL);
	return;
#endif
	if (stargemm__setting(STARGEMM__CALIBRATE, &force) != 0 ||
	    (!isnan(force) && force != 0.0 && force != 1.0)) {
		fprintf(stderr, "stargemm: STARGEMM_CALIBRATE: expected 0 or 1; the kernels are "
			"measured only when their file is missing or stale\n");
		force = NAN;
	}
	if (force == 0.0) {
		stargemm__calibration_set(NULL);
		return;
	}
	if (stargemm__calibration_path(path, sizeof(path)) != 0) {
		measure_and_write(NULL, "no directory for the file", &cal);
		stargemm__calibration_set(&cal);
		return;
	}
	make_dirs(path);
	fd = stargemm__lock_file(path, ".lock");
	if (force == 1.0)
		measure_and_write(path, "STARGEMM_CALIBRATE=1", &cal);
	else if (load(path, &cal, why, sizeof(why)) != 0)
		measure_and_write(path, why, &cal);
	if (fd >= 0)
		close(fd);   /* releases the lock */
	stargemm__calibration_set(&cal);
}
