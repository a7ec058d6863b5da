// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench_cpu.c - placing the client and the server of a round trip on CPUs
 * of their own, so that the floor and the daemon are timed alike.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/types.h>

#include "bench.h"

int bench_cpu_pair(int *client, int *server)
{
	cpu_set_t set;
	int cpu, found = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (found++ == 0)
			*client = cpu;
		else
			*server = cpu;
	}
	return found == 2 ? 0 : -ENODEV;
}

static void one_cpu(int cpu, cpu_set_t *set)
{
	CPU_ZERO(set);
	CPU_SET(cpu, set);
}

int bench_pin_thread(int cpu, cpu_set_t *saved)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(*saved), saved))
		return -errno;
	one_cpu(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int bench_unpin_thread(const cpu_set_t *saved)
{
	return sched_setaffinity(0, sizeof(*saved), saved) ? -errno : 0;
}

int bench_pin_process(pid_t pid, const cpu_set_t *set)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);

		if (tid > 0 && sched_setaffinity(tid, sizeof(*set), set) && !ret)
			ret = -errno;
	}
	closedir(dir);
	return ret;
}

int bench_pin_process_cpu(pid_t pid, int cpu)
{
	cpu_set_t set;

	one_cpu(cpu, &set);
	return bench_pin_process(pid, &set);
}
