/*
 * bench/kernels.c — per-tile GEMM kernel and StarPU task-overhead micro-benchmark.
 *
 * What: times one small tile product C(m x n) += A(m x k) B(k x n) (double, column
 * major, packed: lda = m, ldb = k, ldc = m) with
 *   openblas          cblas_dgemm (run with OPENBLAS_NUM_THREADS=1)
 *   libxsmm           libxsmm_dmmdispatch() once per shape, JIT kernel reused
 *   libxsmm_pf        same, kernel built with LIBXSMM_PREFETCH_AUTO and given
 *                     the next product's operands
 *   libxsmm_dispatch  libxsmm_dmmdispatch() before every call (registry lookup cost)
 *   loop              naive j-p-i triple loop, as a floor
 *   any               stargemm's one kernel for every shape (codelets/smallkernel.h), of
 *                     the instruction set --isa names: avx512 or avx2 (AVX2 + FMA);
 *                     by default the widest the CPU has, the one stargemm takes
 *                     (-DHAVE_ANY with codelets/smallkernel.c and
 *                     codelets/smallkernel_avx*.c on the command line)
 * or, with --complex, the same products in double complex with cblas_zgemm
 * ("openblas"), a complex triple loop ("loop") and stargemm's complex kernel ("any");
 * libxsmm has no complex kernels.
 * With --trans-a, op(A) = A^T (A stored k x m): OpenBLAS takes it as it is, the other
 * kernels after op(A) is copied out (codelets/transpose.c, on the command line), as
 * stargemm's batches do.
 * in two memory regimes: "hot" cycles over a few tiles (<= 8 products in <= 32 KiB,
 * or one product if it is larger: L1/L2 resident) and "stream" cycles, in shuffled
 * memory order, over products filling --stream-mib (64 MiB, far beyond L2), as
 * block-sparse products do. --mix gives every product a random shape (dims from a
 * set "5,13,23,26" or a range "20-60") to see the cost of heterogeneous blocks; hot
 * then cycles over one product per shape in shuffled order.
 * --starpu times StarPU tasks (1 CPU worker): empty tasks without data, a chain of
 * empty tasks on one RW handle, and tasks doing one s^3 dgemm (chained on one C, or
 * round robin on 64 Cs), with starpu_task_insert() and with starpu_task_create() +
 * starpu_task_submit(); ".submit" rows time the submission loop alone.
 *
 * Why: stargemm must choose the tile kernel per block size and know below which
 * tile product size one StarPU task per product costs more than the product, so
 * that products must be batched many per task.
 *
 * Each point: calibrate the call count to >= --min-time seconds, run --reps times,
 * report the median. CSV columns: kernel,m,n,k,calls,seconds,us_per_call,gflops;
 * kernel is "<name>.<hot|stream>", "<name>.mix.<hot|stream>" (m,n,k = 0: mixed
 * shapes, gflops from the real flop count) or "starpu.<sched>.<variant>.<api>"
 * (calls = tasks, m,n,k = 0 for empty tasks).
 *
 * Build (from the repository root):
 *   gcc -std=c99 -O2 -Wall -Wextra -o /tmp/kernels-work/kernels bench/kernels.c \
 *       -lopenblas -lm
 *   gcc -std=gnu11 -O2 -Wall -Wextra -DHAVE_LIBXSMM -DHAVE_ANY -o /tmp/kernels-work/kernels \
 *       bench/kernels.c codelets/smallkernel.c codelets/smallkernel_avx*.c \
 *       codelets/transpose.c \
 *       $(pkg-config --cflags libxsmm) $(pkg-config --libs libxsmm) -lopenblas -lm
 *   P=$(ls -d ~/.cache/stargemm/starpu-1.3.10-native-*)
 *   mpicc.mpich -std=c99 -O2 -Wall -Wextra -Wno-deprecated-declarations \
 *       -DHAVE_LIBXSMM -DHAVE_STARPU \
 *       -o /tmp/kernels-work/kernels bench/kernels.c \
 *       $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags starpu-1.3) \
 *       $(pkg-config --cflags libxsmm) \
 *       $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --libs starpu-1.3) \
 *       $(pkg-config --libs libxsmm) -lopenblas -lm -Wl,-rpath,$P/lib
 * (libxsmm-dev 1.17 ships static libraries only; they need a BLAS, here OpenBLAS.)
 *
 * Run (one core, one thread):
 *   OPENBLAS_NUM_THREADS=1 taskset -c 1 ./kernels --csv
 *   OPENBLAS_NUM_THREADS=1 taskset -c 1 ./kernels --csv --mix 5,13,23,26 --per-shape
 *   OPENBLAS_NUM_THREADS=1 taskset -c 1 ./kernels --csv --kernels any --isa avx2
 *   STARPU_NCPU=1 STARPU_NCUDA=0 STARPU_FXT_TRACE=0 STARPU_HOME=/tmp/kernels-work \
 *       OPENBLAS_NUM_THREADS=1 taskset -c 1 ./kernels --csv --starpu --sched eager,lws
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#ifdef HAVE_LIBXSMM
#include <libxsmm.h>
#endif
#ifdef HAVE_STARPU
#include <starpu.h>
#endif
#ifdef HAVE_ANY
/* codelets/smallkernel.c and codelets/smallkernel_avx*.c, given on the command line */
#include "../codelets/smallkernel.h"
/* codelets/transpose.c */
void stargemm__op_copy(size_t size, int conj, int m, int k, const void *a, int lda, void *at);

/* The kernels "any" times: those of the instruction set --isa names (set_isa()). */
static void (*any_dgemm)(char tb, int m, int n, int k, double alpha, const double *a,
			 int lda, const double *b, int ldb, double beta, double *c, int ldc);
static void (*any_zgemm)(char tb, int m, int n, int k, const double *alpha, const void *a,
			 int lda, const void *b, int ldb, const double *beta, void *c, int ldc);
#endif

#define HOT_BYTES (32u << 10)
#define HOT_MAX_SLOTS 8
#define CACHE_LINE 64

