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
#include <stdatomic.h>
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

#include "internal.h"
#include "worklist.h"

#if defined(STARPU_USE_CUDA) && !defined(STARPU_SIMGRID)
#include <cuda_runtime.h>
#endif

#ifdef HAVE_OPENBLAS_SET_NUM_THREADS
void openblas_set_num_threads(int nthreads);
#endif

static struct {
	int initialized;
	int finalize_mpi;   /* MPI was initialised by us */
	MPI_Comm comm;
	int rank, nranks;
	int thread_multiple;  /* MPI calls allowed beside StarPU-MPI's thread */
	int64_t next_tag;
	int managed_storage;  /* StarPU allocates tiles (evictable to disk) */
	int quiet_stats;      /* STARPU_COMM_STATS was turned on for the counters only */
	/* In-core work lists whose tasks may still run (stargemm__keep_until_wait()). */
	struct stargemm__worklist **kept;
	int nkept, cap_kept;
	/* In-place matrices written by products since the last wait (with GPUs). */
	const struct stargemm_matrix **written;
	int nwritten, cap_written;
} rt = { .rank = 0, .nranks = 1, .next_tag = 1 };

static atomic_int task_failures;

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

static char task_failure_msg[STARGEMM__FAILURE_MSG];

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

static int check_config(const struct stargemm_config *cfg)
{
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
	    (ret = stargemm__env_setting("STARGEMM_DEVICE_POOL", 1, &x)))
		return ret;
	return cfg->disk_dir ? stargemm__env_setting("STARGEMM_DISK_ONE_FILE", 1, &x) : 0;
}

/* Environment StarPU reads at start-up; values the user exported win, except the RAM
 * budget: a non-zero stargemm_config.ram_limit_mib replaces STARPU_LIMIT_CPU_MEM. */
static void export_settings(const struct stargemm_config *cfg)
{
	char buf[32];

	rt.quiet_stats = cfg->count_transfers && !getenv("STARPU_COMM_STATS");
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
	 * the GPU busy (measured on an H100: doc/performance.md, "GPU"). */
	setenv("STARPU_CUDA_PIPELINE", "4", 0);
	/* Workers on the cores of this process's affinity mask: StarPU 1.3 otherwise
	 * numbers cores from 0 in every process, so that two ranks bound to one core each
	 * (mpiexec -bind-to core) both put their worker on core 0 and run at half speed
	 * (tests/binding_2ranks.sh). An unbound process's mask is the whole machine. */
	setenv("STARPU_WORKERS_GETBIND", "1", 0);
	/* No FxT trace unless asked for (STARPU_FXT_TRACE=1): StarPU 1.3 built with FxT
	 * traces every run by default, into a file per rank in /tmp (doc/tracing.md). */
	setenv("STARPU_FXT_TRACE", "0", 0);
	if (cfg->ram_limit_mib > 0) {
		snprintf(buf, sizeof(buf), "%lld", (long long)cfg->ram_limit_mib);
		setenv("STARPU_LIMIT_CPU_MEM", buf, 1);
	}
}

static int register_disk(const struct stargemm_config *cfg)
{
	double one_file;
	int node, ret;

	if (!cfg->disk_dir)
		return 0;
	/* stargemm's backend (src/disk.c), or StarPU's unistd with STARGEMM_DISK_ONE_FILE=0 */
	if ((ret = stargemm__env_setting("STARGEMM_DISK_ONE_FILE", 1.0, &one_file)))
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
	int initialized = 0, provided = 0;

#ifdef STARPU_SIMGRID
	/* In SimGrid mode StarPU-MPI's thread is the simulated MPI rank: it initialises
	 * MPI itself, and the application's main may not call MPI directly. */
	(void)argc;
	(void)argv;
	(void)initialized;
	(void)provided;
	return 0;
#endif

	MPI_Initialized(&initialized);
	if (initialized) {
		MPI_Query_thread(&provided);
		rt.thread_multiple = provided >= MPI_THREAD_MULTIPLE;
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
	rt.thread_multiple = provided >= MPI_THREAD_MULTIPLE;
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
	} else if (!getenv("STARPU_SCHED")) {
		conf->sched_policy = &stargemm_ooc_policy;
	}
	conf->nopencl = 0;
}

