/*
 * storage.h — what a RAM budget and its disk node can hold (src/storage.c).
 * Descriptor floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_STORAGE_H
#define STARGEMM_STORAGE_H

#include <stdint.h>

/* The managed storage (storage.c): a RAM budget, and the disk node behind it, holds
 * every tile of this rank's live matrices, or StarPU 1.3 waits for room forever.
 * reserve() counts a matrix's own tiles (-ENOMEM with the numbers when they do not
 * fit), release() gives them back; both count nothing without managed storage. */
void stargemm__storage_reset(void);
int stargemm__storage_reserve(int64_t bytes, const char *fn);
void stargemm__storage_release(int64_t bytes);

#endif
