/*
 * collective.c — the one reduction stargemm needs of its own (transfer counters, error
 * agreement): an element-wise sum of small uint64 vectors over all ranks, and on it the
 * agreement that gives every rank the failure of one (its rank and message).
 *
 * With MPI_THREAD_MULTIPLE it is an MPI_Iallreduce beside StarPU-MPI's progress
 * thread. Without it (MPI_THREAD_SERIALIZED, and SimGrid's SMPI, where the application
 * thread must not call MPI at all) it goes through StarPU-MPI itself: every rank sends
 * its vector to every other rank with starpu_mpi_isend/irecv and adds what it receives.
 * A sum is posted (stargemm__sum_begin()) and completed (stargemm__sum_end()), so that
 * the executor can read it later without blocking its insertion meanwhile.
 * Collective: every rank calls it in the same order (it reserves a tag). The same sum
 * shares values that each rank knows for its own tiles only (tile norms).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "collective.h"
#include "error.h"
#include "process.h"
#include "stargemm.h"

/* Bytes this rank's reductions sent through StarPU-MPI to each rank: StarPU-MPI counts
 * them with the tiles, and the transfer counters take them out again (stats.c). */
static uint64_t *own_bytes;
static int own_ranks;

void stargemm__reduction_bytes(size_t *sent)
{
	for (int r = 0; r < own_ranks && r < stargemm_nranks(); r++)
		sent[r] -= own_bytes[r];
}

void stargemm__reduction_shutdown(void)
{
	free(own_bytes);
	own_bytes = NULL;
	own_ranks = 0;
}

int stargemm__reduction_sent(int to, uint64_t bytes)
{
	int nranks = stargemm_nranks();

	if (own_ranks != nranks) {
		free(own_bytes);
		own_bytes = calloc((size_t)nranks, sizeof(*own_bytes));
		own_ranks = own_bytes ? nranks : 0;
	}
	if (!own_bytes)
		return -ENOMEM;
	own_bytes[to] += bytes;
	return 0;
}

static int count_own(int nranks, int n)
{
	int ret = 0;

	for (int r = 0; r < nranks && !ret; r++)
		if (r != stargemm_rank())
			ret = stargemm__reduction_sent(r, (uint64_t)n * sizeof(uint64_t));
	return ret;
}

/* A sum in flight: stargemm__sum_begin() posts it, stargemm__sum_end() completes it. */
struct stargemm__sum {
	int n, ret;
	uint64_t *in;                 /* this rank's values (a copy) */
	uint64_t *out;                /* the sum (MPI_Iallreduce's buffer) */
	uint64_t *recv;               /* through StarPU-MPI: every other rank's values */
	starpu_data_handle_t hs, *hr;
	starpu_mpi_req *sreq, *rreq;
	MPI_Request mreq;             /* MPI_Iallreduce, or MPI_REQUEST_NULL */
	int64_t tag;                  /* through StarPU-MPI: the sum's tag */
};

static void sum_free(struct stargemm__sum *s)
{
	free(s->in);
	free(s->out);
	free(s->recv);
	free(s->hr);
	free(s->sreq);
	free(s->rreq);
	free(s);
}

/* Through StarPU-MPI: every rank sends its values to every other rank. */
static void post_by_starpu_mpi(struct stargemm__sum *s)
{
	int me = stargemm_rank(), nranks = stargemm_nranks(), n = s->n, rc;
	int64_t tag = s->tag = stargemm__reserve_tags(1);
	MPI_Comm comm = stargemm__comm();

	starpu_vector_data_register(&s->hs, STARPU_MAIN_RAM, (uintptr_t)s->in, (uint32_t)n,
				    sizeof(*s->in));
	for (int r = 0; r < nranks; r++) {
		if (r == me)
			continue;
		starpu_vector_data_register(&s->hr[r], STARPU_MAIN_RAM,
					    (uintptr_t)(s->recv + r * n), (uint32_t)n,
					    sizeof(*s->recv));
		if (!s->ret && (rc = starpu_mpi_irecv(s->hr[r], &s->rreq[r], r, tag, comm)))
			s->ret = stargemm__error(-EIO, "stargemm: reduction: receive from rank "
						 "%d failed (%d)", r, rc);
		if (!s->ret && (rc = starpu_mpi_isend(s->hs, &s->sreq[r], r, tag, comm)))
			s->ret = stargemm__error(-EIO, "stargemm: reduction: send to rank %d "
						 "failed (%d)", r, rc);
	}
}

/* Wait for what was posted, even after a failure: the buffers are freed after.
 * starpu_mpi_wait()'s result is no verdict: StarPU-MPI 1.3 returns -1 for a receive
 * whose message arrived before it was posted, and stops the program itself on an MPI
 * error. */