enum kern { K_OPENBLAS, K_LIBXSMM, K_LIBXSMM_PF, K_LIBXSMM_DISPATCH, K_LOOP, K_ANY, K_COUNT };

static const char *const kern_names[K_COUNT] = {
	"openblas", "libxsmm", "libxsmm_pf", "libxsmm_dispatch", "loop", "any"
};

enum mode { M_HOT = 1, M_STREAM = 2 };

/* Doubles per element: 1, or 2 with --complex (interleaved real and imaginary parts). */
static int per_element = 1;

/* --trans-a: op(A) = A^T, A stored k x m; op(A) copied out to opa for all but OpenBLAS. */
#define OPA_DOUBLES (2 * 256 * 256)
static int trans_a;
static double opa[OPA_DOUBLES];

struct shape {
	int m, n, k;
};

struct opts {
	struct shape *shapes;
	int nshapes;
	int reps;
	double min_time;
	int csv;
	unsigned kernels;	/* bit set of enum kern */
	int kernels_given;	/* --kernels: not narrowed by --complex */
	unsigned modes;		/* bit set of enum mode */
	size_t stream_bytes;
	const char *mix;	/* NULL: square/explicit shapes only */
	int mix_count;
	int per_shape;
	uint64_t seed;
	int starpu;
	long ntasks;
	const char *scheds;
};

/* One tile product: operands and, with libxsmm, the kernels for its shape. */
struct slot {
	double *a, *b, *c;
	int m, n, k;
#ifdef HAVE_LIBXSMM
	libxsmm_dmmfunction fn, fn_pf;
#endif
};

/* The products a timed loop cycles through, in order. */
struct job {
	struct slot *slots;
	long nslots;
	double *mem;
	size_t bytes;		/* operand footprint */
	double *flops_prefix;	/* flops of slots [0, i), nslots + 1 entries */
};

static void die(const char *what)
{
	fprintf(stderr, "kernels: %s\n", what);
	exit(EXIT_FAILURE);
}

static void *xmalloc(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, CACHE_LINE, bytes ? bytes : CACHE_LINE) != 0)
		die("out of memory");
	return p;
}

