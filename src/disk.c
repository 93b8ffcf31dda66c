/*
 * disk.c — stargemm's StarPU disk backend: the disk node is one file, created in the
 * given directory and unlinked at once, as large as the node, its space reserved on
 * the file system at plugging; each StarPU allocation is a range of it (src/arena.c),
 * read and written with pread and pwrite.
 *
 * Why: StarPU 1.3's own backend (unistd) makes a file per allocation, keeps at most 64
 * of them open (every access to another opens and closes its file: src/core/disk_ops/
 * unistd/disk_unistd_global.c, MAX_OPEN_FILES) and goes through glibc's POSIX AIO,
 * which starts helper threads and signals each completion. Out of core with small
 * tiles, hundreds of packs live on the disk node: the opens, thread creations and
 * signals then outnumbered the reads and writes, and the workers computed a small part
 * of the time (doc/design.md, Decisions, "One file through stargemm's own backend").
 * Here an access is one system call on a descriptor that stays open.
 *
 * The space is reserved (fallocate) so that a node the file system cannot hold is
 * refused when stargemm_init() plugs it, not found full by a write mid-product, which
 * could only stop the program; a file system that cannot reserve ahead (fallocate
 * unsupported) keeps the sparse file.
 *
 * Mapping the file and copying instead of pread and pwrite was measured and not kept:
 * as fast on the dense out-of-core product, slower with small tiles on one core (the
 * write faults of the mapping), though a copy alone was faster than pwrite
 * (doc/design.md, Decisions, "Not: mapping the node's file").
 *
 * Transfers are synchronous (no async_* operations: StarPU then calls read and write
 * on the worker that drives the node). The bandwidth and latency are measured at
 * plugging, as StarPU's backends do, and given to StarPU's bus model.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "internal.h"

/* StarPU's record of a disk node's measured bandwidths (bytes per µs) and latencies
 * (µs), as its own backends give them; exported by libstarpu 1.3, not in its headers. */
void _starpu_save_bandwidth_and_latency_disk(double bandwidth_write, double bandwidth_read,
					     double latency_write, double latency_read,
					     unsigned node, const char *name);

#define DISK_ALIGN 64                   /* a cache line: tiles of a few elements waste little */
#define PAGE_BYTES 4096                 /* the latency probe's transfer */
#define PROBE_BYTES (4 << 20)           /* the bandwidth probe's transfer */
#define PROBE_ROUNDS 4

struct disk {
	int fd;
	char *dir;
	pthread_mutex_t lock;           /* the arena (allocations come from any worker) */
	struct stargemm__arena arena;
};

/* One allocation: a range of the file. */
struct disk_obj {
	size_t off, size;
};

/* The node's space on the file system, taken now: 0, or -1 when it does not fit (errno
 * ENOSPC, EFBIG, ...); a file system that cannot reserve ahead is not an error. */
