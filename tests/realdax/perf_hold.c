// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * perf_hold.c - hold the perf events that transparent tracking opens, so
 * that the guest kernel's static keys for them stay enabled.
 *
 * The fault recording of lib/client/track-faults.c opens, per tracked
 * process, per-task software events of the minor and major page faults.
 * The first such event in the system enables static keys (the software
 * event's and the scheduler's per-task one) and the last one's close
 * disables them again: each flip patches kernel text, and under QEMU's TCG
 * (the dax-vm guest, kernel 6.12) that patching has been seen to oops the
 * guest with a stray int3.  .ci/realdax.sh starts this program before the
 * backports boot's tracking steps: with one event of each kind held open,
 * the keys never drop to zero in between, so no step flips them.
 *
 * Usage: perf_hold.  Prints "perf_hold: holding" once both are open (or why
 * not, exit 1), then sleeps until a signal ends it.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int hold(unsigned long long config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int main(void)
{
	if (hold(PERF_COUNT_SW_PAGE_FAULTS_MIN) < 0 || hold(PERF_COUNT_SW_PAGE_FAULTS_MAJ) < 0) {
		fprintf(stderr, "perf_hold: perf_event_open: %s\n", strerror(errno));
		return 1;
	}
	printf("perf_hold: holding\n");
	fflush(stdout);
	for (;;)
		pause();
}