/* Wall clock, or this thread's CPU time (--clock cpu: immune to time sharing). */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now(void)
{
	struct timespec ts;

	clock_gettime(bench_clock, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* splitmix64 */
static uint64_t next_rand(uint64_t *state)
{
	uint64_t x = (*state += 0x9e3779b97f4a7c15ULL);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static double rand_unit(uint64_t *state)
{
	return (double)(next_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

static void fill(double *x, size_t count, uint64_t *state)
{
	for (size_t i = 0; i < count; i++)
		x[i] = rand_unit(state) - 0.5;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static double median(double *x, int count)
{
	qsort(x, (size_t)count, sizeof(*x), cmp_double);
	return count % 2 ? x[count / 2] : 0.5 * (x[count / 2 - 1] + x[count / 2]);
}

/* ---------------------------------------------------------------- kernels */

static void loop_gemm(int m, int n, int k, const double *restrict a,
		      const double *restrict b, double *restrict c)
{
	for (int j = 0; j < n; j++)
		for (int p = 0; p < k; p++) {
			double bpj = b[p + (size_t)j * k];

			for (int i = 0; i < m; i++)
				c[i + (size_t)j * m] += a[i + (size_t)p * m] * bpj;
		}
}

static void blas_gemm(int m, int n, int k, const double *a, const double *b, double *c)
{
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, m, b, k,
		    1.0, c, m);
}

/* The complex products, on interleaved (re, im) pairs. */
static void zloop_gemm(int m, int n, int k, const double *restrict a,
		       const double *restrict b, double *restrict c)
{
	for (int j = 0; j < n; j++)
		for (int p = 0; p < k; p++) {
			const double *bpj = b + 2 * (p + (size_t)j * k);

			for (int i = 0; i < m; i++) {
				const double *aip = a + 2 * (i + (size_t)p * m);
				double *cij = c + 2 * (i + (size_t)j * m);

				cij[0] += aip[0] * bpj[0] - aip[1] * bpj[1];
				cij[1] += aip[0] * bpj[1] + aip[1] * bpj[0];
			}
		}
}

static void zblas_gemm(int m, int n, int k, const double *a, const double *b, double *c)
{
	static const double one[2] = { 1.0, 0.0 };

	cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, one, a, m, b, k, one,
		    c, m);
}

/* OpenBLAS on op(A) = A^T as it is stored (k x m). */
static void blas_trans_a(const struct slot *s)
{
	static const double one[2] = { 1.0, 0.0 };

	if (per_element == 2)
		cblas_zgemm(CblasColMajor, CblasTrans, CblasNoTrans, s->m, s->n, s->k, one, s->a,
			    s->k, s->b, s->k, one, s->c, s->m);
	else
		cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, s->m, s->n, s->k, 1.0, s->a,
			    s->k, s->b, s->k, 1.0, s->c, s->m);
}

/* Slot @p s with its A (k x m) replaced by op(A) = A^T copied out to opa. */
static struct slot with_copied_a(const struct slot *s)
{
	struct slot t = *s;

	if ((size_t)s->m * s->k * per_element > OPA_DOUBLES)
		die("--trans-a takes sides up to 256");
#ifdef HAVE_ANY
	stargemm__op_copy(per_element * sizeof(double), 0, s->m, s->k, s->a, s->k, opa);
#else
	die("--trans-a needs codelets/transpose.c and -DHAVE_ANY");
#endif
	t.a = opa;
	return t;
}

/* One complex call of @kern on slot @s. */
static void call_complex(enum kern kern, const struct slot *s)
{
	switch (kern) {
	case K_OPENBLAS:
		zblas_gemm(s->m, s->n, s->k, s->a, s->b, s->c);
		break;
	case K_LOOP:
		zloop_gemm(s->m, s->n, s->k, s->a, s->b, s->c);
		break;
#ifdef HAVE_ANY
	case K_ANY: {
		static const double one[2] = { 1.0, 0.0 };

		any_zgemm('N', s->m, s->n, s->k, one, s->a, s->m, s->b, s->k, one, s->c, s->m);
		break;
	}
#endif
	default:
		die("--complex takes the kernels openblas, loop and any");
	}
}

#ifdef HAVE_LIBXSMM
static libxsmm_dmmfunction xsmm_kernel(int m, int n, int k, int prefetch)
{
	const double alpha = 1.0, beta = 1.0;
	const int flags = LIBXSMM_GEMM_FLAG_NONE;

	return libxsmm_dmmdispatch(m, n, k, NULL, NULL, NULL, &alpha, &beta, &flags,
				   &prefetch);
}

static libxsmm_dmmfunction xsmm_kernel_checked(int m, int n, int k, int prefetch)
{
	libxsmm_dmmfunction fn = xsmm_kernel(m, n, k, prefetch);

	if (!fn) {
		fprintf(stderr, "kernels: libxsmm_dmmdispatch(%d, %d, %d) gave no kernel\n",
			m, n, k);
		exit(EXIT_FAILURE);
	}
	return fn;
}
#endif

/* Timed loops: one per kernel so that the loop body is a direct call. */
/* One call of @kern on slot @s (@nx: the next slot, what the prefetching kernel
 * prefetches). A switch per call, not a function per kernel: the predictable branch
 * costs about a nanosecond, ~8% of libxsmm's 12 ns at 5^3 hot, < 1% from 13^3. */
static void call_kernel(enum kern kern, const struct slot *s, const struct slot *nx)
{
	struct slot copied;

	(void)nx;   /* only the prefetching kernel reads it */
	if (trans_a && kern == K_OPENBLAS) {
		blas_trans_a(s);
		return;
	}
	if (trans_a) {
		copied = with_copied_a(s);
		s = &copied;
	}
	if (per_element == 2) {
		call_complex(kern, s);
		return;
	}
	switch (kern) {
	case K_OPENBLAS:
		blas_gemm(s->m, s->n, s->k, s->a, s->b, s->c);
		break;
	case K_LOOP:
		loop_gemm(s->m, s->n, s->k, s->a, s->b, s->c);
		break;
#ifdef HAVE_ANY
	case K_ANY:
		any_dgemm('N', s->m, s->n, s->k, 1.0, s->a, s->m, s->b, s->k, 1.0, s->c, s->m);
		break;
#endif
#ifdef HAVE_LIBXSMM
	case K_LIBXSMM:
		s->fn(s->a, s->b, s->c);
		break;
	case K_LIBXSMM_PF:
		s->fn_pf(s->a, s->b, s->c, nx->a, nx->b, nx->c);
		break;
	case K_LIBXSMM_DISPATCH:
		xsmm_kernel(s->m, s->n, s->k, LIBXSMM_PREFETCH_NONE)(s->a, s->b, s->c);
		break;
#endif
	default:
		die("a kernel of --kernels is not compiled in (libxsmm needs -DHAVE_LIBXSMM)");
	}
}

/* @calls calls of @kern, cycling through the job's slots. */
static void run_calls(enum kern kern, const struct job *j, long calls)
{
	long i = 0;

	for (long done = 0; done < calls; done++) {
		const struct slot *s = &j->slots[i];

		if (++i == j->nslots)
			i = 0;
		call_kernel(kern, s, &j->slots[i]);
	}
}

/* One product with @kern on fresh operands, compared with the triple loop. */
static void check_kernel(enum kern kern, struct shape sh, uint64_t seed)
{
	size_t na = (size_t)sh.m * sh.k * per_element, nb = (size_t)sh.k * sh.n * per_element;
	size_t nc = (size_t)sh.m * sh.n * per_element;
	double *buf = xmalloc((na + nb + 3 * nc) * sizeof(double));
	struct slot s[1] = { { .a = buf, .b = buf + na, .c = buf + na + nb,
			       .m = sh.m, .n = sh.n, .k = sh.k } };
	struct job j = { .slots = s, .nslots = 1 };
	double *ref = s[0].c + nc, *c0 = ref + nc, err = 0.0, scale = 0.0;

	fill(buf, na + nb + nc, &seed);
	memcpy(ref, s[0].c, nc * sizeof(double));
	memcpy(c0, s[0].c, nc * sizeof(double));
#ifdef HAVE_LIBXSMM
	if (per_element == 1) {
		s[0].fn = xsmm_kernel_checked(sh.m, sh.n, sh.k, LIBXSMM_PREFETCH_NONE);
		s[0].fn_pf = xsmm_kernel_checked(sh.m, sh.n, sh.k, LIBXSMM_PREFETCH_AUTO);
	}
#endif
	run_calls(kern, &j, 1);
	if (trans_a)   /* the reference on op(A) copied out */
		s[0] = with_copied_a(&s[0]);
	(per_element == 2 ? zloop_gemm : loop_gemm)(sh.m, sh.n, sh.k, s[0].a, s[0].b, ref);
	for (size_t i = 0; i < nc; i++) {
		err = fmax(err, fabs(s[0].c[i] - ref[i]));
		scale = fmax(scale, fabs(ref[i] - c0[i]));
	}
	free(buf);
	if (err > 1e-13 * sh.k * (scale + 1.0)) {
		fprintf(stderr, "kernels: %s gives a wrong %dx%dx%d product (error %g)\n",
			kern_names[kern], sh.m, sh.n, sh.k, err);
		exit(EXIT_FAILURE);
	}
}

/* ---------------------------------------------------------------- jobs */

static size_t slot_doubles(struct shape sh)
{
	size_t d = ((size_t)sh.m * sh.k + (size_t)sh.k * sh.n + (size_t)sh.m * sh.n) *
		   per_element;
	size_t per_line = CACHE_LINE / sizeof(double);

	return (d + per_line - 1) / per_line * per_line;
}

static struct shape *grow_shapes(struct shape *shapes, long *cap)
{
	*cap *= 2;
	shapes = realloc(shapes, (size_t)*cap * sizeof(*shapes));
	if (!shapes)
		die("out of memory");
	return shapes;
}

/* Slot shapes. One shape: as many as fit in @bytes, at least 1, at most HOT_MAX_SLOTS
 * when @hot. Several, hot: each once, shuffled. Several, stream: drawn at random
 * until @bytes are used. */
static struct shape *job_shapes(const struct shape *pool, int npool, size_t bytes,
				int hot, long *nslots, uint64_t *rng)
{
	size_t used = 0, one = slot_doubles(pool[0]) * sizeof(double);
	long cap = npool > 1024 ? npool : 1024, count = 0;
	struct shape *shapes = xmalloc((size_t)cap * sizeof(*shapes));

	if (npool == 1) {
		count = (long)(bytes / one);
		count = count < 1 ? 1 : count > HOT_MAX_SLOTS && hot ? HOT_MAX_SLOTS : count;
		if (count > cap)
			shapes = realloc(shapes, (size_t)count * sizeof(*shapes));
		for (long i = 0; shapes && i < count; i++)
			shapes[i] = pool[0];
	} else if (hot) {
		for (count = 0; count < npool; count++)
			shapes[count] = pool[count];
		for (long i = count - 1; i > 0; i--) {
			long r = (long)(next_rand(rng) % (uint64_t)(i + 1));
			struct shape t = shapes[i];

			shapes[i] = shapes[r];
			shapes[r] = t;
		}
	} else {
		while (used < bytes) {
			if (count == cap)
				shapes = grow_shapes(shapes, &cap);
			shapes[count] = pool[next_rand(rng) % (uint64_t)npool];
			used += slot_doubles(shapes[count++]) * sizeof(double);
		}
	}
	if (!shapes)
		die("out of memory");
	*nslots = count;
	return shapes;
}

/* Lay slots out in memory in shuffled order (stream) or in order (hot). */
static void job_layout(struct job *j, const struct shape *shapes, int shuffle,
		       uint64_t *rng)
{
	long n = j->nslots, *perm = xmalloc((size_t)n * sizeof(long));
	size_t total = 0;

	for (long i = 0; i < n; i++)
		perm[i] = i;
	for (long i = n - 1; shuffle && i > 0; i--) {
		long r = (long)(next_rand(rng) % (uint64_t)(i + 1)), t = perm[i];

		perm[i] = perm[r];
		perm[r] = t;
	}
	for (long i = 0; i < n; i++)
		total += slot_doubles(shapes[i]);
	j->bytes = total * sizeof(double);
	j->mem = xmalloc(j->bytes);
	fill(j->mem, total, rng);
	total = 0;
	for (long p = 0; p < n; p++) {
		long i = perm[p];
		struct slot *s = &j->slots[i];

		s->m = shapes[i].m, s->n = shapes[i].n, s->k = shapes[i].k;
		s->a = j->mem + total;
		s->b = s->a + (size_t)s->m * s->k * per_element;
		s->c = s->b + (size_t)s->k * s->n * per_element;
		total += slot_doubles(shapes[i]);
	}
	free(perm);
}

static void job_kernels(struct job *j)
{
#ifdef HAVE_LIBXSMM
	for (long i = 0; i < j->nslots && per_element == 1; i++) {
		struct slot *s = &j->slots[i];

		s->fn = xsmm_kernel_checked(s->m, s->n, s->k, LIBXSMM_PREFETCH_NONE);
		s->fn_pf = xsmm_kernel_checked(s->m, s->n, s->k, LIBXSMM_PREFETCH_AUTO);
	}
#else
	(void)j;
#endif
}

static void job_create(struct job *j, const struct shape *pool, int npool,
		       enum mode mode, const struct opts *o)
{
	uint64_t rng = o->seed;
	size_t bytes = mode == M_HOT ? HOT_BYTES : o->stream_bytes;
	struct shape *shapes = job_shapes(pool, npool, bytes, mode == M_HOT, &j->nslots,
					  &rng);

	j->slots = xmalloc((size_t)j->nslots * sizeof(*j->slots));
	job_layout(j, shapes, mode == M_STREAM, &rng);
	job_kernels(j);
	j->flops_prefix = xmalloc((size_t)(j->nslots + 1) * sizeof(double));
	j->flops_prefix[0] = 0.0;
	for (long i = 0; i < j->nslots; i++)
		j->flops_prefix[i + 1] = j->flops_prefix[i] +
			(per_element == 2 ? 8.0 : 2.0) * shapes[i].m * shapes[i].n * shapes[i].k;
	free(shapes);
}

static void job_destroy(struct job *j)
{
	free(j->slots);
	free(j->mem);
	free(j->flops_prefix);
}

static double job_flops(const struct job *j, long calls)
{
	return (double)(calls / j->nslots) * j->flops_prefix[j->nslots] +
		j->flops_prefix[calls % j->nslots];
}

/* ---------------------------------------------------------------- measuring */

/* Printed before the first row, so that an error leaves stdout empty. */
static void print_header(const struct opts *o)
{
	static int done;

	if (done++)
		return;
	if (o->csv)
		printf("kernel,m,n,k,calls,seconds,us_per_call,gflops\n");
	else
		printf("%-40s %5s %5s %5s %10s %9s %12s %9s\n", "kernel", "m", "n", "k",
		       "calls", "seconds", "us_per_call", "gflops");
}

static void print_row(const struct opts *o, const char *kernel, struct shape sh,
		      long calls, double seconds, double flops)
{
	double us = 1e6 * seconds / (double)calls, gf = flops / seconds * 1e-9;

	print_header(o);
	if (o->csv)
		printf("%s,%d,%d,%d,%ld,%.6f,%.4f,%.3f\n", kernel, sh.m, sh.n, sh.k, calls,
		       seconds, us, gf);
	else
		printf("%-40s %5d %5d %5d %10ld %9.4f %12.4f %9.3f\n", kernel, sh.m, sh.n,
		       sh.k, calls, seconds, us, gf);
	fflush(stdout);
}

/* Call count giving >= min_time seconds (this also warms caches and pages). */
static long calibrate(enum kern kern, const struct job *j, double min_time)
{
	long calls = 1;

	for (;;) {
		double t = now();

		run_calls(kern, j, calls);
		t = now() - t;
		if (t >= min_time)
			return calls;
		double grow = t > 0 ? 1.2 * min_time / t : 10.0;
		calls = (long)((double)calls * (grow < 2.0 ? 2.0 : grow > 10.0 ? 10.0 : grow));
	}
}

static void measure(const struct opts *o, enum kern kern, const struct job *j,
		    const char *label, struct shape sh)
{
	long calls = calibrate(kern, j, o->min_time);
	double *t = xmalloc((size_t)o->reps * sizeof(double));
	char name[96];

	for (int r = 0; r < o->reps; r++) {
		t[r] = now();
		run_calls(kern, j, calls);
		t[r] = now() - t[r];
	}
	snprintf(name, sizeof(name), "%s.%s", kern_names[kern], label);
	print_row(o, name, sh, calls, median(t, o->reps), job_flops(j, calls));
	free(t);
}

static void bench_pool(const struct opts *o, const struct shape *pool, int npool,
		       const char *prefix, struct shape row_shape)
{
	static const char *const mode_names[] = { "", "hot", "stream" };

	for (int mode = M_HOT; mode <= M_STREAM; mode++) {
		struct job j;
		char label[32];

		if (!(o->modes & (unsigned)mode))
			continue;
		job_create(&j, pool, npool, (enum mode)mode, o);
		snprintf(label, sizeof(label), "%s%s", prefix, mode_names[mode]);
		fprintf(stderr, "# %s %dx%dx%d: %ld products, %.1f KiB of operands\n", label,
			row_shape.m, row_shape.n, row_shape.k, j.nslots,
			(double)j.bytes / 1024.0);
		for (int kern = 0; kern < K_COUNT; kern++)
			if (o->kernels & (1u << kern))
				measure(o, (enum kern)kern, &j, label, row_shape);
		job_destroy(&j);
	}
}

static void check_all(const struct opts *o, const struct shape *shapes, int count)
{
	for (int i = 0; i < count; i++)
		for (int kern = 0; kern < K_COUNT; kern++)
			if (o->kernels & (1u << kern))
				check_kernel((enum kern)kern, shapes[i], o->seed + (uint64_t)i);
}

/* ---------------------------------------------------------------- mixed shapes */

/* "5,13,23,26": every (m, n, k) from the set; "20-60": --mix-count random shapes. */
static struct shape *mix_shapes(const struct opts *o, int *count)
{
	int lo, hi, dims[64], nd = 0, used;
	const char *p = o->mix;
	uint64_t rng = o->seed ^ 0x6d6978ULL;
	struct shape *sh;

	if (sscanf(p, "%d-%d%n", &lo, &hi, &used) == 2 && p[used] == '\0') {
		if (lo < 1 || hi < lo)
			die("--mix range must be LO-HI with 1 <= LO <= HI");
		*count = o->mix_count;
		sh = xmalloc((size_t)*count * sizeof(*sh));
		for (int i = 0; i < *count; i++) {
			sh[i].m = lo + (int)(next_rand(&rng) % (uint64_t)(hi - lo + 1));
			sh[i].n = lo + (int)(next_rand(&rng) % (uint64_t)(hi - lo + 1));
			sh[i].k = lo + (int)(next_rand(&rng) % (uint64_t)(hi - lo + 1));
		}
		return sh;
	}
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 1 || v > 4096 || nd == 64 || (*end && *end != ','))
			die("--mix wants a set like 5,13,23,26 or a range like 20-60");
		dims[nd++] = (int)v;
		p = *end ? end + 1 : end;
	}
	*count = nd * nd * nd;
	sh = xmalloc((size_t)*count * sizeof(*sh));
	for (int i = 0; i < *count; i++)
		sh[i] = (struct shape){ dims[i / (nd * nd)], dims[i / nd % nd], dims[i % nd] };
	return sh;
}

static void bench_mix(const struct opts *o)
{
	int count;
	struct shape *sh = mix_shapes(o, &count), zero = { 0, 0, 0 };

	check_all(o, sh, count);
	fprintf(stderr, "# mix %s: %d shapes\n", o->mix, count);
	bench_pool(o, sh, count, "mix.", zero);
	for (int i = 0; o->per_shape && i < count; i++)
		bench_pool(o, &sh[i], 1, "", sh[i]);
	free(sh);
}

static void bench_kernels(const struct opts *o)
{
	if (o->mix) {
		bench_mix(o);
		return;
	}
	check_all(o, o->shapes, o->nshapes);
	for (int i = 0; i < o->nshapes; i++)
		bench_pool(o, &o->shapes[i], 1, "", o->shapes[i]);
}

/* ---------------------------------------------------------------- StarPU tasks */

#ifdef HAVE_STARPU
static void empty_cpu(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static void dgemm_cpu(void *buffers[], void *arg)
{
	int m = (int)STARPU_MATRIX_GET_NX(buffers[2]);
	int n = (int)STARPU_MATRIX_GET_NY(buffers[2]);
	int k = (int)STARPU_MATRIX_GET_NY(buffers[0]);

	(void)arg;
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0,
		    (const double *)STARPU_MATRIX_GET_PTR(buffers[0]),
		    (int)STARPU_MATRIX_GET_LD(buffers[0]),
		    (const double *)STARPU_MATRIX_GET_PTR(buffers[1]),
		    (int)STARPU_MATRIX_GET_LD(buffers[1]), 1.0,
		    (double *)STARPU_MATRIX_GET_PTR(buffers[2]),
		    (int)STARPU_MATRIX_GET_LD(buffers[2]));
}

static struct starpu_codelet cl_empty = {
	.cpu_funcs = { empty_cpu }, .nbuffers = 0, .name = "kernels_empty"
};
static struct starpu_codelet cl_chain = {
	.cpu_funcs = { empty_cpu }, .nbuffers = 1, .modes = { STARPU_RW },
	.name = "kernels_chain"
};
static struct starpu_codelet cl_dgemm = {
	.cpu_funcs = { dgemm_cpu }, .nbuffers = 3,
	.modes = { STARPU_R, STARPU_R, STARPU_RW }, .name = "kernels_dgemm"
};

#define NPOOL 64

/* The handles a variant's tasks use: h[0] (RW chain), or A, B and NPOOL Cs. */
struct task_set {
	struct starpu_codelet *cl;
	int nbuf;
	int pool;		/* C is handle 2 + (i % pool) */
	starpu_data_handle_t h[2 + NPOOL];
	double *mem;
};

static void submit_insert(struct task_set *ts, long i)
{
	int ret;

	if (ts->nbuf == 0)
		ret = starpu_task_insert(ts->cl, 0);
	else if (ts->nbuf == 1)
		ret = starpu_task_insert(ts->cl, STARPU_RW, ts->h[0], 0);
	else
		ret = starpu_task_insert(ts->cl, STARPU_R, ts->h[0], STARPU_R, ts->h[1],
					 STARPU_RW, ts->h[2 + i % ts->pool], 0);
	if (ret != 0)
		die("starpu_task_insert failed");
}

static void submit_create(struct task_set *ts, long i)
{
	struct starpu_task *t = starpu_task_create();

	t->cl = ts->cl;
	if (ts->nbuf == 1)
		t->handles[0] = ts->h[0];
	if (ts->nbuf == 3) {
		t->handles[0] = ts->h[0];
		t->handles[1] = ts->h[1];
		t->handles[2] = ts->h[2 + i % ts->pool];
	}
	if (starpu_task_submit(t) != 0)
		die("starpu_task_submit failed");
}

static void task_set_init(struct task_set *ts, int nbuf, int s, int pool)
{
	size_t tile = (size_t)s * s;
	int nh = nbuf == 3 ? 2 + pool : nbuf;
	uint64_t rng = 42;

	ts->cl = nbuf == 0 ? &cl_empty : nbuf == 1 ? &cl_chain : &cl_dgemm;
	ts->nbuf = nbuf;
	ts->pool = pool;
	ts->mem = xmalloc((nh ? (size_t)nh : 1) * (tile ? tile : 1) * sizeof(double));
	fill(ts->mem, (size_t)nh * (tile ? tile : 1), &rng);
	for (int i = 0; i < nh; i++) {
		if (nbuf == 1)
			starpu_variable_data_register(&ts->h[i], STARPU_MAIN_RAM,
						      (uintptr_t)ts->mem, sizeof(double));
		else
			starpu_matrix_data_register(&ts->h[i], STARPU_MAIN_RAM,
						    (uintptr_t)(ts->mem + i * tile), s, s, s,
						    sizeof(double));
	}
}

static void task_set_fini(struct task_set *ts)
{
	int nh = ts->nbuf == 3 ? 2 + ts->pool : ts->nbuf;

	for (int i = 0; i < nh; i++)
		starpu_data_unregister(ts->h[i]);
	free(ts->mem);
}

/* Seconds to submit and run @n tasks (and, in *submit_s, to submit them). */
static double time_tasks(struct task_set *ts, long n, int create, double *submit_s)
{
	double t0 = now();

	for (long i = 0; i < n; i++) {
		if (create)
			submit_create(ts, i);
		else
			submit_insert(ts, i);
	}
	*submit_s = now() - t0;
	starpu_task_wait_for_all();
	return now() - t0;
}

static void task_variant(const struct opts *o, const char *sched, const char *variant,
			 int nbuf, int s, int pool, long n)
{
	static const char *const apis[] = { "insert", "create" };
	struct task_set ts;
	struct shape sh = { s, s, s };
	double flops = 2.0 * s * s * s * (double)n;

	task_set_init(&ts, nbuf, s, pool);
	for (int create = 0; create < 2; create++) {
		double *t = xmalloc((size_t)o->reps * sizeof(double));
		double *sub = xmalloc((size_t)o->reps * sizeof(double));
		char name[96];

		time_tasks(&ts, n / 10 + 1, create, &sub[0]);	/* warm-up */
		for (int r = 0; r < o->reps; r++)
			t[r] = time_tasks(&ts, n, create, &sub[r]);
		snprintf(name, sizeof(name), "starpu.%s.%s.%s", sched, variant, apis[create]);
		print_row(o, name, sh, n, median(t, o->reps), flops);
		snprintf(name, sizeof(name), "starpu.%s.%s.%s.submit", sched, variant,
			 apis[create]);
		print_row(o, name, sh, n, median(sub, o->reps), 0.0);
		free(t);
		free(sub);
	}
	task_set_fini(&ts);
}

/* Tasks per dgemm point: about 2e10 flops, within [1000, --tasks]. */
static long dgemm_tasks(const struct opts *o, int s)
{
	double n = 2e10 / (2.0 * s * s * s);

	return n < 1000 ? 1000 : n > (double)o->ntasks ? o->ntasks : (long)n;
}

static void starpu_one_sched(const struct opts *o, const char *sched)
{
	struct starpu_conf conf;
	const char *actual;

	starpu_conf_init(&conf);
	conf.sched_policy_name = sched;
	conf.ncpus = 1;
	conf.ncuda = 0;
	conf.nopencl = 0;
	if (starpu_init(&conf) != 0)
		die("starpu_init failed");
	actual = starpu_sched_ctx_get_sched_policy(0)->policy_name;
	fprintf(stderr, "# starpu: policy %s, %u CPU worker(s), %u CUDA\n", actual,
		starpu_cpu_worker_get_count(), starpu_cuda_worker_get_count());
	task_variant(o, actual, "empty", 0, 0, 1, o->ntasks);
	task_variant(o, actual, "chain", 1, 0, 1, o->ntasks);
	for (int i = 0; i < o->nshapes; i++) {
		int s = o->shapes[i].m;

		task_variant(o, actual, "dgemm", 3, s, 1, dgemm_tasks(o, s));
		task_variant(o, actual, "dgemm_indep", 3, s, NPOOL, dgemm_tasks(o, s));
	}
	starpu_shutdown();
}

static void bench_starpu(const struct opts *o)
{
	const char *env = getenv("STARPU_SCHED");
	char *list = strdup(env ? env : o->scheds), *save = NULL;

	if (!list)
		die("out of memory");
	if (env)
		fprintf(stderr, "# STARPU_SCHED=%s overrides --sched\n", env);
	for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save))
		starpu_one_sched(o, s);
	free(list);
}
#endif

