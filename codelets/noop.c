/*
 * codelets/noop.c — a task with no computation (STARPU_NOWHERE): StarPU neither
 * schedules it nor fetches its data, and only orders it with the other accesses to its
 * tiles. After one of a product's tasks could not be inserted on a rank, the executor
 * inserts that rank's remaining tasks of the product as these, with the same tiles in
 * the same modes (src/execute.c): StarPU-MPI then posts the sends and
 * receives that the other ranks' tasks expect, and no rank waits for a message that
 * never comes.
 *
 * The data and their modes are given at insertion (STARPU_VARIABLE_NBUFFERS).
 */
#include "../src/internal.h"

struct starpu_codelet stargemm_noop_cl = {
	.name = "skipped",
	.where = STARPU_NOWHERE,
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
};
