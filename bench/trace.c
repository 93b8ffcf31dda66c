/*
 * bench/trace.c — FxT tracing for the benchmarks (--trace DIR): StarPU writes one FxT
 * file per rank into DIR, and rank 0 merges them into DIR/paje.trace for ViTE once
 * StarPU has shut down (doc/tracing.md).
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

/* Merge the per-rank FxT files of DIR into DIR/paje.trace (rank 0, after shutdown).
 * starpu_fxt_tool writes paje.trace into its working directory (its -o option
 * crashes in 1.3.10), hence the cd. */
int bench_trace_merge(const char *dir, int nranks)
{
#ifdef STARPU_FXT_TOOL_PATH
	char cmd[8192];
	const char *user = getenv("USER") ? getenv("USER") : ""; /* as StarPU names them */
	size_t len;

	len = (size_t)snprintf(cmd, sizeof(cmd), "cd '%s' && '%s'", dir,
			       STARPU_FXT_TOOL_PATH);
	for (int r = 0; r < nranks && len < sizeof(cmd); r++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " -i prof_file_%s_%d", user,
					r);
	len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " >fxt_tool.log 2>&1");
	if (len >= sizeof(cmd) || system(cmd) != 0) {
		fprintf(stderr, "trace: starpu_fxt_tool failed, see %s/fxt_tool.log\n", dir);
		return 1;
	}
	fprintf(stderr, "trace: %s/paje.trace written (open it with: vite %s/paje.trace)\n",
		dir, dir);
	return 0;
#else
	fprintf(stderr, "trace: StarPU was built without FxT; no trace written\n");
	return 1;
#endif
}

int bench_trace_setup(const char *dir)
{
	static char prefix[4096];

	if (!dir)   /* stargemm_init() leaves tracing off unless STARPU_FXT_TRACE says */
		return 0;
	snprintf(prefix, sizeof(prefix), "%s/", dir);
	setenv("STARPU_FXT_PREFIX", prefix, 1);
	setenv("STARPU_FXT_TRACE", "1", 1);
	return 0;
}

