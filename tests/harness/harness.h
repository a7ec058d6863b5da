/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * harness.h - the one daemon harness of the tests and of dt-bench: a
 * private mkdtemp() directory holding daxtrackd's configuration, socket,
 * log (its stdout and stderr), flush log and state directory; start the
 * daemon and wait until its socket accepts a connection; stop it (a signal,
 * then SIGKILL after a timeout) and always reap it; remove the directory.
 *
 * No daemon outlives its test: a daemon started from the main thread gets
 * PR_SET_PDEATHSIG(SIGKILL) (the test dies, the daemon dies, whatever
 * killed the test), every harness is stopped with SIGKILL and cleaned up at
 * exit(), and dth_watchdog() kills them all when a test runs too long.
 * (PR_SET_PDEATHSIG follows the thread that forked: a daemon started from
 * another thread relies on exit() and the watchdog.)
 *
 * The library prints nothing: functions return a negative errno, and the
 * caller says what failed.
 */
#ifndef DT_HARNESS_H
#define DT_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit statuses of the daemon's child when a hook fails (see struct dth_options). */
#define DTH_SETUP_FAILED 120
#define DTH_POST_FAILED 121

struct dth;

/**
 * struct dth_options - How to run the daemon; all fields may be zero.
 * @exe: The daemon; NULL: the daxtrackd of the build tree.
 * @tag: The directory is <tmp_base>/dt-<tag>-XXXXXX; NULL: "daemon".
 * @tmp_base: Where the directory is made; NULL: /tmp.
 * @dir_mode: The directory's mode (0755 lets another uid reach the
 *	      socket); 0: mkdtemp()'s 0700.
 * @no_flush_log: Do not pass --flush-log to dth_start().
 * @start_timeout_ms: How long dth_start() waits for the socket; 0: 30 s.
 * @stop_timeout_ms: How long dth_stop() waits before SIGKILL; 0: 30 s.
 * @setup: Run in the daemon's child before it execs (before the log is
 *	   opened, so its messages reach the test's stderr): mounts, the
 *	   umask, the environment.  Non-zero: the child exits
 *	   DTH_SETUP_FAILED.
 * @post: If set, the child forks the daemon, waits for it, runs @post
 *	  where the daemon ran (its mount namespace), and exits with the
 *	  daemon's status, or DTH_POST_FAILED if @post returns non-zero.
 * @arg: Passed to @setup and @post.
 */
struct dth_options {
	const char *exe;
	const char *tag;
	const char *tmp_base;
	mode_t dir_mode;
	bool no_flush_log;
	unsigned start_timeout_ms;
	unsigned stop_timeout_ms;
	int (*setup)(const struct dth *h, void *arg);
	int (*post)(const struct dth *h, void *arg);
	void *arg;
};

/**
 * struct dth - One daemon and its directory.
 * @dir: The private directory.
 * @conf: <dir>/daxtrackd.conf, written by dth_config().
 * @sock: <dir>/sock; a test may point it elsewhere before dth_start().
 * @log: <dir>/daemon.log: the daemon's stdout and stderr, appended.
 * @flush_log: <dir>/flush.log (--flush-log).
 * @state: <dir>/state, the configuration's state_dir (the daemon makes it).
 * @run: <dir>/run, the configuration's runtime_dir (the daemon makes it;
 *	 the shared dirty logs are in its logs/).
 * @exe: The daemon's executable.
 * @pid: The running daemon, or 0.
 * @start_status: How a daemon that did not start exited (see dth_status()),
 *		  or -1.
 * @opt: The options given to dth_init(); a test may change the hooks
 *	  between starts.
 */
struct dth {
	char dir[PATH_MAX];
	char conf[PATH_MAX];
	char sock[PATH_MAX];
	char log[PATH_MAX];
	char flush_log[PATH_MAX];
	char state[PATH_MAX];
	char run[PATH_MAX];
	const char *exe;
	pid_t pid;
	int start_status;
	struct dth_options opt;
};

/**
 * struct dth_region - A region section of the configuration.
 * @name: The region's name.
 * @size: Its size ("8M"); NULL: no size line (a device).
 * @path: Its file; NULL: <dir>/<name>.region.
 * @extra: More lines of the section ("create = yes\n"), or NULL.
 */
struct dth_region {
	const char *name;
	const char *size;
	const char *path;
	const char *extra;
};

/**
 * dth_init() - Make the private directory and name the files in it.
 * @h: Filled in; registered so that exit() and the watchdog kill its daemon.
 * @o: The options (copied; the strings must outlive @h), or NULL.
 *
 * Context: Not thread-safe; at most 8 harnesses at once.
 * Return: 0, -ENAMETOOLONG, -ENOSPC (too many harnesses), or mkdtemp()'s
 * negative errno.
 */
int dth_init(struct dth *h, const struct dth_options *o);

/**
 * dth_path() - A path in the harness's directory.
 * @h: The harness.
 * @buf: PATH_MAX bytes: <dir>/<name>.
 * @name: The name.
 */
void dth_path(const struct dth *h, char *buf, const char *name);

