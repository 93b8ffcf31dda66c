/*
 * runtime.c — start and stop MPI, StarPU and StarPU-MPI; process-wide state.
 *
 * stargemm sets StarPU's CPU worker count itself (unless the user or STARPU_NCPU
 * does): StarPU-MPI otherwise reserves a whole core for its progress thread, which in
 * stargemm sleeps most of the time because tile transfers are posted early and
 * complete quickly; on small nodes that reservation would cost half the machine. It
 * keeps StarPU's other reservation, a core per CUDA worker for the thread that drives
 * the GPU: a busy CPU worker on that core would delay the GPU's next task.
 */
#define _GNU_SOURCE
#include "config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* glibc's mallopt(), not under SimGrid's SMPI, whose compiler defines malloc() as a
 * macro of its own (keep_memory() then does nothing). */
#if defined(__GLIBC__) && !defined(malloc)
#include <malloc.h>
#endif

#include "../codelets/calibrate.h"
#include "internal.h"
#include "worklist.h"

#if defined(STARPU_USE_CUDA) && !defined(STARPU_SIMGRID)
#include <cuda_runtime.h>
#endif

#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
void openblas_set_num_threads(int nthreads);
#endif

static struct {
	int finalize_mpi;   /* MPI was initialised by us */
	int quiet_stats;      /* STARPU_COMM_STATS was turned on for the counters only */
	int exported_stats;   /* ... by this process's last stargemm_init() */
} rt;

/* starpu_mpi_shutdown(), without the [starpu_comm_stats] lines StarPU-MPI 1.3 prints
 * on stderr whenever STARPU_COMM_STATS is on, when stargemm turned it on for its own
 * counters (stargemm_transfers_get()) and the user did not ask for them: during the
 * shutdown stderr goes to a temporary file, whose other lines are then passed on. */
static void mpi_shutdown(void)
{
	char line[1024];
	FILE *tmp = rt.quiet_stats ? tmpfile() : NULL;
	int saved = -1;

	fflush(stderr);
	if (tmp && (saved = dup(STDERR_FILENO)) >= 0 &&
	    dup2(fileno(tmp), STDERR_FILENO) < 0) {
		close(saved);
		saved = -1;
	}
	starpu_mpi_shutdown();
	if (saved < 0) {
		if (tmp)
			fclose(tmp);
		return;
	}
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	while (fgets(line, sizeof(line), tmp))
		if (strncmp(line, "[starpu_comm_stats]", 19) != 0 && strcmp(line, "\n") != 0)
			fputs(line, stderr);
	fclose(tmp);
}

void stargemm_config_init(struct stargemm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ncpus = -1;
	cfg->ncuda = -1;
	cfg->sched_policy = NULL;
	cfg->comm = MPI_COMM_NULL;
	cfg->count_transfers = 1;
	cfg->ram_limit_mib = 0;
	cfg->disk_dir = NULL;
	cfg->disk_mib = 0;
}

/* The disk node's directory must exist and be writable: StarPU accepts any path and
 * fails only when it first writes a tile there. Checked before MPI starts, so that
 * this error leaves nothing initialised. */
static int check_disk_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return stargemm__error(-EINVAL, "stargemm_init: disk_dir '%s' is not an existing "
				       "directory", dir);
	if (access(dir, W_OK | X_OK) != 0)
		return stargemm__error(-EACCES, "stargemm_init: disk_dir '%s' is not writable",
				       dir);
	return 0;
}

/* Whether @p name is the name of a scheduling policy: stargemm's, or one of StarPU's
 * (its table is static: readable before StarPU starts). */
static int known_policy(const char *name)
{
	struct starpu_sched_policy **p = starpu_sched_get_predefined_policies();

	if (!strcmp(name, stargemm_ooc_policy.policy_name))
		return 1;
	for (; p && *p; p++)
		if ((*p)->policy_name && !strcmp(name, (*p)->policy_name))
			return 1;
	return 0;
}

