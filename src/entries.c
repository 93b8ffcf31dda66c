/*
 * entries.c — the public products of src/stargemm.h on matrices of any kind (dense or
 * block-sparse, in core): stargemm_pdgemm() and stargemm_gemm(), and their _submit
 * forms that return once the tasks are inserted. Each checks its problem
 * (src/problem.c) and hands it to the one executor (src/product.c).
 */
#include "internal.h"

int stargemm_pdgemm_submit(stargemm_trans transa, stargemm_trans transb, double alpha,
			   const struct stargemm_matrix *A,
			   const struct stargemm_matrix *B, double beta,
			   struct stargemm_matrix *C)
{
	struct stargemm__gemm p = { .ta = transa, .tb = transb, .alpha = alpha, .beta = beta,
				    .A = A, .B = B, .C = C, .want = 'd' };
	int ret;

	stargemm__clear_error();
	if ((ret = stargemm__gemm_agree(&p, stargemm__gemm_check(&p), 0)))
		return ret;
	return stargemm__run_product(&p, NULL, NULL, NULL);
}

int stargemm_pdgemm(stargemm_trans transa, stargemm_trans transb, double alpha,
		    const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		    double beta, struct stargemm_matrix *C)
{
	int ret = stargemm_pdgemm_submit(transa, transb, alpha, A, B, beta, C);

	if (ret)
		return ret;
	return stargemm_wait();
}

int stargemm_gemm_submit(stargemm_trans transa, stargemm_trans transb, const void *alpha,
			 const struct stargemm_matrix *A, const struct stargemm_matrix *B,
			 const void *beta, struct stargemm_matrix *C)
{
	struct stargemm__gemm p = { .ta = transa, .tb = transb, .A = A, .B = B, .C = C,
				    .fn = "stargemm_gemm" };
	int ret;

	stargemm__clear_error();
	if (!(ret = stargemm__gemm_check(&p)))
		ret = stargemm__gemm_scalars(&p, alpha, beta);
	if ((ret = stargemm__gemm_agree(&p, ret, 0)))
		return ret;
	return stargemm__run_product(&p, NULL, NULL, NULL);
}

int stargemm_gemm(stargemm_trans transa, stargemm_trans transb, const void *alpha,
		  const struct stargemm_matrix *A, const struct stargemm_matrix *B,
		  const void *beta, struct stargemm_matrix *C)
{
	int ret = stargemm_gemm_submit(transa, transb, alpha, A, B, beta, C);

	if (ret)
		return ret;
	return stargemm_wait();
}