/* Freed memory is kept for the next allocations (STARGEMM_KEEP_MEMORY, default 1).
 * StarPU allocates and frees tile and pack buffers all the time (a product's C, the
 * copies of a RAM budget); by default glibc maps buffers above 128 KiB one by one and
 * unmaps them when freed, and returns the top of its heaps to the system: every
 * repetition then faults its pages in again, and every unmapping interrupts the other
 * cores of the process to flush their TLBs. On 2 cores (2000^3, tiles 20-60, 10%, a
 * symbolic C each repetition) that made 2 workers 5-8 times slower than 1
 * (doc/performance.md). So, unless the user set glibc's malloc tunables, buffers below
 * 32 MiB come from the heaps and up to 1 GiB of free heap top is kept. */
static int keep_memory(void)
{
	double keep;
	int ret = stargemm__env_setting("STARGEMM_KEEP_MEMORY", 1.0, &keep);
	const char *tunables = getenv("GLIBC_TUNABLES");

	if (ret || keep == 0.0 || getenv("MALLOC_MMAP_THRESHOLD_") ||
	    getenv("MALLOC_TRIM_THRESHOLD_") || (tunables && strstr(tunables, "glibc.malloc.")))
		return ret;
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
	return 0;
}

int stargemm_init(const struct stargemm_config *user_cfg, int *argc, char ***argv)
{
	struct stargemm_config cfg;
	struct starpu_conf conf;
	int ret;

	stargemm__clear_error();
	if (rt.initialized)
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
	rt.comm = cfg.comm == MPI_COMM_NULL ? MPI_COMM_WORLD : cfg.comm;
	export_settings(&cfg);
	stargemm__sched_count(cfg.count_transfers);
	stargemm__small_init();
	fill_starpu_conf(&conf, &cfg);
	ret = starpu_mpi_init_conf(argc, argv, 0, rt.comm, &conf);
	if (ret == -ENODEV)
		return stargemm__error(-ENODEV, "stargemm_init: StarPU found no worker "
				       "(ncpus=%d, ncuda=%d)", conf.ncpus, conf.ncuda);
	if (ret != 0)
		return stargemm__error(-EIO, "stargemm_init: starpu_mpi_init_conf failed (%d)",
				       ret);
	starpu_mpi_comm_rank(rt.comm, &rt.rank);
	starpu_mpi_comm_size(rt.comm, &rt.nranks);
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
	if ((ret = stargemm__fault_setup(rt.rank)) != 0) {
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
	if ((ret = stargemm__pool_init()) != 0) {
		mpi_shutdown();
		return ret;
	}
	rt.managed_storage = cfg.disk_dir != NULL || cfg.ram_limit_mib > 0;
	atomic_store(&task_failures, 0);
	stargemm__storage_reset();
	rt.next_tag = 1;
	rt.initialized = 1;
	return 0;
}

/* @p array (@p n of *@p cap elements of @p size bytes) with room for one more: itself,
 * or grown to twice its capacity (*@p cap updated); NULL when it cannot grow (it is
 * then left as it was). */
static void *room_for_one(void *array, int n, int *cap, size_t size)
{
	int more = *cap ? 2 * *cap : 8;
	void *grown;

	if (n < *cap)
		return array;
	if ((grown = realloc(array, (size_t)more * size)))
		*cap = more;
	return grown;
}

void stargemm__keep_until_wait(struct stargemm__worklist *wl)
{
	struct stargemm__worklist **k = room_for_one(rt.kept, rt.nkept, &rt.cap_kept,
						      sizeof(*rt.kept));

	if (!k) {
		/* Nowhere to record it: wait for this rank's tasks (the only ones that read
		 * it) now rather than lose it. */
		starpu_task_wait_for_all();
		stargemm__worklist_free(wl);
		free(wl);
		return;
	}
	rt.kept = k;
	rt.kept[rt.nkept++] = wl;
}

/* Free the kept work lists; their tasks are done (called after a wait for all). */
static void free_kept(void)
{
	for (int i = 0; i < rt.nkept; i++) {
		stargemm__worklist_free(rt.kept[i]);
		free(rt.kept[i]);
	}
	free(rt.kept);
	rt.kept = NULL;
	rt.nkept = rt.cap_kept = 0;
}

void stargemm__written_in_place(const struct stargemm_matrix *A)
{
	const struct stargemm_matrix **w;

	if (!A->local.base || starpu_cuda_worker_get_count() == 0)
		return;
	for (int i = 0; i < rt.nwritten; i++)
		if (rt.written[i] == A)
			return;
	w = room_for_one(rt.written, rt.nwritten, &rt.cap_written, sizeof(*rt.written));
	if (!w) {
		/* Nowhere to record it: bring it back now, after its tasks. */
		starpu_task_wait_for_all();
		stargemm__sync_in_place(A);
		return;
	}
	rt.written = w;
	rt.written[rt.nwritten++] = A;
}

void stargemm__forget_in_place(const struct stargemm_matrix *A)
{
	for (int i = 0; i < rt.nwritten; i++)
		if (rt.written[i] == A)
			rt.written[i--] = rt.written[--rt.nwritten];
}

/* The recorded in-place matrices' tiles back in the users' arrays (their tasks are
 * done). */
static void sync_written(void)
{
	for (int i = 0; i < rt.nwritten; i++)
		stargemm__sync_in_place(rt.written[i]);
	free(rt.written);
	rt.written = NULL;
	rt.nwritten = rt.cap_written = 0;
}

int stargemm_finalize(void)
{
	stargemm__clear_error();
	if (!rt.initialized && rt.finalize_mpi) {
		/* after a failed stargemm_init(): the MPI it started */
		MPI_Finalize();
		rt.finalize_mpi = 0;
		return 0;
	}
	if (!rt.initialized)
		return stargemm__error(-EINVAL, "stargemm_finalize: stargemm is not initialised");
	starpu_mpi_wait_for_all(rt.comm);
	stargemm__progress_end();
	free_kept();
	sync_written();
	if (starpu_cuda_worker_get_count() > 0)
		starpu_cublas_shutdown();
	mpi_shutdown();
	stargemm__pool_shutdown();
	stargemm__transfers_shutdown();
	rt.initialized = 0;
	if (rt.finalize_mpi) {
		MPI_Finalize();
		rt.finalize_mpi = 0;
	}
	return 0;
}

int stargemm_rank(void)
{
	return rt.rank;
}

int stargemm_nranks(void)
{
	return rt.nranks;
}

int stargemm_ncpu_workers(void)
{
	return rt.initialized ? (int)starpu_cpu_worker_get_count() : 0;
}

int stargemm_ncuda_workers(void)
{
	return rt.initialized ? (int)starpu_cuda_worker_get_count() : 0;
}

int stargemm__quiet_begin(void)
{
	if (starpu_task_nsubmitted() > 0)
		return 0;
	starpu_pause();
	return 1;
}

void stargemm__quiet_end(int paused)
{
	if (paused)
		starpu_resume();
}

int stargemm__managed_storage(void)
{
	return rt.managed_storage;
}

int stargemm__mpi_thread_multiple(void)
{
	return rt.thread_multiple || rt.nranks == 1;
}

int stargemm__initialized(void)
{
	return rt.initialized;
}

MPI_Comm stargemm__comm(void)
{
	return rt.comm;
}

int64_t stargemm__reserve_tags(int64_t count)
{
	int64_t first = rt.next_tag;

	rt.next_tag += count;
	return first;
}

/* The first failure's message is written by the thread that counted it first, before
 * the count is seen by stargemm__check_task_failures() (after every task is done). */
void stargemm__task_failed(const char *msg)
{
	if (atomic_fetch_add(&task_failures, 1) == 0)
		snprintf(task_failure_msg, sizeof(task_failure_msg), "%s", msg);
}

int stargemm__task_failures(void)
{
	return atomic_load(&task_failures) > 0;
}

int stargemm__check_task_failures(void)
{
	int local = atomic_exchange(&task_failures, 0);
	struct stargemm__failure f;

	/* Every rank must agree that the result is incomplete, not only the one whose
	 * task failed. */
	if (stargemm__share_failure(local > 0, task_failure_msg, &f)) {
		f.count = local > 0;
		f.rank = stargemm_rank();
		snprintf(f.msg, sizeof(f.msg), "%s", task_failure_msg);
	}
	if (f.count == 0)
		return 0;
	return stargemm__error(-EIO, "stargemm: a task failed on rank %d (%llu rank(s) with "
			       "failures): %s; the result is incomplete: C is undefined", f.rank,
			       (unsigned long long)f.count, f.msg);
}

int stargemm__wait_after(int ret)
{
	char msg[1024];
	int wret;

	if (!ret)
		return stargemm_wait();
	snprintf(msg, sizeof(msg), "%s", stargemm_last_error());
	wret = stargemm_wait();
	return stargemm__error(ret, "%s%s%s", msg, wret ? "; then: " : "",
			       wret ? stargemm_last_error() : "");
}

int stargemm_wait(void)
{
	stargemm__clear_error();
	if (!rt.initialized)
		return stargemm__error(-EINVAL, "stargemm_wait: stargemm is not initialised");
	starpu_mpi_wait_for_all(rt.comm);
	stargemm__progress_end();
	free_kept();
	sync_written();
	return stargemm__check_task_failures();
}