/* Every field of the configuration in its range, and the scheduling policy (given, or
 * in STARPU_SCHED) one that exists: StarPU 1.3 would take an unknown name with a
 * warning and run another policy. */
static int check_config(const struct stargemm_config *cfg)
{
	const char *policy = cfg->sched_policy ? cfg->sched_policy
					       : stargemm__setting_text(STARGEMM__STARPU_SCHED);

	if (cfg->ncpus < -1 || cfg->ncuda < -1)
		return stargemm__error(-EINVAL, "stargemm_init: ncpus and ncuda must be >= -1 (-1 "
				       "= the default), got %d and %d", cfg->ncpus, cfg->ncuda);
	if (policy && !known_policy(policy))
		return stargemm__error(-EINVAL, "stargemm_init: unknown scheduling policy '%s'%s "
				       "(stargemm-ooc, or one of StarPU's: eager, dmda, ...)", policy,
				       cfg->sched_policy ? "" : " in STARPU_SCHED");
	if (cfg->count_transfers != 0 && cfg->count_transfers != 1)
		return stargemm__error(-EINVAL, "stargemm_init: count_transfers must be 0 or 1, got "
				       "%d", cfg->count_transfers);
	if (cfg->disk_mib < 0)
		return stargemm__error(-EINVAL, "stargemm_init: disk_mib must be >= 0, got %lld",
				       (long long)cfg->disk_mib);
	if (cfg->ram_limit_mib < 0)
		return stargemm__error(-EINVAL, "stargemm_init: ram_limit_mib must be >= 0, got %lld",
				       (long long)cfg->ram_limit_mib);
	if (cfg->disk_dir && cfg->disk_mib < 16)
		return stargemm__error(-EINVAL, "stargemm_init: the disk node needs disk_mib >= 16 "
				       "(StarPU's minimum), got %lld", (long long)cfg->disk_mib);
	return cfg->disk_dir ? check_disk_dir(cfg->disk_dir) : 0;
}

/* The settings read once StarPU runs, checked before it starts: a bad one then costs
 * no start and stop of StarPU, whose MPI layer (1.3) stops with a barrier on
 * MPI_COMM_WORLD that processes outside stargemm's communicator would not join
 * (libstargemm-scalapack starts on a grid of some of the processes). */
static int check_settings(const struct stargemm_config *cfg)
{
	double x;
	int ret;

	if ((ret = stargemm__fault_setup(-1)) ||   /* parsed; armed on no rank */
	    (ret = stargemm__setting(STARGEMM__DEVICE_POOL, &x)) ||
	    (ret = stargemm__setting(STARGEMM__HOST_POOL, &x)) ||
	    (ret = stargemm__setting(STARGEMM__STARPU_DISABLE_PINNING, &x)) ||
	    (ret = stargemm__setting(STARGEMM__STARPU_SIMGRID_CUDA_MALLOC_COST, &x)))
		return ret;
	return cfg->disk_dir ? stargemm__setting(STARGEMM__DISK_ONE_FILE, &x) : 0;
}

/* The processes of @p comm on this machine (MPI_COMM_TYPE_SHARED), for the memory's
 * shares and the order of StarPU's start; MPI_COMM_NULL in SimGrid mode (one process
 * simulates every rank) or when MPI cannot split. Collective over @p comm. */
static MPI_Comm node_comm(MPI_Comm comm)
{
	MPI_Comm node = MPI_COMM_NULL;

#ifndef STARPU_SIMGRID
	if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
	    MPI_SUCCESS)
		node = MPI_COMM_NULL;
#else
	(void)comm;
#endif
	return node;
}

/* In how many shares the machine's memory is cut for keep_host_buffers(): one per
 * process of @p node (node_comm()). In SimGrid mode every simulated rank's buffers are
 * real memory of the one simulating process: half of the machine is cut among them
 * (SMPI_GLOBAL_SIZE ranks), the other half left to the simulator. StarPU keeps freed
 * buffers for tiles of the same shape, and block-sparse tiles of 512-2048 rarely share
 * one, so without a share each simulated rank kept every tile it had received: a 4 x 4
 * grid's block-sparse product at 24,000^3 held 7.5 GiB, and runs at 40,000 passed
 * 15 GiB (doc/design.md, "With GPUs, host buffers StarPU allocates are kept"). */