/**
 * dth_config() - Write the configuration file.
 * @h: The harness.
 * @daemon_lines: Lines of the [daemon] section after "state_dir = <state>"
 *		  and "runtime_dir = <run>", or NULL.
 * @regions: @nr region sections, or NULL.
 * @nr: How many.
 * @sections: Text appended verbatim (more sections), or NULL.
 *
 * A running daemon reads it again on SIGHUP.
 *
 * Return: 0, or a negative errno.
 */
int dth_config(const struct dth *h, const char *daemon_lines, const struct dth_region *regions,
	       unsigned nr, const char *sections);

/**
 * dth_connect() - Connect to a daemon's socket.
 * @sock: Its path.
 *
 * Return: A SOCK_SEQPACKET descriptor (close-on-exec), or a negative errno.
 */
int dth_connect(const char *sock);

/**
 * dth_spawn() - Run a program as the harness runs its daemon.
 * @h: The harness (its log and hooks).
 * @argv: The program and its arguments, NULL-terminated.
 *
 * The child runs @h's setup hook, appends its stdout and stderr to the log
 * and execs @argv (through @h's post hook if set); from the main thread it
 * dies with its parent.  @h->pid is left alone.
 *
 * Return: The child's pid, or a negative errno.
 */
pid_t dth_spawn(const struct dth *h, char *const argv[]);

/**
 * dth_wait_ready() - Wait until @h->sock accepts a connection.
 * @h: The harness (its start timeout).
 * @pid: The process that should open it.
 * @status: Set to @pid's wait status if it exited (or was killed at the
 *	    timeout); may be NULL.
 *
 * A process neither serving nor gone at the timeout is killed and reaped.
 *
 * Return: 0 once connectable; -ECHILD if @pid exited; -ETIMEDOUT.
 */
int dth_wait_ready(const struct dth *h, pid_t pid, int *status);

/**
 * dth_launch() - Start the daemon without waiting for it.
 * @h: The harness.
 * @extra: More arguments, NULL-terminated, or NULL.
 *
 * Runs "<exe> --foreground --config <conf> --socket <sock> [--flush-log
 * <flush_log>] <extra>" with dth_spawn(); @h->pid is left alone (a test
 * that kills a daemon during its start-up reaps it itself).
 *
 * Return: Its pid, or a negative errno.
 */
pid_t dth_launch(const struct dth *h, const char *const *extra);

/**
 * dth_start() - Start the daemon and wait until it serves.
 * @h: The harness.
 * @extra: As for dth_launch().
 *
 * Return: 0 with @h->pid set; -ECHILD (it exited: @h->start_status) or
 * -ETIMEDOUT (killed) or a fork error, with @h->pid 0.
 */
int dth_start(struct dth *h, const char *const *extra);

/**
 * dth_run() - Run the daemon to completion.
 * @h: The harness (its log).
 * @args: Its arguments, exactly (without the program), NULL-terminated.
 *
 * Return: Its status (see dth_status()), or a negative errno.
 */
int dth_run(const struct dth *h, const char *const *args);

/**
 * dth_alive() - Whether the daemon still runs.
 * @h: The harness.
 * @status: Set to its wait status if it died (then reaped, @h->pid 0).
 *
 * Return: true while it runs.
 */
bool dth_alive(struct dth *h, int *status);

/**
 * dth_stop() - Stop the daemon and reap it.
 * @h: The harness.
 * @sig: The signal to send (0: none, it was sent already).
 *
 * After the stop timeout the daemon gets SIGKILL.
 *
 * Return: Its status (see dth_status()), or -1 if none ran.
 */
int dth_stop(struct dth *h, int sig);

/**
 * dth_kill() - SIGKILL the daemon, if one runs, and reap it.
 * @h: The harness.
 */
void dth_kill(struct dth *h);

/**
 * dth_restart() - dth_stop(SIGTERM), then dth_start() with the same
 * configuration and state.
 * @h: The harness.
 * @extra: As for dth_start().
 *
 * Return: As dth_start(); -EIO if the daemon did not stop cleanly (exit 0).
 */
int dth_restart(struct dth *h, const char *const *extra);

/**
 * dth_cleanup() - Kill the daemon, remove the directory, unregister.
 * @h: The harness, initialised or zeroed.
 *
 * With $DT_TEST_KEEP set the directory stays (and is printed on stderr).
 */
void dth_cleanup(struct dth *h);

/**
 * dth_show_log() - Copy the daemon's log to @out under a title line.
 * @h: The harness.
 * @out: Where.
 */
void dth_show_log(const struct dth *h, FILE *out);

/**
 * dth_status() - A wait status as one number.
 * @wstatus: From waitpid().
 *
 * Return: The exit code, or 128 + the signal that killed the process.
 */
int dth_status(int wstatus);

/**
 * dth_kill_all() - SIGKILL every registered harness's daemon.
 *
 * Context: Async-signal-safe: for a watchdog or a fatal signal handler.
 */
void dth_kill_all(void);

/**
 * dth_watchdog() - Kill every daemon and _exit(2) after @seconds.
 * @seconds: The test's time limit.
 *
 * Installs dth_on_alarm() for SIGALRM and calls alarm(); a test with
 * processes of its own installs a handler that kills them and calls
 * dth_on_alarm().
 */
void dth_watchdog(unsigned seconds);

/** dth_on_alarm() - The watchdog's handler: dth_kill_all(), a message, _exit(2). */
void dth_on_alarm(int sig);

#endif /* DT_HARNESS_H */
