/*
 * distribution.c — which rank owns a tile: a Cartesian distribution over the P x Q
 * grid, tile (i, j) on grid process (row_proc[i], col_proc[j]) (DBCSR's row_dist and
 * col_dist). 2D block-cyclic (i mod P, j mod Q) is the default; any map keeps the
 * grid's structure — a tile row lives on one process row, a tile column on one
 * process column — which is what the inspector's batches and blocks rely on.
 *
 * One axis (rows or columns) is stored with the inverse maps the inspector walks:
 * each tile's local index on its process and each process's tiles in order.
 *
 * The grid says which rank process (p, q) is: p Q + q (row-major) unless a map says
 * otherwise — a ScaLAPACK program's BLACS grid may list the ranks column by column
 * (Cblacs_gridinit's "Col") or in any order (Cblacs_gridmap), and its local arrays are
 * those of its grid's processes. The map is checked to be a permutation of the ranks
 * and kept with its inverse, each rank's (p, q).
 *
 * Also the load-balanced column map of paper 000 §3.2.1: C's tile columns, weighed
 * by the flops of their products, sorted and dealt to the Q process columns in
 * mirrored cyclic order (0..Q-1, Q-1..0, ...).
 *
 * Pure: no MPI, no StarPU (unit-tested in tests/test_inspect.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "distribution.h"
#include "error.h"
#include "stargemm.h"

void stargemm__axis_free(struct stargemm__axis *a)
{
	free(a->proc);
	free(a->local);
	free(a->start);
	free(a->at);
	*a = (struct stargemm__axis){ 0 };
}

/* The inverse maps of a->proc: local indices, per-process lists, the longest list. */
static void axis_index(struct stargemm__axis *a)
{
	for (int p = 0; p <= a->nproc; p++)
		a->start[p] = 0;
	for (int64_t i = 0; i < a->n; i++)
		a->local[i] = a->start[a->proc[i] + 1]++;
	for (int p = 0; p < a->nproc; p++) {
		int64_t count = a->start[p + 1];

		a->maxlocal = count > a->maxlocal ? count : a->maxlocal;
		a->start[p + 1] = a->start[p] + count;
	}
	for (int64_t i = 0; i < a->n; i++)
		a->at[a->start[a->proc[i]] + a->local[i]] = i;
}

int stargemm__axis_init(struct stargemm__axis *a, int64_t n, int nproc, const int *proc,
			const char *what)
{
	*a = (struct stargemm__axis){ .n = n, .nproc = nproc };
	if (proc)
		for (int64_t i = 0; i < n; i++)
			if (proc[i] < 0 || proc[i] >= nproc)
				return stargemm__error(-EINVAL, "%s[%" PRId64 "] = %d: a process "
						       "index must lie in [0, %d)", what, i,
						       proc[i], nproc);
	a->proc = malloc((size_t)(n > 0 ? n : 1) * sizeof(*a->proc));
	a->local = malloc((size_t)(n > 0 ? n : 1) * sizeof(*a->local));
	a->start = malloc((size_t)(nproc + 1) * sizeof(*a->start));
	a->at = malloc((size_t)(n > 0 ? n : 1) * sizeof(*a->at));
	if (!a->proc || !a->local || !a->start || !a->at) {
		stargemm__axis_free(a);
		return stargemm__error(-ENOMEM, "out of memory for the distribution of %" PRId64
				       " tiles", n);
	}
	for (int64_t i = 0; i < n; i++)
		a->proc[i] = proc ? proc[i] : (int)(i % nproc);
	axis_index(a);
	return 0;
}

/* The map @p rank, in row-major order: no map to keep. */
static int row_major(const int *rank, int n)
{
	for (int e = 0; e < n; e++)
		if (rank[e] != e)
			return 0;
	return 1;
}

/* The inverse of the map @p rank of @p n entries into @p coord (n entries), checked:
 * every rank in [0, n) once. */
static int invert(const int *rank, int n, int *coord, const char *fn)
{
	for (int r = 0; r < n; r++)
		coord[r] = -1;
	for (int e = 0; e < n; e++) {
		if (rank[e] < 0 || rank[e] >= n)
			return stargemm__error(-EINVAL, "%s: grid[%d] = %d is out of range: the "
					       "grid must list each rank of [0, %d) once", fn, e,
					       rank[e], n);
		if (coord[rank[e]] >= 0)
			return stargemm__error(-EINVAL, "%s: grid[%d] = %d is a rank listed twice "
					       "(grid[%d] too): the grid must list each rank of [0, "
					       "%d) once", fn, e, rank[e], coord[rank[e]], n);
		coord[rank[e]] = e;
	}
	return 0;
}

int stargemm__grid_init(struct stargemm__grid *g, int P, int Q, const int *rank,
			const char *fn)
{
	int n = P * Q, ret;

	*g = (struct stargemm__grid){ P, Q, NULL, NULL };
	if (!rank || row_major(rank, n))
		return 0;
	g->rank = malloc((size_t)n * sizeof(*g->rank));
	g->coord = malloc((size_t)n * sizeof(*g->coord));
	if (!g->rank || !g->coord)
		ret = stargemm__error(-ENOMEM, "%s: out of memory for a grid of %d ranks", fn, n);
	else
		ret = invert(rank, n, g->coord, fn);
	if (ret) {
		stargemm__grid_free(g);
		return ret;
	}
	for (int e = 0; e < n; e++)
		g->rank[e] = rank[e];
	return 0;
}

