/*
 * internal.h — every module header of the library, for the files of the upper floors
 * (doc/design.md, "Layers"), which use many of them; not installed. A lower floor's
 * file includes its own headers instead: the planning floor builds without StarPU's
 * (Makefile.am, libstargemm-plan.la). Internal functions shared between files are
 * prefixed stargemm__.
 */
#ifndef STARGEMM_INTERNAL_H
#define STARGEMM_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "../codelets/codelets.h"
#include "../codelets/element.h"
#include "../sched/ooc.h"
#include "collective.h"
#include "contract.h"
#include "disk.h"
#include "distribution.h"
#include "error.h"
#include "fault.h"
#include "generate.h"
#include "matrix.h"
#include "network.h"
#include "pack.h"
#include "plan.h"
#include "hostpool.h"
#include "sizes.h"
#include "pool.h"
#include "problem.h"
#include "process.h"
#include "progress.h"
#include "settings.h"
#include "stationary.h"
#include "stargemm.h"
#include "stats.h"
#include "storage.h"
#include "wait.h"
#include "workers.h"

#endif /* STARGEMM_INTERNAL_H */
