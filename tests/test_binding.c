/*
 * tests/test_binding.c — the cores this rank's CPU workers may run on, as the kernel
 * sees them: one line per worker thread ("CPU n" in /proc/self/task/<tid>/comm),
 * "binding rank R thread T cpus LIST" with its Cpus_allowed_list. Used by
 * tests/binding_2ranks.sh, which runs two ranks bound to one core each and fails if
 * their workers share a core (StarPU 1.3 numbers cores from 0 in every process unless
 * told to follow the process's affinity mask; stargemm_init() tells it).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "stargemm.h"

/* Print the allowed cores of thread @p tid if it is a StarPU CPU worker. */
static void report_thread(const char *tid)
{
	char path[128], line[256], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	if (!(f = fopen(path, "r")))
		return;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	if (strncmp(comm, "CPU ", 4) != 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	if (!(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18))
			printf("binding rank %d thread %s cpus %s", stargemm_rank(), tid,
			       line + strspn(line + 18, " \t") + 18);
	fclose(f);
}

int main(int argc, char **argv)
{
	struct dirent *e;
	DIR *d;

	if (stargemm_init(NULL, &argc, &argv)) {
		fprintf(stderr, "stargemm_init: %s\n", stargemm_last_error());
		return 1;
	}
	if ((d = opendir("/proc/self/task"))) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				report_thread(e->d_name);
		closedir(d);
	}
	fflush(stdout);
	stargemm_finalize();
	return 0;
}