static void end_by_starpu_mpi(struct stargemm__sum *s, uint64_t *out)
{
	int me = stargemm_rank(), nranks = stargemm_nranks(), n = s->n;

	memcpy(out, s->in, (size_t)n * sizeof(*out));
	for (int r = 0; r < nranks; r++) {
		if (r == me)
			continue;
		if (s->sreq[r])
			starpu_mpi_wait(&s->sreq[r], MPI_STATUS_IGNORE);
		if (s->rreq[r])
			starpu_mpi_wait(&s->rreq[r], MPI_STATUS_IGNORE);
		starpu_data_unregister(s->hr[r]);
		for (int i = 0; i < n && !s->ret; i++)
			out[i] += s->recv[r * n + i];
	}
	starpu_data_unregister(s->hs);
	stargemm__release_tags(s->tag, 1);   /* every message of the sum is done here */
}

/* How long wait_politely() tests without a pause (seconds): a sum whose ranks arrive
 * together completes within it. With only the pauses, the other rank's part arriving
 * just after a test waits out a pause, several times per sum, and a small ScaLAPACK
 * drop-in call makes eleven sums: on one-core ranks the pauses took most of the call
 * (doc/design.md, Decisions, "A sum's wait spins 200 µs before it sleeps"). */
#define SPIN_SECONDS 2e-4

/* MPI_Wait spins on a core (MPICH), which the StarPU workers of the rank need while
 * the other ranks catch up: test for SPIN_SECONDS, then sleep 50 us between tests. */
