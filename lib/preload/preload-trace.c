// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * preload-trace.c - DAXTRACK_PRELOAD_TRACE=FILE: a record of what each
 * msync(), fsync() and fdatasync() made durable, for checkers (the LMDB
 * test): the library's private flush and drain hooks are replaced by
 * recorders that call them (libpmem's) and append one line each to FILE:
 *
 *   M begin <off> <len>   a persist of region bytes [off, off + len) starts
 *   F <off> <len>         region bytes [off, off + len) were flushed
 *   D                     the flushes before were drained (ordered)
 *   S <off> <len>         the daemon answered an FSYNC of region bytes
 *                         [off, off + len) during the persist: it flushed
 *                         and drained every page dirty in them
 *   M end <rc>            the persist returned rc (0, or a negative errno)
 *
 * Offsets are the region's, in decimal.  F and D appear only for a persist
 * done in-process (the daemon said the region is persistent memory); S for
 * one the daemon answered (not pmem, a fallback, or the persist that
 * reconnects after a restart of the daemon).  The hooks
 * run only inside the persists the shim makes, under dtp_lock(), which is
 * what lets them read the table.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "client-private.h"
#include "preload.h"

static int trace_fd = -1;
/* The hooks the recorders replace (libpmem's): they still do the work. */
static void (*next_flush)(const void *addr, size_t len);
static void (*next_drain)(void);

static void trace_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void trace_line(const char *fmt, ...)
{
	char line[128];
	va_list ap;
	int n;

	if (trace_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > 0 && n < (int)sizeof(line) && write(trace_fd, line, n) != n)
		dtp_debug("trace: short write");
}

static void trace_flush(const void *addr, size_t len)
{
	uint64_t off;

	next_flush(addr, len);
	if (dtp_region_of_lib_addr(addr, &off) || dtp_maps_offset(addr, &off))
		trace_line("F %llu %zu\n", (unsigned long long)off, len);
	else
		trace_line("F ? %zu\n", len);
}

static void trace_drain(void)
{
	next_drain();
	trace_line("D\n");
}

void dtp_trace_init(void)
{
	const char *path = getenv("DAXTRACK_PRELOAD_TRACE");

	if (!path || !*path || trace_fd >= 0)
		return;
	trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (trace_fd < 0) {
		dtp_debug("trace %s: cannot open it", path);
		return;
	}
	next_flush = dt_client_flush_hook;
	next_drain = dt_client_drain_hook;
	dt_client_flush_hook = trace_flush;
	dt_client_drain_hook = trace_drain;
	dtp_debug("trace: %s", path);
}

void dtp_trace_msync_begin(uint64_t off, uint64_t len)
{
	trace_line("M begin %llu %llu\n", (unsigned long long)off, (unsigned long long)len);
}

uint64_t dtp_trace_fsyncs(struct dt_client_region *r)
{
	struct dt_client_counters k;

	if (trace_fd < 0)
		return 0;
	dt_client_counters(r->c, &k);
	return k.sent_by_op[DT_OP_FSYNC];
}

void dtp_trace_by_daemon(struct dt_client_region *r, uint64_t before, uint64_t off, uint64_t len,
			 int rc)
{
	if (trace_fd < 0 || rc || dtp_trace_fsyncs(r) == before)
		return;
	trace_line("S %llu %llu\n", (unsigned long long)off, (unsigned long long)len);
}

void dtp_trace_msync_end(int rc)
{
	trace_line("M end %d\n", rc);
}