static long memory_shares(MPI_Comm node)
{
#ifdef STARPU_SIMGRID
	const char *size = stargemm__setting_text(STARGEMM__SMPI_GLOBAL_SIZE);

	(void)node;
	return size && atol(size) > 0 ? 2 * atol(size) : 1;
#else
	int n = 1;

	if (node != MPI_COMM_NULL)
		MPI_Comm_size(node, &n);
	return n > 0 ? n : 1;
#endif
}

/* Host buffers that StarPU allocates itself — one for every tile a rank receives over
 * MPI, and for the tiles of the matrices it stores (stargemm_bsgemm()'s C) — are
 * pinned when there are CUDA workers. With the pinned host pool (src/hostpool.c, the
 * default) they are blocks of its slabs, pinned once: StarPU frees a buffer as soon
 * as its tile lets go of it, and the block goes back to the pool for the next tile,
 * of any shape. With STARGEMM_HOST_POOL=0 StarPU pins each buffer itself, and frees
 * it at once unless host memory has a budget: then it keeps the buffer and gives it
 * to the next tile of the same shape (datawizard/memalloc.c). Pinning costs time:
 * StarPU's simulator charges 0.65 ms per MiB (its estimate of cudaHostAlloc), 5.2 ms
 * per tile of 8 MiB, on a CPU worker before the receive is posted, so received tiles
 * landed one every 5.2 ms instead of one every 0.75 ms at the simulated link's rate,
 * and a 2 x 2 grid took 0.567 s instead of 0.232 s (doc/out-of-core.md, "Host
 * buffers of received tiles are pinned once"). So without the pool, with GPUs and
 * no budget of the user's (ram_limit_mib, STARPU_LIMIT_CPU_MEM), the budget is this
 * rank's share of the machine's memory (memory_shares()): it bounds nothing that would
 * otherwise fit, and freed buffers stay pinned for reuse — evicted by StarPU when the
 * budget needs the room. The matrices' own storage (src/matrix.c) is not in StarPU's
 * count. */
static void keep_host_buffers(long shares)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	char buf[32];

	if (pages <= 0 || page <= 0)
		return;
	snprintf(buf, sizeof(buf), "%lld",
		 (long long)pages * page / (1024 * 1024) / shares);
	setenv("STARPU_LIMIT_CPU_MEM", buf, 0);
}

/* Environment StarPU reads at start-up; values the user exported win (the RAM budget
 * is set apart, by set_ram_budget()). */
static void export_settings(const struct stargemm_config *cfg)
{
	/* Set by an earlier stargemm_init() of this process, not by the user: it goes. */
	if (rt.exported_stats)
		unsetenv("STARPU_COMM_STATS");
	rt.quiet_stats = cfg->count_transfers &&
			 !stargemm__setting_text(STARGEMM__STARPU_COMM_STATS);
	rt.exported_stats = rt.quiet_stats;
	if (cfg->count_transfers)
		setenv("STARPU_COMM_STATS", "1", 0);
	/* No early write-back of modified tiles to keep a share of each device's buffers
	 * clean (StarPU's default is 5-10%): here the modified tiles are the C tiles of
	 * the current block, rewritten by every chunk and written back once, when their
	 * block ends; copying them earlier only takes bandwidth from the loads (fewer
	 * GPU->host copies and a higher rate in simulation: doc/out-of-core.md). */
	setenv("STARPU_MINIMUM_CLEAN_BUFFERS", "0", 0);
	setenv("STARPU_TARGET_CLEAN_BUFFERS", "0", 0);
	/* Up to 4 GEMMs queued on each GPU's stream (StarPU 1.3's maximum) instead of its
	 * default 2: when a task waits for its inputs, the kernels already queued keep
	 * the GPU busy (measured: doc/design.md, Decisions, "CUDA pipeline of 4"). */
	setenv("STARPU_CUDA_PIPELINE", "4", 0);
	/* Workers on the cores of this process's affinity mask: StarPU 1.3 otherwise
	 * numbers cores from 0 in every process, so that two ranks bound to one core each
	 * (mpiexec -bind-to core) both put their worker on core 0 and run at half speed
	 * (tests/binding_2ranks.sh). An unbound process's mask is the whole machine. */
	setenv("STARPU_WORKERS_GETBIND", "1", 0);
	/* No FxT trace unless asked for (STARPU_FXT_TRACE=1): StarPU 1.3 built with FxT
	 * traces every run by default, into a file per rank in /tmp (doc/tracing.md). */
	setenv("STARPU_FXT_TRACE", "0", 0);
}

