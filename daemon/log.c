// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * daemon/log.c - daxtrackd's log lines (see log.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define LOG_LINE_MAX 1024

static int log_level = LOG_INFO;
static FILE *log_stream;
static enum dt_log_prefix log_prefix = DT_LOG_PREFIX_AUTO;

static const char *const level_names[] = {
	[LOG_EMERG] = "emerg",	 [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",
	[LOG_ERR] = "err",	 [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info",	 [LOG_DEBUG] = "debug",
};

void dt_log_set_level(int level)
{
	if (level < LOG_EMERG)
		level = LOG_EMERG;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	__atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
}

int dt_log_get_level(void)
{
	return __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

void dt_log_set_output(FILE *f, enum dt_log_prefix prefix)
{
	log_stream = f;
	log_prefix = prefix;
}

int dt_log_level_parse(const char *name)
{
	int level;

	for (level = LOG_ERR; level <= LOG_DEBUG; level++)
		if (!strcmp(name, level_names[level]))
			return level;
	return -EINVAL;
}

const char *dt_log_level_name(int level)
{
	if (level < LOG_EMERG || level > LOG_DEBUG)
		return "unknown";
	return level_names[level];
}

static bool use_prio_prefix(FILE *f)
{
	switch (log_prefix) {
	case DT_LOG_PREFIX_PRIO:
		return true;
	case DT_LOG_PREFIX_IDENT:
		return false;
	default:
		return !isatty(fileno(f));
	}
}

void dt_log(int prio, const char *fmt, ...)
{
	FILE *f = log_stream ? log_stream : stderr;
	char line[LOG_LINE_MAX + 1];
	int saved_errno = errno;
	size_t len, i;
	va_list ap;

	if (prio < LOG_EMERG)
		prio = LOG_EMERG;
	if (prio > LOG_DEBUG)
		prio = LOG_DEBUG;
	if (prio > dt_log_get_level())
		return;

	if (use_prio_prefix(f))
		len = (size_t)snprintf(line, LOG_LINE_MAX, "<%d>", prio);
	else
		len = (size_t)snprintf(line, LOG_LINE_MAX, "daxtrackd: ");
	va_start(ap, fmt);
	vsnprintf(line + len, LOG_LINE_MAX - len, fmt, ap);
	va_end(ap);

	len = strlen(line);
	for (i = 0; i < len; i++)
		if (line[i] == '\n')
			line[i] = ' ';
	line[len++] = '\n';
	fwrite(line, 1, len, f);
	fflush(f);
	errno = saved_errno;
}

void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (v >= 1024 && !(v % 1024) && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
}