static int reserve(int fd, starpu_ssize_t size)
{
	if (fallocate(fd, 0, 0, (off_t)size) == 0 || errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	return -1;
}

static void *disk_plug(void *parameter, starpu_ssize_t size)
{
	const char *dir = parameter;
	struct disk *d = calloc(1, sizeof(*d));
	char path[PATH_MAX];

	if (!d || size <= 0 || snprintf(path, sizeof(path), "%s/stargemm-disk-XXXXXX", dir) >=
					       (int)sizeof(path)) {
		free(d);
		return NULL;
	}
	d->fd = mkstemp(path);
	if (d->fd < 0) {
		free(d);
		return NULL;
	}
	unlink(path);   /* the file goes with its descriptor, whatever ends the process */
	if (ftruncate(d->fd, (off_t)size) != 0 || reserve(d->fd, size) != 0 ||
	    !(d->dir = strdup(dir)) ||
	    stargemm__arena_init(&d->arena, (size_t)size, DISK_ALIGN) != 0) {
		close(d->fd);
		free(d->dir);
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	return d;
}

static void disk_unplug(void *base)
{
	struct disk *d = base;

	if (!d)
		return;
	close(d->fd);
	stargemm__arena_destroy(&d->arena);
	pthread_mutex_destroy(&d->lock);
	free(d->dir);
	free(d);
}

static void *disk_alloc(void *base, size_t size)
{
	struct disk *d = base;
	struct disk_obj *o = malloc(sizeof(*o));
	int ret;

	if (!o)
		return NULL;
	o->size = size;
	pthread_mutex_lock(&d->lock);
	ret = stargemm__arena_alloc(&d->arena, size, &o->off);
	pthread_mutex_unlock(&d->lock);
	if (ret) {   /* the node is full: StarPU evicts or waits */
		free(o);
		return NULL;
	}
	return o;
}

static void disk_free(void *base, void *obj, size_t size)
{
	struct disk *d = base;
	struct disk_obj *o = obj;

	pthread_mutex_lock(&d->lock);
	stargemm__arena_free(&d->arena, o->off, o->size);
	pthread_mutex_unlock(&d->lock);
	free(o);
}

/* Existing data on the disk (starpu_disk_open()) is not a notion of this backend. */
static void *disk_open(void *base, void *pos, size_t size)
{
	return NULL;
}

static void disk_close(void *base, void *obj, size_t size)
{
}

/* Whole transfers: pread and pwrite may stop short (signals, large sizes). */
static int transfer(int fd, void *buf, off_t at, size_t size, int writing)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = writing ? pwrite(fd, (char *)buf + done, size - done, at + (off_t)done)
				    : pread(fd, (char *)buf + done, size - done, at + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

/* A failed transfer leaves StarPU with wrong data and no way to say so: stop, as its
 * own backends do on a failed read or write. */
static void transfer_or_abort(const struct disk *d, const struct disk_obj *o, void *buf,
			      off_t offset, size_t size, int writing)
{
	if (offset < 0 || (size_t)offset + size > o->size ||
	    transfer(d->fd, buf, (off_t)o->off + offset, size, writing) != 0) {
		fprintf(stderr, "stargemm: disk node in %s: %s of %zu bytes at %lld failed: %s\n",
			d->dir, writing ? "write" : "read", size, (long long)offset,
			strerror(errno));
		abort();
	}
}

static int disk_read(void *base, void *obj, void *buf, off_t offset, size_t size)
{
	transfer_or_abort(base, obj, buf, offset, size, 0);
	return (int)size;
}

static int disk_write(void *base, void *obj, const void *buf, off_t offset, size_t size)
{
	transfer_or_abort(base, obj, (void *)buf, offset, size, 1);
	return 0;
}

static int disk_full_read(void *base, void *obj, void **ptr, size_t *size, unsigned dst_node)
{
	struct disk_obj *o = obj;

	*size = o->size;
	*ptr = (void *)starpu_malloc_on_node_flags(dst_node, o->size, 0);
	if (!*ptr)
		return -ENOMEM;
	return disk_read(base, obj, *ptr, 0, o->size);
}

/* Data of another size than allocated (StarPU's variable-size interfaces): the object
 * moves to a range of that size. */
static int disk_full_write(void *base, void *obj, void *ptr, size_t size)
{
	struct disk *d = base;
	struct disk_obj *o = obj;

	if (size != o->size) {
		size_t off;
		int ret;

		/* the old range first: its data is rewritten whole anyway */
		pthread_mutex_lock(&d->lock);
		stargemm__arena_free(&d->arena, o->off, o->size);
		ret = stargemm__arena_alloc(&d->arena, size, &off);
		if (ret) {   /* the old size fits again: it was just freed */
			stargemm__arena_alloc(&d->arena, o->size, &o->off);
		} else {
			o->off = off;
			o->size = size;
		}
		pthread_mutex_unlock(&d->lock);
		if (ret)
			return -ENOSPC;
	}
	return disk_write(base, obj, ptr, 0, size);
}

static double now_us(void)
{
	return starpu_timing_now();
}

/* Writes (each made durable, as StarPU's backends measure) and reads of PROBE_BYTES,
 * then of one page, on a range of the file; 1 when measured. */
static int disk_bandwidth(unsigned node, void *base)
{
	struct disk *d = base;
	struct disk_obj *o = d ? disk_alloc(d, PROBE_BYTES) : NULL;
	char *buf = o ? calloc(1, PROBE_BYTES) : NULL;
	double t0, write_us, read_us, lat_us;

	if (!buf) {
		if (o)
			disk_free(d, o, PROBE_BYTES);
		return 0;
	}
	t0 = now_us();
	for (int r = 0; r < PROBE_ROUNDS; r++) {
		disk_write(d, o, buf, 0, PROBE_BYTES);
		fdatasync(d->fd);
	}
	write_us = (now_us() - t0) / PROBE_ROUNDS;
	t0 = now_us();
	for (int r = 0; r < PROBE_ROUNDS; r++)
		disk_read(d, o, buf, 0, PROBE_BYTES);
	read_us = (now_us() - t0) / PROBE_ROUNDS;
	t0 = now_us();
	for (int r = 0; r < PROBE_ROUNDS; r++) {
		disk_write(d, o, buf, (off_t)r * PAGE_BYTES, PAGE_BYTES);
		fdatasync(d->fd);
	}
	lat_us = (now_us() - t0) / PROBE_ROUNDS;
	free(buf);
	disk_free(d, o, PROBE_BYTES);
	_starpu_save_bandwidth_and_latency_disk(PROBE_BYTES / (write_us > 0 ? write_us : 1),
						PROBE_BYTES / (read_us > 0 ? read_us : 1), lat_us,
						lat_us, node, d->dir);
	return 1;
}

struct starpu_disk_ops stargemm_disk_ops = {
	.plug = disk_plug,
	.unplug = disk_unplug,
	.bandwidth = disk_bandwidth,
	.alloc = disk_alloc,
	.free = disk_free,
	.open = disk_open,
	.close = disk_close,
	.read = disk_read,
	.write = disk_write,
	.full_read = disk_full_read,
	.full_write = disk_full_write,
};
