/* affinity.c - Redis's CPU lists (server_cpulist, bio_cpulist,
 * aof_rewrite_cpulist, bgsave_cpulist): "0-3,8,10-14:2" pins a thread. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdlib.h>

#include "server.h"

/* A CPU number at *p: 0 with *p past it, or -1. */
static int cpu_number(const char **p, long *out)
{
    if (**p < '0' || **p > '9') return -1;
    char *end;
    *out = strtol(*p, &end, 10);
    if (*out >= CPU_SETSIZE) return -1;
    *p = end;
    return 0;
}

/* Redis's cpu-list syntax: 0 with set filled, or -1. */
static int affinity_parse(const char *list, cpu_set_t *set)
{
    const char *p = list;
    CPU_ZERO(set);
    for (;;) {
        long first, last, step = 1;
        if (cpu_number(&p, &first) != 0) return -1;
        last = first;
        if (*p == '-') {
            p++;
            if (cpu_number(&p, &last) != 0 || last < first) return -1;
            if (*p == ':') {
                p++;
                if (cpu_number(&p, &step) != 0 || step == 0) return -1;
            }
        }
        for (long cpu = first; cpu <= last; cpu += step) CPU_SET((int)cpu, set);
        if (*p == '\0') return 0;
        if (*p++ != ',') return -1;
    }
}

int affinity_apply(const char *list)
{
    cpu_set_t set;
    if (!list || !*list) return 0;
    if (affinity_parse(list, &set) != 0) return -1;
    return sched_setaffinity(0, sizeof set, &set) == 0 ? 0 : -1;
}