/* ---------------------------------------------------------------- options */

static const char *const default_sizes = "4,5,8,13,16,20,23,26,32,48,64,96,128,192,256";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kernels [options]\n"
		"Times small-tile dgemm kernels (C += A B, column major, packed) and,\n"
		"with --starpu, the cost of one StarPU task. Run it pinned, one thread:\n"
		"  OPENBLAS_NUM_THREADS=1 taskset -c 1 ./kernels --csv\n"
		"\n"
		"  --sizes LIST      S or MxNxK items, comma separated (default %s)\n"
		"  --kernels LIST    of openblas,libxsmm,libxsmm_pf,libxsmm_dispatch,loop,any\n"
		"                    (default: all compiled in)\n"
		"  --modes LIST      hot,stream (default both): a few cache-resident tiles,\n"
		"                    or tiles filling --stream-mib visited in shuffled order\n"
		"  --stream-mib N    streaming footprint in MiB (default 64)\n"
		"  --reps N          timed repetitions per point, median reported (default 3)\n"
		"  --min-time SEC    seconds per repetition at least (default 0.2)\n"
		"  --complex         the products in double complex (8 flops per multiply-add;\n"
		"                    kernels openblas, loop, any)\n"
		"  --isa avx512|avx2 the instruction set of the kernel any (default: the\n"
		"                    widest this CPU has, stargemm's choice)\n"
		"  --trans-a         op(A) = A^T (A stored k x m): OpenBLAS as it is, the\n"
		"                    others after op(A) is copied out (sides up to 256)\n"
		"  --mix SPEC        random shape per product: a set \"5,13,23,26\" (all\n"
		"                    m,n,k combinations) or a range \"20-60\"; rows have\n"
		"                    m = n = k = 0 and kernel <name>.mix.<mode>\n"
		"  --mix-count N     shapes drawn for a range (default 16)\n"
		"  --per-shape       with --mix, also one row per shape\n"
		"  --seed N          random seed (default 1)\n"
		"  --starpu          time StarPU tasks instead (1 CPU worker; sizes give the\n"
		"                    dgemm task tiles)\n"
		"  --tasks N         tasks per StarPU point (default 100000)\n"
		"  --sched LIST      StarPU policies (default eager,lws; STARPU_SCHED wins)\n"
		"  --clock wall|cpu  time with the wall clock (default) or the thread's CPU\n"
		"                    time, which other processes' time slices do not inflate\n"
		"                    (kernels only; --starpu always uses the wall clock)\n"
		"  --csv             CSV: kernel,m,n,k,calls,seconds,us_per_call,gflops\n"
		"  --help            this text\n", default_sizes);
}

