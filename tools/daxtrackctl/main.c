// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tools/daxtrackctl/main.c - daxtrackctl: global options, the command
 * table, dispatch and the shared option and message helpers.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <daxtrack/client.h>

#include "ctl.h"
#include "util.h"

#define GLOBAL_HELP							\
	"  -s, --socket PATH  the daemon's socket (default: $DAXTRACK_SOCKET or\n" \
	"                     " DT_PROTO_SOCKET_PATH ")\n"		\
	"      --json         print JSON\n"				\
	"  -h, --help         print this help\n"

static int cmd_help(struct ctl *ctl, int argc, char **argv);

static const struct ctl_cmd commands[] = {
	{ "status", cmd_status, "the daemon, its regions and totals",
	  "status [--json]\n" },
	{ "regions", cmd_regions, "the regions the daemon tracks, as configured",
	  "regions [-v] [--json]\n"
	  "  -v, --verbose      all columns: EADR, NUMA, bad bytes, namespace match, device,\n"
	  "                     backing (NVDIMM or CXL), CXL region and memdevs\n" },
	{ "namespaces", cmd_namespaces,
	  "the host's persistent memory namespaces (NVDIMM or CXL) and CXL memdevs",
	  "namespaces [--local] [--cxl] [--json]\n"
	  "From the daemon or, with --local, found by daxtrackctl itself; `regions`\n"
	  "says which namespace each region lies on.\n"
	  "      --local        ask libndctl and libcxl directly (no daemon needed)\n"
	  "      --cxl          the CXL memdevs instead: serial, firmware, host bridge,\n"
	  "                     region, decoder, health (as the devices answer now)\n" },
	{ "list", cmd_list, "the entries of a region, ascending",
	  "list [--dirty] [--range A-B] [--limit N] [--json] REGION\n"
	  "      --dirty        only entries tagged dirty\n"
	  "      --range A-B    only entries intersecting bytes A up to B (or A+LEN)\n"
	  "      --limit N      stop after N entries\n" },
	{ "lookup", cmd_lookup, "the entry covering a byte of a region",
	  "lookup [--json] REGION OFFSET\n" },
	{ "stats", cmd_stats, "counters of the daemon and of every region",
	  "stats [--prometheus] [--json] [REGION]\n"
	  "      --prometheus   print the Prometheus text exposition format\n" },
	{ "dirty", cmd_dirty, "mark a byte range of a region dirty",
	  "dirty [--json] REGION OFFSET LEN\n"
	  "Needs root or write access to the region's path.  OFFSET and LEN are bytes,\n"
	  "with K, M, G or T for KiB, MiB, GiB or TiB.\n" },
	{ "fsync", cmd_fsync, "flush the dirty entries of a region",
	  "fsync [--range A-B] [--deep] [--json] REGION\n"
	  "Needs root or write access to the region's path.\n"
	  "      --range A-B    only bytes A up to B (or A+LEN)\n"
	  "      --deep         also flush the memory controller's write queues\n" },
	{ "dump", cmd_dump, "the structure of a region's radix tree (for debugging)",
	  "dump [--json] REGION\n" },
	{ "watch", cmd_watch, "a live view of dirty entries, fsyncs, flushes and faults",
	  "watch [--interval S] [--count N] [--json] [REGION]\n"
	  "      --interval S   seconds between refreshes (default 1, at least 0.1)\n"
	  "      --count N      stop after N refreshes\n" },
	{ "version", cmd_version, "the versions of daxtrackctl and of the daemon",
	  "version [--json]\n" },
	{ "help", cmd_help, "the usage of daxtrackctl or of a command",
	  "help [COMMAND]\n" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_main_usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: daxtrackctl [-s PATH] [--json] COMMAND [OPTIONS] [ARGS]\n"
		   "Ask daxtrackd what is tracked and dirty, and flush it.\n\nCommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nOptions (before or after the command):\n" GLOBAL_HELP
		   "\nSee 'daxtrackctl COMMAND --help' and daxtrackctl(8).\n");
}

/* The lines of @text after the first that do (@options) or do not start with a blank. */
static void print_lines(const char *text, bool options, FILE *f)
{
	const char *p = strchr(text, '\n');

	while (p && *++p) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p + 1) : (int)strlen(p);

		if ((*p == ' ') == options)
			fprintf(f, "%.*s", len, p);
		p = nl;
	}
}

/* Usage: SYNOPSIS, the summary as a sentence, the notes, the options. */
static void print_cmd_usage(const struct ctl_cmd *cmd, FILE *f)
{
	const char *nl = strchr(cmd->usage, '\n');

	fprintf(f, "Usage: daxtrackctl %.*s\n%c%s.\n", (int)(nl - cmd->usage), cmd->usage,
		toupper((unsigned char)cmd->summary[0]), cmd->summary + 1);
	print_lines(cmd->usage, false, f);
	fprintf(f, "\nOptions:\n");
	print_lines(cmd->usage, true, f);
	fputs(GLOBAL_HELP, f);
}

