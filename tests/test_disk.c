/*
 * tests/test_disk.c — the disk node's backend (src/disk.c) through its StarPU
 * operations, without StarPU running: TAP output.
 *
 * Properties checked:
 *  - plugging creates no visible file (it is unlinked at once) and fails cleanly on a
 *    directory that does not exist;
 *  - allocations are disjoint ranges: data written to each reads back, at offsets
 *    inside the range, after the others were written;
 *  - the node fills up (an allocation is refused, not overcommitted) and freed space
 *    is given out again;
 *  - a full write of another size moves the object to a range of that size.
 * (ops->free) is called in parentheses: SimGrid's compiler defines free() as a macro.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "tap.h"



/* Entries of @p dir other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return d ? n : -1;
}

static void fill(unsigned char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)(seed * 31 + i * 7);
}

int main(void)
{
	const struct starpu_disk_ops *ops = &stargemm_disk_ops;
	char dir[] = "/tmp/stargemm-test-disk-XXXXXX";
	enum { NODE = 1 << 20, OBJ = 100000, NOBJ = 10 };
	void *obj[NOBJ] = { 0 }, *base, *extra;
	unsigned char *buf = malloc(OBJ), *back = malloc(OBJ);
	int all = 1, same = 1;

	if (!mkdtemp(dir) || !buf || !back) {
		printf("1..0 # SKIP no temporary directory\n");
		return 0;
	}
	tap_ok(ops->plug("/nonexistent/stargemm", NODE) == NULL,
	   "plugging in a directory that does not exist fails");
	base = ops->plug(dir, NODE);
	tap_ok(base != NULL && entries(dir) == 0, "plugged: one file, already unlinked");
	if (!base)
		return 1;
	for (int i = 0; i < NOBJ; i++)
		all &= (obj[i] = ops->alloc(base, OBJ)) != NULL;
	tap_ok(all, "10 objects of 100,000 bytes in 1 MiB");
	for (int i = 0; i < NOBJ && all; i++) {
		fill(buf, OBJ, (unsigned)i);
		ops->write(base, obj[i], buf, 0, OBJ);
	}
	for (int i = 0; i < NOBJ && all; i++) {
		fill(buf, OBJ, (unsigned)i);
		same &= ops->read(base, obj[i], back, 0, OBJ) == OBJ && !memcmp(buf, back, OBJ);
		same &= ops->read(base, obj[i], back, 1234, 5000) == 5000 &&
			!memcmp(buf + 1234, back, 5000);
	}
	tap_ok(all && same, "each object reads back what was written to it, whole and in part");
	extra = ops->alloc(base, OBJ);
	tap_ok(extra == NULL, "an 11th object is refused: the node is full");
	if (extra)
		(ops->free)(base, extra, OBJ);
	(ops->free)(base, obj[3], OBJ);
	obj[3] = ops->alloc(base, OBJ);
	tap_ok(obj[3] != NULL, "a freed range is given out again");
	fill(buf, 2000, 99);
	tap_ok(ops->full_write(base, obj[3], buf, 2000) == 0 &&
	   ops->read(base, obj[3], back, 0, 2000) == 2000 && !memcmp(buf, back, 2000),
	   "a full write of another size moves the object");
	fill(buf, OBJ, 5);
	tap_ok(ops->read(base, obj[5], back, 0, OBJ) == OBJ && !memcmp(buf, back, OBJ),
	   "the other objects are untouched");
	(ops->free)(base, obj[3], 2000);
	for (int i = 0; i < NOBJ; i++)
		if (i != 3 && obj[i])
			(ops->free)(base, obj[i], OBJ);
	extra = ops->alloc(base, NODE);
	tap_ok(extra != NULL, "everything freed: one object of the whole node fits");
	if (extra)
		(ops->free)(base, extra, NODE);
	ops->unplug(base);
	tap_ok(entries(dir) == 0 && rmdir(dir) == 0, "unplugged: nothing left in the directory");
	free(buf);
	free(back);
	return tap_done();
}