static int register_disk(const struct stargemm_config *cfg)
{
	double one_file;
	int node, ret;

	if (!cfg->disk_dir)
		return 0;
	/* stargemm's backend (src/disk.c), or StarPU's unistd with STARGEMM_DISK_ONE_FILE=0 */
	if ((ret = stargemm__setting(STARGEMM__DISK_ONE_FILE, &one_file)))
		return ret;
	node = starpu_disk_register(one_file != 0.0 ? &stargemm_disk_ops : &starpu_disk_unistd_ops,
				    (void *)cfg->disk_dir,
				    (starpu_ssize_t)cfg->disk_mib * 1024 * 1024);
	if (node < 0)
		return stargemm__error(-EIO, "stargemm_init: cannot use '%s' as StarPU disk node "
				       "of %lld MiB (error %d); the directory must exist, be "
				       "writable and have that much free space", cfg->disk_dir,
				       (long long)cfg->disk_mib, node);
	return 0;
}

static int cores_in_affinity_mask(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 1;
	return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
}

/* The CUDA workers StarPU will start for @p conf (its ncuda set): as many as asked,
 * at most the GPUs present; 0 without CUDA or in SimGrid mode (there STARPU_NCPU
 * is given). */
static int cuda_workers(const struct starpu_conf *conf)
{
#if defined(STARPU_USE_CUDA) && !defined(STARPU_SIMGRID)
	int gpus = 0;

	if (conf->ncuda == 0 || cudaGetDeviceCount(&gpus) != cudaSuccess)
		return 0;
	return conf->ncuda > 0 && conf->ncuda < gpus ? conf->ncuda : gpus;
#else
	(void)conf;
	return 0;
#endif
}

/* The thread level StarPU-MPI needs; in SimGrid mode SMPI reports SINGLE, but its
 * ranks and StarPU's threads are simulated actors scheduled one at a time. */
static int thread_level_ok(int provided)
{
#ifdef STARPU_SIMGRID
	(void)provided;
	return 1;
#else
	return provided >= MPI_THREAD_SERIALIZED;
#endif
}

static int start_mpi(int *argc, char ***argv)
{
	int initialized = 0, finalized = 0, provided = 0;

#ifdef STARPU_SIMGRID
	/* In SimGrid mode StarPU-MPI's thread is the simulated MPI rank: it initialises
	 * MPI itself, and the application's main may not call MPI directly. */
	(void)argc;
	(void)argv;
	(void)initialized;
	(void)finalized;
	(void)provided;
	return 0;
#endif

	MPI_Finalized(&finalized);
	if (finalized)
		return stargemm__error(-EINVAL, "stargemm_init: MPI was finalised in this process "
				       "(by stargemm_finalize(), which ends the MPI that "
				       "stargemm_init() started, or by the program), and MPI cannot "
				       "start again; initialise MPI yourself to init and finalize "
				       "stargemm more than once");
	MPI_Initialized(&initialized);
	if (initialized) {
		MPI_Query_thread(&provided);
		stargemm__process_set_thread_multiple(provided >= MPI_THREAD_MULTIPLE);
		if (!thread_level_ok(provided))
			return stargemm__error(-EINVAL, "stargemm_init: MPI was initialised with "
					       "thread level %d; StarPU-MPI needs at least "
					       "MPI_THREAD_SERIALIZED (%d)",
					       provided, MPI_THREAD_SERIALIZED);
		return 0;
	}
	/* MULTIPLE when available: stargemm's own collectives (error agreement) run
	 * beside StarPU-MPI's progress thread. */
	if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
		return stargemm__error(-EIO, "stargemm_init: MPI_Init_thread failed");
	rt.finalize_mpi = 1;
	stargemm__process_set_thread_multiple(provided >= MPI_THREAD_MULTIPLE);
	if (!thread_level_ok(provided))
		return stargemm__error(-ENODEV, "stargemm_init: the MPI library provides thread "
				       "level %d, StarPU-MPI needs MPI_THREAD_SERIALIZED (%d)",
				       provided, MPI_THREAD_SERIALIZED);
	return 0;
}

