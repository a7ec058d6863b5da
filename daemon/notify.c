// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/notify.c - daxtrackd's messages to systemd (sd_notify): READY,
 * RELOADING, STOPPING, STATUS, WATCHDOG, EXTEND_TIMEOUT_USEC.  Without
 * libsystemd they are dropped.
 */
#include <stdarg.h>
#include <stdio.h>

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "daxtrackd.h"

void notify(const char *fmt, ...)
{
#ifdef HAVE_LIBSYSTEMD
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sd_notify(0, buf);
#else
	(void)fmt;
#endif
}

void notify_status(struct daemon *d)
{
	notify("STATUS=serving %u regions, %u clients", d->srv.regions.n,
	       __atomic_load_n(&d->srv.nconns, __ATOMIC_RELAXED));
}
