/*
 * disk.h — stargemm's backend for StarPU's disk node (src/disk.c). Runtime-services
 * floor (doc/design.md, "Layers").
 */
#ifndef STARGEMM_DISK_H
#define STARGEMM_DISK_H

#include <starpu.h>

/* The disk node's backend (src/disk.c): one file, its space carved into ranges. */
extern struct starpu_disk_ops stargemm_disk_ops;

#endif
