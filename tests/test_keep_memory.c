/*
 * tests/test_keep_memory.c — what stargemm_init() does to glibc's allocator
 * (src/runtime.c, keep_memory()): it prints how many of 8 allocations of 1 MiB, made
 * after stargemm_init(), glibc gave a mapping of their own (mallinfo2's hblks). Kept
 * memory (the default): none, they come from the heap; with STARGEMM_KEEP_MEMORY=0 or
 * glibc's malloc tunables set by the user, glibc's default threshold (128 KiB) maps
 * each. tests/keep_memory.sh runs it in each environment. Exit status 1 when
 * stargemm_init() fails (its message on stderr), 77 where glibc's allocator is not
 * the one in use (below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stargemm.h"

/* glibc's mallinfo2(): not under SimGrid's SMPI, whose compiler defines malloc() as a
 * macro of its own (keep_memory() is compiled out there), nor under AddressSanitizer,
 * whose allocator replaces glibc's: nothing to observe, the test is skipped. */
#if defined(__GLIBC__) && !defined(malloc) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#define OBSERVABLE 1
#endif

#ifdef OBSERVABLE
enum { NBLOCKS = 8, BLOCK = 1 << 20 };

static int observe(int *argc, char ***argv)
{
	struct stargemm_config cfg;
	void *block[NBLOCKS];
	struct mallinfo2 before, after;

	stargemm_config_init(&cfg);
	cfg.ncpus = 1;
	if (stargemm_init(&cfg, argc, argv) != 0) {
		fprintf(stderr, "test_keep_memory: %s\n", stargemm_last_error());
		return 1;
	}
	before = mallinfo2();
	for (int b = 0; b < NBLOCKS; b++) {
		block[b] = malloc(BLOCK);
		if (block[b])
			memset(block[b], 1, BLOCK);
	}
	after = mallinfo2();
	for (int b = 0; b < NBLOCKS; b++)
		free(block[b]);
	printf("mapped %zu of %d\n", after.hblks - before.hblks, NBLOCKS);
	stargemm_finalize();
	return 0;
}
#endif

int main(int argc, char **argv)
{
#ifdef OBSERVABLE
	return observe(&argc, &argv);
#else
	printf("SKIP: glibc's allocator replaced (AddressSanitizer) or wrapped (SMPI)\n");
	return 77;
#endif
}