static int wait_politely(MPI_Request *req)
{
	const struct timespec pause = { 0, 50000 };
	double start = MPI_Wtime();
	int done = 0, rc;

	while ((rc = MPI_Test(req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
		if (MPI_Wtime() - start > SPIN_SECONDS)
			nanosleep(&pause, NULL);
	return rc;
}

struct stargemm__sum *stargemm__sum_begin(const uint64_t *in, int n)
{
	struct stargemm__sum *s = calloc(1, sizeof(*s));
	int nranks = stargemm_nranks(), multiple = stargemm__mpi_thread_multiple(), ok;

	if (!s) {
		stargemm__error(-ENOMEM, "stargemm: out of memory for a reduction");
		return NULL;
	}
	s->n = n;
	s->mreq = MPI_REQUEST_NULL;
	s->in = malloc((size_t)n * sizeof(*s->in));
	ok = s->in != NULL;
	if (ok && nranks > 1 && multiple)
		ok = (s->out = malloc((size_t)n * sizeof(*s->out))) != NULL;
	if (ok && nranks > 1 && !multiple) {
		s->recv = calloc((size_t)nranks * (size_t)n, sizeof(*s->recv));
		s->hr = calloc((size_t)nranks, sizeof(*s->hr));
		s->sreq = calloc((size_t)nranks, sizeof(*s->sreq));
		s->rreq = calloc((size_t)nranks, sizeof(*s->rreq));
		ok = s->recv && s->hr && s->sreq && s->rreq && !count_own(nranks, n);
	}
	if (!ok) {
		sum_free(s);
		stargemm__error(-ENOMEM, "stargemm: out of memory for a reduction over %d ranks",
				nranks);
		return NULL;
	}
	memcpy(s->in, in, (size_t)n * sizeof(*in));
	if (nranks > 1 && multiple) {
		int rc = MPI_Iallreduce(s->in, s->out, n, MPI_UINT64_T, MPI_SUM,
					stargemm__comm(), &s->mreq);

		if (rc != MPI_SUCCESS)
			s->ret = stargemm__error(-EIO, "stargemm: MPI_Iallreduce of %d counters "
						 "failed (MPI error %d)", n, rc);
	} else if (nranks > 1) {
		post_by_starpu_mpi(s);
	}
	return s;
}

int stargemm__sum_end(struct stargemm__sum *s, uint64_t *out)
{
	int ret;

	if (s->recv) {
		end_by_starpu_mpi(s, out);
	} else if (s->mreq != MPI_REQUEST_NULL) {
		int rc = wait_politely(&s->mreq);

		if (rc != MPI_SUCCESS && !s->ret)
			s->ret = stargemm__error(-EIO, "stargemm: MPI_Iallreduce of %d counters "
						 "failed (MPI error %d)", s->n, rc);
		memcpy(out, s->out, (size_t)s->n * sizeof(*out));
	} else {
		memcpy(out, s->in, (size_t)s->n * sizeof(*out));  /* one rank */
	}
	ret = s->ret;
	sum_free(s);
	return ret;
}

int stargemm__sum_u64(const uint64_t *in, uint64_t *out, int n)
{
	struct stargemm__sum *s;

	if (stargemm_nranks() == 1) {
		memcpy(out, in, (size_t)n * sizeof(*out));
		return 0;
	}
	if (!(s = stargemm__sum_begin(in, n)))
		return -ENOMEM;
	return stargemm__sum_end(s, out);
}

/* The lowest failing rank's message, as 64-bit words for the sum (the other ranks
 * add zeros). */
#define FAILURE_WORDS (STARGEMM__FAILURE_MSG / 8)

/* share_failure() with each rank's @p fingerprint of its arguments beside its code, in
 * the same sum: *differs (when not NULL) receives the lowest rank whose fingerprint is
 * not rank 0's, or -1. */
static int share(int code, uint64_t fingerprint, const char *msg, struct stargemm__failure *f,
		 int *differs)
{
	int nranks = stargemm_nranks(), me = stargemm_rank(), ret;
	uint64_t *v = calloc((size_t)nranks * 4, sizeof(*v));   /* codes, fingerprints; sums */
	uint64_t words[FAILURE_WORDS] = { 0 }, sum[FAILURE_WORDS], *got = v + 2 * nranks;

	memset(f, 0, sizeof(*f));
	f->rank = -1;
	if (differs)
		*differs = -1;
	if (!v)
		return stargemm__error(-ENOMEM, "stargemm: out of memory for an agreement over "
				       "%d ranks", nranks);
	v[me] = code < 0 ? (uint64_t)-(int64_t)code : 0;
	v[nranks + me] = fingerprint;
	ret = stargemm__sum_u64(v, got, 2 * nranks);
	for (int r = 0; r < nranks && !ret; r++) {
		f->count += got[r] != 0;
		if (got[r] && f->rank < 0) {
			f->rank = r;
			f->code = -(int)got[r];
		}
		if (differs && *differs < 0 && got[nranks + r] != got[nranks])
			*differs = r;
	}
	free(v);
	if (ret || f->count == 0)
		return ret;
	if (f->rank == me)
		strncpy((char *)words, msg ? msg : "", sizeof(words) - 1);
	if ((ret = stargemm__sum_u64(words, sum, FAILURE_WORDS)))
		return ret;
	memcpy(f->msg, sum, sizeof(f->msg) - 1);
	f->msg[sizeof(f->msg) - 1] = '\0';
	return 0;
}

int stargemm__share_failure(int code, const char *msg, struct stargemm__failure *f)
{
	return share(code, 0, msg, f, NULL);
}

uint64_t stargemm__fingerprint(uint64_t h, const void *bytes, size_t n)
{
	const unsigned char *b = bytes;

	if (h == 0)
		h = 1469598103934665603ULL;   /* FNV-1a */
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

int stargemm__agree_args(int ret, uint64_t fingerprint, const char *fn, const char *what)
{
	struct stargemm__failure f;
	int rc, differs;

	if (stargemm_nranks() == 1)
		return ret;
	rc = share(ret, fingerprint, stargemm_last_error(), &f, &differs);
	if (ret)
		return ret;
	if (rc)
		return rc;
	if (f.count)
		return stargemm__error(f.code, "stargemm: rank %d failed, and the call is "
				       "abandoned on every rank (%llu rank(s) failed): %s", f.rank,
				       (unsigned long long)f.count, f.msg);
	if (differs >= 0)
		return stargemm__error(-EINVAL, "%s: rank %d passed other %s than rank 0: a "
				       "collective call takes the same ones on every rank", fn,
				       differs, what);
	return 0;
}

int stargemm__agree(int ret)
{
	/* every rank's fingerprint 0: only the failures are compared */
	return stargemm__agree_args(ret, 0, "stargemm", "arguments");
}

int stargemm__extremes_u64(uint64_t mine, uint64_t *least, uint64_t *most)
{
	int n = stargemm_nranks(), ret;
	uint64_t *v = calloc((size_t)(2 * n), sizeof(*v));

	if (!v)
		return stargemm__error(-ENOMEM, "stargemm: out of memory for a reduction");
	v[stargemm_rank()] = mine;
	ret = stargemm__sum_u64(v, v + n, n);
	for (int r = 0; r < n && !ret; r++) {
		if (least && (r == 0 || v[n + r] < *least))
			*least = v[n + r];
		if (most && (r == 0 || v[n + r] > *most))
			*most = v[n + r];
	}
	free(v);
	return ret;
}

int stargemm__share_owned_f64(double *v, int64_t n)
{
	uint64_t *bits, *sum;
	int ret;

	if (n > INT_MAX)
		return stargemm__error(-EINVAL, "stargemm: %" PRId64 " shared values exceed one "
				       "reduction (at most %d)", n, INT_MAX);
	bits = malloc((size_t)(n > 0 ? n : 1) * sizeof(*bits));
	sum = malloc((size_t)(n > 0 ? n : 1) * sizeof(*sum));
	if (!bits || !sum) {
		free(bits);
		free(sum);
		return stargemm__error(-ENOMEM, "stargemm: out of memory for %" PRId64
				       " shared values", n);
	}
	/* Each value is non-zero on at most one rank and +0.0 is the all-zero pattern:
	 * the integer sum of the patterns is the owner's value, bit for bit. */
	memcpy(bits, v, (size_t)n * sizeof(*bits));
	ret = stargemm__sum_u64(bits, sum, (int)n);
	if (!ret)
		memcpy(v, sum, (size_t)n * sizeof(*sum));
	free(bits);
	free(sum);
	return ret;
}
