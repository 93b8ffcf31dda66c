/*
 * norms.c — per-tile Frobenius norms and norm-based filtering (Schütt et al., DBCSR).
 *
 * The norm of every present tile is computed by a task on the tile's owner
 * (codelets/norm.c); the owners then share them (collective.c), so that every rank
 * holds the norms of the whole matrix. The inspector needs them on every rank: all
 * ranks build the same work list, and a product filtered on one rank must be filtered
 * on all. The array costs 8 bytes per tile position (mt * nt), as the pattern and the
 * handle table already do.
 *
 * Filtering a matrix drops its tiles whose norm is below eps: their handles and storage
 * go, and the pattern loses them on every rank.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A packed matrix: one task per pack this rank owns (codelets/pack.c). */
static int submit_pack_norms(const struct stargemm_matrix *A, double *norms)
{
	const struct stargemm__packing *pk = A->pack;

	for (int64_t J = 0; J < pk->gnt; J++)
		for (int64_t I = 0; I < pk->gmt; I++) {
			starpu_data_handle_t h = A->packs[I + J * pk->gmt];
			int ret;

			if (!h || stargemm__pack_owner(A, I, J) != stargemm_rank())
				continue;
			ret = starpu_task_insert(&stargemm_pack_norm_cl, STARPU_VALUE, &A, sizeof(A),
						 STARPU_VALUE, &I, sizeof(I), STARPU_VALUE, &J,
						 sizeof(J), STARPU_VALUE, &norms, sizeof(norms),
						 STARPU_R, h, 0);
			if (ret)
				return stargemm__error(-EIO, "stargemm_matrix_norms: task submission "
						       "failed for pack (%" PRId64 ", %" PRId64 ") (%d)",
						       I, J, ret);
		}
	return 0;
}

/* One norm task per present tile this rank owns; results land in norms[idx]. */
static int submit_norms(const struct stargemm_matrix *A, double *norms)
{
	int me = stargemm_rank();
	char type = A->type->letter;

	if (A->pack)
		return submit_pack_norms(A, norms);
	for (int64_t j = 0; j < A->nt; j++)
		for (int64_t i = 0; i < A->mt; i++) {
			double *out = &norms[stargemm__tile_index(A, i, j)];
			int ret;

			if (!stargemm__present(A, i, j) || stargemm_matrix_owner(A, i, j) != me)
				continue;
			if (A->gen && (ret = stargemm__generate_tile(A, i, j, 0, -1)))
				return ret;
			ret = starpu_task_insert(&stargemm_norm_cl, STARPU_VALUE, &type, sizeof(type),
						 STARPU_VALUE, &out, sizeof(out),
						 STARPU_R, stargemm__tile(A, i, j), 0);
			if (ret)
				return stargemm__error(-EIO, "stargemm_matrix_norms: task submission "
						       "failed for tile (%" PRId64 ", %" PRId64 ") (%d)",
						       i, j, ret);
		}
	return 0;
}

int stargemm_matrix_norms(const struct stargemm_matrix *A, double *norms)
{
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__check_matrix(A, "A")))
		return ret;
	/* Agreed, here and after the tasks: the norms are shared by every rank, which
	 * would wait for one that gave up. */
	if ((ret = stargemm__agree(norms ? 0 : stargemm__error(-EINVAL, "stargemm_matrix_norms: "
							       "norms is NULL"))))
		return ret;
	memset(norms, 0, (size_t)(A->mt * A->nt) * sizeof(*norms));
	stargemm__zero_if_unwritten(A);
	ret = submit_norms(A, norms);
	/* Wait even after a failed submission: submitted tasks write into norms. */
	ret = stargemm__wait_after(ret);
	stargemm__generated_let_go_all(A);   /* made for their norms only */
	if ((ret = stargemm__agree(ret)))
		return ret;
	return stargemm__share_owned_f64(norms, A->mt * A->nt);
}

int stargemm_matrix_filter(struct stargemm_matrix *A, double eps, int64_t *removed)
{
	double *norms;
	int64_t count = 0;
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__check_matrix(A, "A")))
		return ret;
	if (!(eps >= 0.0) || isinf(eps))
		return stargemm__error(-EINVAL, "stargemm_matrix_filter: eps must be finite and "
				       ">= 0, got %g", eps);
	if (removed)
		*removed = 0;
	if (eps == 0.0)
		return 0;
	norms = malloc((size_t)(A->mt * A->nt > 0 ? A->mt * A->nt : 1) * sizeof(*norms));
	if ((ret = stargemm__agree(norms ? 0 : stargemm__error(
			-ENOMEM, "stargemm_matrix_filter: out of memory for %" PRId64
			" tile norms", A->mt * A->nt)))) {
		free(norms);
		return ret;
	}
	if ((ret = stargemm_matrix_norms(A, norms))) {
		free(norms);
		return ret;
	}
	for (int64_t j = 0; j < A->nt && !ret; j++)
		for (int64_t i = 0; i < A->mt && !ret; i++)
			if (stargemm__present(A, i, j) && norms[stargemm__tile_index(A, i, j)] < eps) {
				ret = stargemm__matrix_drop_tile(A, i, j);
				count++;
			}
	free(norms);
	if (removed)
		*removed = count;
	return ret;
}