static void bad_option(const char *opt, const char *arg)
{
	fprintf(stderr, "kernels: bad value '%s' for --%s (see --help)\n", arg, opt);
	exit(EXIT_FAILURE);
}

static long parse_long(const char *opt, const char *arg, long lo, long hi)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (end == arg || *end || v < lo || v > hi)
		bad_option(opt, arg);
	return v;
}

static int parse_shape(const char *item, struct shape *sh)
{
	int used = 0;

	if (sscanf(item, "%dx%dx%d%n", &sh->m, &sh->n, &sh->k, &used) == 3 &&
	    item[used] == '\0')
		return sh->m > 0 && sh->n > 0 && sh->k > 0;
	if (sscanf(item, "%d%n", &sh->m, &used) == 1 && item[used] == '\0') {
		sh->n = sh->k = sh->m;
		return sh->m > 0;
	}
	return 0;
}

static void parse_sizes(struct opts *o, const char *arg)
{
	char *list = strdup(arg), *save = NULL;
	int cap = 1;

	if (!list)
		die("out of memory");
	for (const char *p = arg; *p; p++)
		cap += *p == ',';
	free(o->shapes);
	o->shapes = xmalloc((size_t)cap * sizeof(*o->shapes));
	o->nshapes = 0;
	for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save))
		if (!parse_shape(s, &o->shapes[o->nshapes++]))
			bad_option("sizes", s);
	free(list);
	if (o->nshapes == 0)
		bad_option("sizes", arg);
}

