/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tools/daxtrackctl/ctl.h - what the subcommands of daxtrackctl share: the
 * global options, the option parser, messages and exit codes.
 *
 * Each subcommand group lives in its own file (status.c, regions.c,
 * entries.c, stats.c, fsync.c (fsync and dirty), dump.c, watch.c) and exports one
 * cmd_NAME() per subcommand; main.c dispatches.  A command returns the exit
 * status: CTL_EXIT_OK, CTL_EXIT_FAIL or CTL_EXIT_USAGE.
 */
#ifndef DAXTRACKCTL_CTL_H
#define DAXTRACKCTL_CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#define CTL_PROG	"daxtrackctl"

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_FAIL = 1,
	CTL_EXIT_USAGE = 2,
};

/* ctl_getopt() returns this after printing the command's usage for --help. */
#define CTL_OPT_HELP	(-2)
/* ... and this after printing a usage error. */
#define CTL_OPT_USAGE	(-3)

struct ctl;

/**
 * struct ctl_cmd - One subcommand.
 * @name: As typed.
 * @run: Runs it on its own argv (argv[0] is @name); returns the exit status.
 * @summary: What it shows or does, in a few words: "the entries of a region,
 *	ascending"; the line of `daxtrackctl --help`.
 * @usage: The synopsis after "Usage: daxtrackctl ", then lines of notes and
 *	lines of options (those start with a blank), each ending in a newline;
 *	--help prints the synopsis, the summary, the notes, then the options.
 */
struct ctl_cmd {
	const char *name;
	int (*run)(struct ctl *ctl, int argc, char **argv);
	const char *summary;
	const char *usage;
};

/**
 * struct ctl - The global state of one invocation.
 * @socket: The daemon's socket (-s, DAXTRACK_SOCKET or the default).
 * @json: --json was given.
 * @cmd: The command running, for messages.
 */
struct ctl {
	const char *socket;
	bool json;
	const struct ctl_cmd *cmd;
};

/* The long options every command accepts, for the end of its option table. */
#define CTL_GLOBAL_OPTIONS					\
	{ "socket", required_argument, NULL, 's' },		\
	{ "json", no_argument, NULL, 'J' },			\
	{ "help", no_argument, NULL, 'h' },			\
	{ NULL, 0, NULL, 0 }

/**
 * ctl_getopt() - getopt_long() that also handles the global options.
 * @ctl: The state; -s and --json are stored here.
 * @argc: Of the command's argv.
 * @argv: The command's argv.
 * @shortopts: The command's short options (the global ones are added).
 * @longopts: The command's long options, ending with CTL_GLOBAL_OPTIONS.
 *
 * Return: the next command-specific option character; -1 at the end (the
 * operands are argv[optind..]); CTL_OPT_HELP after printing the usage to
 * standard output; CTL_OPT_USAGE after printing a usage error.
 */
int ctl_getopt(struct ctl *ctl, int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/* "daxtrackctl: MESSAGE\n" on standard error. */
void ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * ctl_usage_error() - Print "daxtrackctl: CMD: MESSAGE" and a hint.
 * @ctl: For the command's name.
 * @fmt: The message.
 *
 * Return: CTL_EXIT_USAGE.
 */
int ctl_usage_error(struct ctl *ctl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * ctl_operands() - Check the number of operands after the options.
 * @ctl: For messages.
 * @argc: Of the command's argv, after ctl_getopt() returned -1.
 * @argv: The command's argv.
 * @min: Fewest operands.
 * @max: Most operands.
 *
 * Return: 0, or CTL_EXIT_USAGE after a message.
 */
int ctl_operands(struct ctl *ctl, int argc, char **argv, int min, int max);

/* Parse a size, offset or range option; CTL_EXIT_USAGE after a message. */
int ctl_arg_size(struct ctl *ctl, const char *what, const char *s, uint64_t *out);
int ctl_arg_range(struct ctl *ctl, const char *s, uint64_t *offset, uint64_t *length);
int ctl_arg_count(struct ctl *ctl, const char *what, const char *s, uint64_t *out);

/* The subcommands. */
struct dt_client;
struct dt_proto_failed;

/*
 * The regions the daemon does not serve (FAILED): *@out malloc()ed (free()
 * it), none from a daemon without FAILED.  Return: 0, or an error (said).
 */
int ctl_failed_get(struct dt_client *c, struct dt_proto_failed **out, uint32_t *count);

/* One line each: "NAME: not served: PATH: REASON (...)". */
void ctl_failed_print(const struct dt_proto_failed *f, uint32_t n);

int cmd_status(struct ctl *ctl, int argc, char **argv);
int cmd_version(struct ctl *ctl, int argc, char **argv);
int cmd_regions(struct ctl *ctl, int argc, char **argv);
int cmd_namespaces(struct ctl *ctl, int argc, char **argv);
int cmd_list(struct ctl *ctl, int argc, char **argv);
int cmd_lookup(struct ctl *ctl, int argc, char **argv);
int cmd_stats(struct ctl *ctl, int argc, char **argv);
int cmd_dirty(struct ctl *ctl, int argc, char **argv);
int cmd_fsync(struct ctl *ctl, int argc, char **argv);
int cmd_dump(struct ctl *ctl, int argc, char **argv);
int cmd_watch(struct ctl *ctl, int argc, char **argv);

#endif /* DAXTRACKCTL_CTL_H */