static void fill_starpu_conf(struct starpu_conf *conf, const struct stargemm_config *cfg)
{
	starpu_conf_init(conf);  /* reads STARPU_NCPU, STARPU_NCUDA, STARPU_SCHED, ... */
	/* An explicit count wins: StarPU 1.3 lets STARPU_NCPU / STARPU_NCUDA override
	 * conf.ncpus / conf.ncuda. */
	if (cfg->ncuda >= 0) {
		unsetenv("STARPU_NCUDA");
		conf->ncuda = cfg->ncuda;
	}
	if (cfg->ncpus >= 0) {
		unsetenv("STARPU_NCPU");
		conf->ncpus = cfg->ncpus;
	} else if (conf->ncpus < 0) {
		/* one core per GPU for its driver thread; a CPU worker at least (the
		 * scales, norms and packs run on CPUs) */
		conf->ncpus = cores_in_affinity_mask() - cuda_workers(conf);
		if (conf->ncpus < 1)
			conf->ncpus = 1;
	}
	if (cfg->sched_policy) {
		/* StarPU 1.3 lets STARPU_SCHED override conf.sched_policy_name. */
		unsetenv("STARPU_SCHED");
		if (!strcmp(cfg->sched_policy, stargemm_ooc_policy.policy_name))
			conf->sched_policy = &stargemm_ooc_policy;
		else
			conf->sched_policy_name = cfg->sched_policy;
	} else if (!stargemm__setting_text(STARGEMM__STARPU_SCHED)) {
		conf->sched_policy = &stargemm_ooc_policy;
	}
	conf->nopencl = 0;
}

/* StarPU's host memory budget: a non-zero stargemm_config.ram_limit_mib replaces
 * STARPU_LIMIT_CPU_MEM; with CUDA workers, no budget at all and the pinned host pool
 * off it is this rank's share of the machine's memory (keep_host_buffers()); with the
 * pool on, none is set: a freed buffer goes back to the pool at once, where a budget
 * would only make StarPU keep it for a tile of its shape (a 4 x 4 grid's simulation of
 * a block-sparse product at 40,000^3 then held 23 GiB instead of 13, in the same
 * simulated time: doc/out-of-core.md). Without CUDA workers none is
 * set: buffers are not pinned, and a budget would only make StarPU keep every freed
 * buffer (counted as used: tests/test_ooc_model.c's peak of received copies). In
 * SimGrid mode the simulated GPUs are those asked for (STARPU_NCUDA, or the
 * platform's when -1). */
static void set_ram_budget(const struct stargemm_config *cfg, const struct starpu_conf *conf,
			   MPI_Comm node)
{
	long shares = memory_shares(node);
	char buf[32];

	if (cfg->ram_limit_mib > 0) {
		snprintf(buf, sizeof(buf), "%lld", (long long)cfg->ram_limit_mib);
		setenv("STARPU_LIMIT_CPU_MEM", buf, 1);
		return;
	}
	if (stargemm__hostpool_serves_buffers())
		return;
#ifdef STARPU_SIMGRID
	if (conf->ncuda != 0)
		keep_host_buffers(shares);
#else
	if (cuda_workers(conf) > 0)
		keep_host_buffers(shares);
#endif
}