static unsigned parse_names(const char *opt, const char *arg,
			    const char *const *names, int count)
{
	char *list = strdup(arg), *save = NULL;
	unsigned set = 0;

	if (!list)
		die("out of memory");
	for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		int i = 0;

		while (i < count && strcmp(s, names[i]) != 0)
			i++;
		if (i == count)
			bad_option(opt, s);
		set |= 1u << i;
	}
	free(list);
	return set;
}

static unsigned available_kernels(void)
{
	unsigned set = 1u << K_OPENBLAS | 1u << K_LOOP;

#ifdef HAVE_LIBXSMM
	set |= 1u << K_LIBXSMM | 1u << K_LIBXSMM_PF | 1u << K_LIBXSMM_DISPATCH;
#endif
#ifdef HAVE_ANY
	set |= 1u << K_ANY;
#endif
	return set;
}

static void set_clock(const char *arg, const char *const *names)
{
	unsigned set = parse_names("clock", arg, names, 2);

	if (set != 1 && set != 2)
		bad_option("clock", arg);
	bench_clock = set == 2 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
}

/* --isa: the kernels any times (@p arg NULL: those of the widest instruction set this
 * CPU has); 0 when it has none. */
static int set_isa(const char *arg)
{
#ifdef HAVE_ANY
	int isa = stargemm__small_isa();

	if (arg && strcmp(arg, "avx512") == 0)
		isa = STARGEMM__ISA_AVX512;
	else if (arg && strcmp(arg, "avx2") == 0)
		isa = STARGEMM__ISA_AVX2;
	else if (arg)
		bad_option("isa", arg);
	if (arg && !stargemm__small_isa_usable(isa))
		die("--isa: this CPU does not have that instruction set");
	if (!stargemm__small_isa_usable(isa))
		return 0;
	any_dgemm = isa == STARGEMM__ISA_AVX512 ? stargemm__dgemm_any_avx512
						: stargemm__dgemm_any_avx2;
	any_zgemm = isa == STARGEMM__ISA_AVX512 ? stargemm__zgemm_any_avx512
						: stargemm__zgemm_any_avx2;
	fprintf(stderr, "# any: the %s kernels\n", stargemm__small_isa_name(isa));
	return 1;
#else
	if (arg)
		die("--isa needs -DHAVE_ANY");
	return 0;
#endif
}