void stargemm__grid_free(struct stargemm__grid *g)
{
	free(g->rank);
	free(g->coord);
	g->rank = g->coord = NULL;
}

int stargemm__grid_differs(const struct stargemm__grid *a, const struct stargemm__grid *b)
{
	for (int p = 0; p < a->P; p++)
		for (int q = 0; q < a->Q; q++)
			if (stargemm__grid_rank(a, p, q) != stargemm__grid_rank(b, p, q))
				return p * a->Q + q;
	return -1;
}

/* ---- the load-balanced columns (paper 000 §3.2.1) -------------------------------- */

struct weighed {
	double w;
	int64_t j;
};

static int by_weight(const void *x, const void *y)
{
	const struct weighed *a = x, *b = y;

	if (a->w != b->w)
		return a->w < b->w ? -1 : 1;
	return a->j < b->j ? -1 : a->j > b->j;
}

/* Whether entry @p e of @p X's list lies in its tiles (else an error naming it). */
static int listed_tile(const struct stargemm_pattern *X, const char *name, int64_t e)
{
	int64_t i = X->present[2 * e], j = X->present[2 * e + 1];

	if (i < 0 || i >= X->mt || j < 0 || j >= X->nt)
		return stargemm__error(-EINVAL, "stargemm_balanced_columns: %s's tile %" PRId64
				       " (%" PRId64 ", %" PRId64 ") lies outside its %" PRId64 " x %"
				       PRId64 " tiles", name, e, i, j, X->mt, X->nt);
	return 0;
}

/* The rows of A present in each tile column k, summed (A's pattern, k < kt). */
static int a_column_rows(const struct stargemm_pattern *A, double *rows)
{
	for (int64_t k = 0; k < A->nt; k++)
		rows[k] = 0.0;
	for (int64_t e = 0; e < A->npresent; e++) {
		if (listed_tile(A, "A", e))
			return -EINVAL;
		rows[A->present[2 * e + 1]] += (double)A->row_sizes[A->present[2 * e]];
	}
	return 0;
}

/* Flops of each tile column j of C = A B: 2 n_j sum_k [B(k, j)] k_k rows_k. */
static int column_weights(const struct stargemm_pattern *A, const struct stargemm_pattern *B,
			  const double *rows, struct weighed *w)
{
	for (int64_t j = 0; j < B->nt; j++)
		w[j] = (struct weighed){ 0.0, j };
	for (int64_t e = 0; e < B->npresent; e++) {
		int64_t k = B->present[2 * e], j = B->present[2 * e + 1];

		if (listed_tile(B, "B", e))
			return -EINVAL;
		w[j].w += 2.0 * (double)B->col_sizes[j] * (double)A->col_sizes[k] * rows[k];
	}
	return 0;
}

int stargemm_balanced_columns(const struct stargemm_pattern *A,
			      const struct stargemm_pattern *B, int Q, int *col_proc)
{
	struct weighed *w;
	double *rows;
	int ret;

	stargemm__clear_error();
	if (!A || !B || !col_proc || (!A->present && A->npresent) || (!B->present && B->npresent))
		return stargemm__error(-EINVAL, "stargemm_balanced_columns: NULL argument");
	if (Q < 1)
		return stargemm__error(-EINVAL, "stargemm_balanced_columns: Q = %d; it must be "
				       ">= 1", Q);
	if (A->nt != B->mt)
		return stargemm__error(-EINVAL, "stargemm_balanced_columns: A has %" PRId64 " tile "
				       "columns, B %" PRId64 " tile rows; they must match", A->nt,
				       B->mt);
	for (int64_t k = 0; k < A->nt; k++)
		if (A->col_sizes[k] != B->row_sizes[k])
			return stargemm__error(-EINVAL, "stargemm_balanced_columns: A's tile column "
					       "%" PRId64 " has %" PRId64 " columns, B's tile row %"
					       PRId64 " rows; the tilings must match", k,
					       A->col_sizes[k], B->row_sizes[k]);
	rows = malloc((size_t)(A->nt > 0 ? A->nt : 1) * sizeof(*rows));
	w = malloc((size_t)(B->nt > 0 ? B->nt : 1) * sizeof(*w));
	ret = rows && w ? 0 : stargemm__error(-ENOMEM, "stargemm_balanced_columns: out of "
					      "memory");
	ret = ret ? ret : a_column_rows(A, rows);
	ret = ret ? ret : column_weights(A, B, rows, w);
	if (!ret) {
		qsort(w, (size_t)B->nt, sizeof(*w), by_weight);
		for (int64_t t = 0; t < B->nt; t++) {
			int64_t round = t / Q, pos = t % Q;

			col_proc[w[t].j] = (int)(round % 2 ? Q - 1 - pos : pos);
		}
	}
	free(rows);
	free(w);
	return ret;
}