/* Freed memory is kept for the next allocations (STARGEMM_KEEP_MEMORY, default 1).
 * StarPU allocates and frees tile and pack buffers all the time (a product's C, the
 * copies of a RAM budget); by default glibc maps buffers above 128 KiB one by one and
 * unmaps them when freed, and returns the top of its heaps to the system: every
 * repetition then faults its pages in again, and every unmapping interrupts the other
 * cores of the process to flush their TLBs. With small tiles and a symbolic C each
 * repetition, that made 2 workers several times slower than 1 (doc/design.md,
 * Decisions, "Freed memory kept"). So, unless the user set glibc's malloc tunables,
 * buffers below 32 MiB come from the heaps and up to 1 GiB of free heap top is kept. */
static int keep_memory(void)
{
	double keep;
	int ret = stargemm__setting(STARGEMM__KEEP_MEMORY, &keep);
	const char *tunables = stargemm__setting_text(STARGEMM__GLIBC_TUNABLES);

	if (ret || keep == 0.0 || stargemm__setting_text(STARGEMM__MALLOC_MMAP_THRESHOLD) ||
	    stargemm__setting_text(STARGEMM__MALLOC_TRIM_THRESHOLD) || (tunables && strstr(tunables, "glibc.malloc.")))
		return ret;
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
	return 0;
}

/* A lock of this machine's, held by a node's first process while it starts StarPU, so
 * that the first processes of several jobs on one machine sharing a StarPU home (make
 * check's tests, two at a time) do not measure and write the bus at once either: a
 * file beside the kernels' (codelets/calibrate.c; its directory made by their
 * calibration). Its descriptor, closed to release it; -1 (no lock) without the
 * directory. */
#ifndef STARPU_SIMGRID
static int start_lock(void)
{
	char path[4096];

	if (stargemm__calibration_path(path, sizeof(path)) != 0)
		return -1;
	return stargemm__lock_file(path, ".start.lock");
}
#endif

/* StarPU started on this process, the first process of each node before the others.
 * The first time StarPU starts on a machine (or when the number of CPUs it sees
 * changes) it measures the bus and writes the measurement under STARPU_HOME; processes
 * of one node starting at once then read each other's half-written files and StarPU
 * aborts (ScaLAPACK's LU tester on 4 processes in a fresh home: an assertion under
 * _starpu_load_bus_performance_files). So the node's first process starts alone and
 * the others, which then only read, after it (and the first processes of several jobs
 * on the machine one after another: start_lock()). The first process waits for the
 * others after its start, beside StarPU-MPI's thread: that needs MPI_THREAD_MULTIPLE;
 * without it all start at once, as in SimGrid mode (the bus comes from the platform
 * file) and with an FxT trace (StarPU-MPI's thread then starts with a barrier of every
 * process, which the others, held back, would never reach: tests/trace.sh hung).
 * @p node: the processes of this machine (node_comm(); MPI_COMM_NULL: start at once).
 * Collective over @p comm. */
static int start_starpu(int *argc, char ***argv, MPI_Comm comm, MPI_Comm node,
			struct starpu_conf *conf)
{
#ifndef STARPU_SIMGRID
	int local = 0, provided = 0, lock = -1, ret;

	MPI_Query_thread(&provided);
	if (provided < MPI_THREAD_MULTIPLE || stargemm__fxt_tracing() || node == MPI_COMM_NULL)
		return starpu_mpi_init_conf(argc, argv, 0, comm, conf);
	MPI_Comm_rank(node, &local);
	if (local != 0)
		MPI_Barrier(node);   /* the node's first process has started */
	else
		lock = start_lock();
	ret = starpu_mpi_init_conf(argc, argv, 0, comm, conf);
	if (lock >= 0)
		close(lock);
	if (local == 0)
		MPI_Barrier(node);   /* started or failed: the others go on */
	return ret;
#else
	(void)node;
	return starpu_mpi_init_conf(argc, argv, 0, comm, conf);
#endif
}

