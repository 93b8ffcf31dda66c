/*
 * tests/test_init_failure.c — a stargemm_init() that fails once StarPU starts (no
 * worker: ncpus = ncuda = 0, set explicitly so that STARPU_NCPU does not override it)
 * gives a clear error, and then either a second
 * stargemm_init() succeeds and the library works ("retry"), or stargemm_finalize()
 * ends the MPI the failed call started ("give-up": MPI is finalised at exit).
 *
 * Usage: test_init_failure retry|give-up   (under mpiexec)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "stargemm.h"

int main(int argc, char **argv)
{
	struct stargemm_config cfg;
	struct stargemm_matrix *A = NULL;
	int retry = argc > 1 && !strcmp(argv[1], "retry"), ret, finalized = 0;

	stargemm_config_init(&cfg);
	cfg.ncpus = 0;
	cfg.ncuda = 0;
	ret = stargemm_init(&cfg, &argc, &argv);
	if (ret != -ENODEV || !strstr(stargemm_last_error(), "no worker")) {
		printf("not ok: init without workers returned %d (%s)\n", ret,
		       stargemm_last_error());
		return 1;
	}
	printf("ok: init without workers refused: %s\n", stargemm_last_error());
	if (!retry) {
		ret = stargemm_finalize();
		MPI_Finalized(&finalized);
		printf("%s: finalize after the failed init returned %d, MPI finalised: %d\n",
		       ret == 0 && finalized ? "ok" : "not ok", ret, finalized);
		return ret == 0 && finalized ? 0 : 1;
	}
	cfg.ncpus = 1;
	ret = stargemm_init(&cfg, &argc, &argv);
	ret = ret ? ret : stargemm_matrix_create(&A, 300, 200, 64, 64, stargemm_nranks(), 1);
	ret = ret ? ret : stargemm_matrix_fill_random(A, 7);
	printf("%s: init again and use the library: %d %s\n", ret ? "not ok" : "ok", ret,
	       ret ? stargemm_last_error() : "");
	stargemm_matrix_destroy(A);
	if (stargemm_finalize() != 0 || ret)
		return 1;
	MPI_Finalized(&finalized);
	printf("%s: MPI finalised by stargemm_finalize\n", finalized ? "ok" : "not ok");
	return finalized ? 0 : 1;
}