static void parse_options(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "modes", required_argument, NULL, 'M' },
		{ "stream-mib", required_argument, NULL, 'S' },
		{ "reps", required_argument, NULL, 'r' },
		{ "min-time", required_argument, NULL, 't' },
		{ "mix", required_argument, NULL, 'x' },
		{ "mix-count", required_argument, NULL, 'c' },
		{ "per-shape", no_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'e' },
		{ "starpu", no_argument, NULL, 'P' },
		{ "tasks", required_argument, NULL, 'T' },
		{ "sched", required_argument, NULL, 'd' },
		{ "clock", required_argument, NULL, 'K' },
		{ "csv", no_argument, NULL, 'C' },
		{ "complex", no_argument, NULL, 'Z' },
		{ "trans-a", no_argument, NULL, 'A' },
		{ "isa", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const mode_names[] = { "hot", "stream" };
	static const char *const clock_names[] = { "wall", "cpu" };
	const char *isa_arg = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': parse_sizes(o, optarg); break;
		case 'k':
			o->kernels = parse_names("kernels", optarg, kern_names, K_COUNT);
			o->kernels_given = 1;
			break;
		case 'M': o->modes = parse_names("modes", optarg, mode_names, 2); break;
		case 'S': o->stream_bytes = (size_t)parse_long("stream-mib", optarg, 1, 1 << 16) << 20; break;
		case 'r': o->reps = (int)parse_long("reps", optarg, 1, 1000); break;
		case 't': o->min_time = atof(optarg); break;
		case 'x': o->mix = optarg; break;
		case 'c': o->mix_count = (int)parse_long("mix-count", optarg, 1, 1 << 20); break;
		case 'p': o->per_shape = 1; break;
		case 'e': o->seed = (uint64_t)parse_long("seed", optarg, 0, INT64_MAX); break;
		case 'P': o->starpu = 1; break;
		case 'T': o->ntasks = parse_long("tasks", optarg, 1, 1L << 40); break;
		case 'd': o->scheds = optarg; break;
		case 'K': set_clock(optarg, clock_names); break;
		case 'C': o->csv = 1; break;
		case 'Z': per_element = 2; break;
		case 'A': trans_a = 1; break;
		case 'I': isa_arg = optarg; break;
		case 'h': usage(stdout); exit(EXIT_SUCCESS);
		default: usage(stderr); exit(EXIT_FAILURE);
		}
	}
	if (optind < argc)
		bad_option("(argument)", argv[optind]);
	if (!(o->min_time > 0))
		die("--min-time must be positive");
