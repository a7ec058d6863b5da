/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/log.h - daxtrackd's log: one line per event on stderr.
 *
 * Each line starts with the sd-daemon priority prefix "<N>" (LOG_ERR is
 * "<3>", LOG_DEBUG "<7>"), which journald strips and turns into the
 * priority; when stderr is a terminal the prefix is "daxtrackd: " instead.
 * Lines below the verbosity threshold (default LOG_INFO) are dropped.
 */
#ifndef DAXTRACKD_LOG_H
#define DAXTRACKD_LOG_H

#include <stdint.h>
#include <stdio.h>
#include <syslog.h>

/* How dt_log() starts a line. */
enum dt_log_prefix {
	DT_LOG_PREFIX_AUTO,	/* "<N>" unless the stream is a terminal */
	DT_LOG_PREFIX_PRIO,	/* always "<N>" */
	DT_LOG_PREFIX_IDENT,	/* always "daxtrackd: " */
};

/**
 * dt_log() - Log one line.
 * @prio: LOG_ERR .. LOG_DEBUG (LOG_EMERG .. LOG_CRIT are logged as such).
 * @fmt: printf format of the message, without a trailing newline.
 *
 * The message is formatted into one buffer (longer ones are cut at 1023
 * bytes, newlines in it become spaces) and written with a single call, so
 * lines of concurrent threads never mix.
 *
 * Context: Any thread.  Does not allocate.
 */
void dt_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * dt_log_set_level() - Set the verbosity threshold.
 * @level: The least important priority still logged (LOG_ERR .. LOG_DEBUG).
 *
 * Context: Any thread; takes effect for the following dt_log() calls.
 */
void dt_log_set_level(int level);

/**
 * dt_log_get_level() - The verbosity threshold.
 *
 * Return: The level set by dt_log_set_level(), LOG_INFO by default.
 */
int dt_log_get_level(void);

/**
 * dt_log_set_output() - Send the log somewhere else than stderr (tests).
 * @f: The stream, or NULL for stderr.
 * @prefix: How lines start.
 *
 * Context: Call before other threads log.
 */
void dt_log_set_output(FILE *f, enum dt_log_prefix prefix);

/**
 * dt_log_level_parse() - Parse a level name of the configuration.
 * @name: "err", "warning", "notice", "info" or "debug".
 *
 * Return: The LOG_* value, or -EINVAL for any other string.
 */
int dt_log_level_parse(const char *name);

/**
 * dt_log_level_name() - The configuration name of a level.
 * @level: A LOG_* value.
 *
 * Return: A static string ("err" .. "debug", "emerg", "alert", "crit"), or
 * "unknown".
 */
const char *dt_log_level_name(int level);

/* @v in bytes as daxtrackd.conf writes it: "4096", "1M". */
void fmt_size(char *buf, size_t len, uint64_t v);

#endif /* DAXTRACKD_LOG_H */