static const struct ctl_cmd *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

void ctl_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(CTL_PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int ctl_usage_error(struct ctl *ctl, const char *fmt, ...)
{
	const char *name = ctl->cmd ? ctl->cmd->name : NULL;
	va_list ap;

	fputs(CTL_PROG ": ", stderr);
	if (name)
		fprintf(stderr, "%s: ", name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" CTL_PROG "%s%s --help'.\n", name ? " " : "", name ? name : "");
	return CTL_EXIT_USAGE;
}

int ctl_getopt(struct ctl *ctl, int argc, char **argv, const char *shortopts,
	       const struct option *longopts)
{
	char opts[64];
	int c;

	/* ':' first: a missing argument is ':'; "s:h" are the global ones. */
	snprintf(opts, sizeof(opts), ":%ss:h", shortopts);
	opterr = 0;
	for (;;) {
		c = getopt_long(argc, argv, opts, longopts, NULL);
		switch (c) {
		case 's':
			ctl->socket = optarg;
			break;
		case 'J':
			ctl->json = true;
			break;
		case 'h':
			print_cmd_usage(ctl->cmd, stdout);
			return CTL_OPT_HELP;
		case ':':
			ctl_usage_error(ctl, "option '%s' needs an argument", argv[optind - 1]);
			return CTL_OPT_USAGE;
		case '?':
			if (optopt)
				ctl_usage_error(ctl, "unknown option '-%c'", optopt);
			else
				ctl_usage_error(ctl, "unknown option '%s'", argv[optind - 1]);
			return CTL_OPT_USAGE;
		default:
			return c;
		}
	}
}

int ctl_operands(struct ctl *ctl, int argc, char **argv, int min, int max)
{
	int n = argc - optind;

	if (n < min)
		return ctl_usage_error(ctl, "missing argument");
	if (n > max)
		return ctl_usage_error(ctl, "unexpected argument '%s'", argv[optind + max]);
	return 0;
}

int ctl_arg_size(struct ctl *ctl, const char *what, const char *s, uint64_t *out)
{
	const char *why;

	if (ctl_parse_size(s, out, &why))
		return ctl_usage_error(ctl, "bad %s '%s': %s", what, s, why);
	return 0;
}

int ctl_arg_range(struct ctl *ctl, const char *s, uint64_t *offset, uint64_t *length)
{
	const char *why;

	if (ctl_parse_range(s, offset, length, &why))
		return ctl_usage_error(ctl, "bad range '%s': %s", s, why);
	return 0;
}

int ctl_arg_count(struct ctl *ctl, const char *what, const char *s, uint64_t *out)
{
	const char *why;

	if (ctl_parse_count(s, out, &why))
		return ctl_usage_error(ctl, "bad %s '%s': %s", what, s, why);
	return 0;
}

static int cmd_help(struct ctl *ctl, int argc, char **argv)
{
	static const struct option longopts[] = { CTL_GLOBAL_OPTIONS };
	const struct ctl_cmd *cmd;
	int c;

	c = ctl_getopt(ctl, argc, argv, "", longopts);
	if (c == CTL_OPT_HELP)
		return CTL_EXIT_OK;
	if (c != -1)
		return CTL_EXIT_USAGE;
	if (ctl_operands(ctl, argc, argv, 0, 1))
		return CTL_EXIT_USAGE;
	if (optind == argc) {
		print_main_usage(stdout);
		return CTL_EXIT_OK;
	}
	cmd = find_command(argv[optind]);
	if (!cmd)
		return ctl_usage_error(ctl, "unknown command '%s'", argv[optind]);
	print_cmd_usage(cmd, stdout);
	return CTL_EXIT_OK;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { CTL_GLOBAL_OPTIONS };
	struct ctl ctl = { .socket = NULL };
	int c, ret;

	/* '+': stop at the command; its own parser takes the rest. */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:s:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			ctl.socket = optarg;
			break;
		case 'J':
			ctl.json = true;
			break;
		case 'h':
			print_main_usage(stdout);
			return CTL_EXIT_OK;
		case ':':
			return ctl_usage_error(&ctl, "option '%s' needs an argument",
					       argv[optind - 1]);
		default:
			if (optopt)
				return ctl_usage_error(&ctl, "unknown option '-%c'", optopt);
			return ctl_usage_error(&ctl, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc) {
		print_main_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	ctl.cmd = find_command(argv[optind]);
	if (!ctl.cmd)
		return ctl_usage_error(&ctl, "unknown command '%s'", argv[optind]);
	if (!ctl.socket)
		ctl.socket = dt_client_socket_default();
	argc -= optind;
	argv += optind;
	optind = 0;	/* glibc: start over on the command's argv */
	ret = ctl.cmd->run(&ctl, argc, argv);
	if (fflush(stdout) || ferror(stdout)) {
		ctl_err("standard output: %s", strerror(errno));
		return CTL_EXIT_FAIL;
	}
	return ret;
}
