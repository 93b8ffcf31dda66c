/*
 * sched/ooc.h — the out-of-core scheduling policy (sched/ooc.c), which stargemm_init()
 * installs; the executor talks to it through src/contract.h only.
 */
#ifndef STARGEMM_SCHED_OOC_H
#define STARGEMM_SCHED_OOC_H

#include <starpu.h>

extern struct starpu_sched_policy stargemm_ooc_policy;

#endif