#ifndef HAVE_STARPU
	if (o->starpu)
		die("--starpu needs a build with -DHAVE_STARPU");
#endif
	if (per_element == 2 && !o->kernels_given)
		o->kernels &= 1u << K_OPENBLAS | 1u << K_LOOP | 1u << K_ANY;
	if (per_element == 2 && o->starpu)
		die("--complex times kernels, not StarPU tasks");
	if (o->kernels & ~available_kernels())
		die("a kernel of --kernels is not compiled in (libxsmm needs -DHAVE_LIBXSMM, any -DHAVE_ANY)");
	if ((isa_arg || o->kernels & 1u << K_ANY) && !set_isa(isa_arg)) {
		if (o->kernels_given && o->kernels & 1u << K_ANY)
			die("--kernels any: this CPU has neither AVX-512F nor AVX2 + FMA");
		o->kernels &= ~(1u << K_ANY);
	}
}

static const char *env_or_unset(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "(unset)";
}

int main(int argc, char **argv)
{
	struct opts o = {
		.reps = 3, .min_time = 0.2, .kernels = available_kernels(),
		.modes = M_HOT | M_STREAM, .stream_bytes = (size_t)64 << 20,
		.mix_count = 16, .seed = 1, .ntasks = 100000, .scheds = "eager,lws"
	};

	parse_sizes(&o, default_sizes);
	parse_options(argc, argv, &o);
	fprintf(stderr, "# OpenBLAS core %s, OPENBLAS_NUM_THREADS=%s\n",
		openblas_get_corename(), env_or_unset("OPENBLAS_NUM_THREADS"));
#ifdef HAVE_LIBXSMM
	libxsmm_init();
	fprintf(stderr, "# libxsmm %s, target %s\n", LIBXSMM_VERSION,
		libxsmm_get_target_arch());
#endif
	fprintf(stderr, "# clock: %s\n", bench_clock == CLOCK_MONOTONIC || o.starpu ?
		"wall" : "thread CPU time");
	if (o.starpu) {
#ifdef HAVE_STARPU
		bench_clock = CLOCK_MONOTONIC;
		bench_starpu(&o);
#endif
	} else {
		bench_kernels(&o);
	}
#ifdef HAVE_LIBXSMM
	libxsmm_finalize();
#endif
	free(o.shapes);
	return EXIT_SUCCESS;
}
