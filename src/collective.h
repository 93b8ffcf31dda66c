/*
 * collective.h — sums over the ranks, blocking or not, and the agreement on a failure
 * (src/collective.c). Runtime-services floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_COLLECTIVE_H
#define STARGEMM_COLLECTIVE_H

#include <stddef.h>
#include <stdint.h>

/* Element-wise sum of @p n values over all ranks into @p out (collective; works at any
 * MPI thread level, also in simulation) (collective.c). */
int stargemm__sum_u64(const uint64_t *in, uint64_t *out, int n);
/* The same sum without blocking: begin posts it (a copy of @p in is taken; NULL: out
 * of memory, message set), end waits for it, writes it to @p out and frees it.
 * Collective: every rank begins and ends its sums in the same order. */
struct stargemm__sum;
struct stargemm__sum *stargemm__sum_begin(const uint64_t *in, int n);
int stargemm__sum_end(struct stargemm__sum *s, uint64_t *out);
/* Error agreement, for a collective call whose failure may be one rank's only (memory,
 * environment, an argument of one rank's): every rank passes its status; returns it,
 * or, when this rank succeeded and another did not, the lowest failing rank's code
 * with its rank and message, so that all ranks give up together, with the same code,
 * instead of some waiting for the others' messages. Collective. */
int stargemm__agree(int ret);
/* The same agreement, and in the same sum the check that every rank passed the same
 * arguments: @p fingerprint hashes this rank's (stargemm__fingerprint()). When the
 * ranks succeeded but a fingerprint differs from rank 0's, every rank returns -EINVAL
 * with "@p fn: rank r passed other @p what than rank 0", so that a disagreement is an
 * error before any message of the call is posted, not a hang. Collective. */
int stargemm__agree_args(int ret, uint64_t fingerprint, const char *fn, const char *what);
/* FNV-1a of @p n bytes, continuing @p h (0 to start). */
uint64_t stargemm__fingerprint(uint64_t h, const void *bytes, size_t n);
/* What the ranks learn of a failure: how many failed, the lowest one and its message. */
#define STARGEMM__FAILURE_MSG 512
struct stargemm__failure {
	uint64_t count;
	int rank;                         /* the lowest failing rank, -1 if none */
	int code;                         /* its error code (negative errno), 0 if none */
	char msg[STARGEMM__FAILURE_MSG];  /* its message (truncated) */
};
/* Every rank passes its error code (0: it did not fail) and its message; every rank
 * gets @p f. Collective; returns 0 or an error of the reduction itself. */
int stargemm__share_failure(int code, const char *msg, struct stargemm__failure *f);
/* Give every rank the @p n values of which each rank knows its own entries and holds
 * +0.0 for the others' (non-negative values, one owner per entry). Collective. */
int stargemm__share_owned_f64(double *v, int64_t n);
/* The smallest and the largest of every rank's @p mine into *least and *most (either
 * may be NULL): each rank's value in its own slot of a sum. Collective; 0 or -ENOMEM. */
int stargemm__extremes_u64(uint64_t mine, uint64_t *least, uint64_t *most);
/* Take the reductions' own StarPU-MPI traffic out of per-destination byte counts. */
void stargemm__reduction_bytes(size_t *sent);
/* @p bytes this rank sent to rank @p to through StarPU-MPI for its own purposes (a
 * sum, the network measurement): taken out of the transfer counters. 0 or -ENOMEM. */
int stargemm__reduction_sent(int to, uint64_t bytes);
void stargemm__reduction_shutdown(void);

#endif