int stargemm_init(const struct stargemm_config *user_cfg, int *argc, char ***argv)
{
	struct stargemm_config cfg;
	struct starpu_conf conf;
	MPI_Comm comm, node;
	int ret, rank, nranks;

	stargemm__clear_error();
	if (stargemm__initialized())
		return stargemm__error(-EINVAL, "stargemm_init: already initialised "
				       "(call stargemm_finalize() first)");
	if (user_cfg)
		cfg = *user_cfg;
	else
		stargemm_config_init(&cfg);
	if ((ret = check_config(&cfg)) != 0 || (ret = check_settings(&cfg)) != 0 ||
	    (ret = keep_memory()) != 0 ||
	    (ret = start_mpi(argc, argv)) != 0)
		return ret;
	comm = cfg.comm == MPI_COMM_NULL ? MPI_COMM_WORLD : cfg.comm;
	stargemm__process_set_comm(comm);
	export_settings(&cfg);
	stargemm__sched_count(cfg.count_transfers);
	stargemm__small_init();
	fill_starpu_conf(&conf, &cfg);
	node = node_comm(comm);
	set_ram_budget(&cfg, &conf, node);
	ret = start_starpu(argc, argv, comm, node, &conf);
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	if (ret == -ENODEV)
		return stargemm__error(-ENODEV, "stargemm_init: StarPU found no worker "
				       "(ncpus=%d, ncuda=%d)", conf.ncpus, conf.ncuda);
	if (ret != 0)
		return stargemm__error(-EIO, "stargemm_init: starpu_mpi_init_conf failed (%d)",
				       ret);
	starpu_mpi_comm_rank(comm, &rank);
	starpu_mpi_comm_size(comm, &nranks);
	stargemm__process_set_rank(rank, nranks);
#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
	/* One BLAS thread per StarPU worker: parallelism comes from the tasks. */
	openblas_set_num_threads(1);
#endif
	if (starpu_cuda_worker_get_count() > STARGEMM_MAX_DEVICES) {
		ret = stargemm__error(-EINVAL, "stargemm_init: %u CUDA workers; at most %d GPUs "
				      "per rank are supported (STARGEMM_MAX_DEVICES): set "
				      "STARPU_NCUDA or stargemm_config.ncuda",
				      starpu_cuda_worker_get_count(), STARGEMM_MAX_DEVICES);
		mpi_shutdown();
		return ret;
	}
	if ((ret = stargemm__fault_setup(rank)) != 0) {
		mpi_shutdown();
		return ret;
	}
	if (starpu_cuda_worker_get_count() > 0) {
		starpu_cublas_init();
		stargemm__batch_cuda_setup();
	}
	if ((ret = register_disk(&cfg)) != 0) {
		mpi_shutdown();
		return ret;
	}
	if ((ret = stargemm__pool_init()) != 0 || (ret = stargemm__hostpool_init()) != 0) {
		mpi_shutdown();
		stargemm__pool_shutdown();
		return ret;
	}
	stargemm__storage_reset();
	stargemm__process_started(cfg.disk_dir != NULL || cfg.ram_limit_mib > 0);
	return 0;
}

int stargemm_finalize(void)
{
	stargemm__clear_error();
	if (!stargemm__initialized() && rt.finalize_mpi) {
		/* after a failed stargemm_init(): the MPI it started */
		MPI_Finalize();
		rt.finalize_mpi = 0;
		return 0;
	}
	if (!stargemm__initialized())
		return stargemm__error(-EINVAL, "stargemm_finalize: stargemm is not initialised");
	starpu_mpi_wait_for_all(stargemm__comm());
	stargemm__progress_end();
	stargemm__run_deferred();
	if (starpu_cuda_worker_get_count() > 0)
		starpu_cublas_shutdown();
	mpi_shutdown();
	stargemm__hostpool_shutdown();   /* StarPU gave its host buffers back to it */
	stargemm__pool_shutdown();
	stargemm__transfers_shutdown();
	stargemm__process_stopped();
	if (rt.finalize_mpi) {
		MPI_Finalize();
		rt.finalize_mpi = 0;
	}
	return 0;
}
