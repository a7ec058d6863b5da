/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench.h - shared helpers of dt-bench: options, timing, a fixed-seed PRNG
 * and the output rows, in human and JSON-lines form.
 *
 * A section is a function taking the options; it prints its rows through
 * the bench_*() helpers below and returns 0, or 1 when something was
 * functionally wrong (a lookup found the wrong entry, a count is off).
 * Slow numbers are never an error.
 */
#ifndef DT_BENCH_H
#define DT_BENCH_H

#include <pthread.h>
#include <sched.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bench_opts {
	double scale;		/* multiplies the default counts */
	unsigned reps;		/* repetitions; each figure is their median */
	bool json;		/* JSON lines instead of a table */
	FILE *out;		/* where rows go */
};

/* The sections; each is one line in the table of bench.c. */
int bench_tree(const struct bench_opts *o);
int bench_tree_judy(const struct bench_opts *o);
int bench_mapping(const struct bench_opts *o);
int bench_daemon(const struct bench_opts *o);
int bench_load(const struct bench_opts *o);
int bench_recovery(const struct bench_opts *o);
int bench_track(const struct bench_opts *o);
int bench_scale(const struct bench_opts *o);

/* Timing. */

/**
 * bench_now_ns() - A CLOCK_MONOTONIC timestamp.
 *
 * Return: Nanoseconds since an arbitrary origin.
 */
uint64_t bench_now_ns(void);

/**
 * bench_median() - The median of a set of samples.
 * @v: The samples; reordered.
 * @n: How many, at least 1.
 *
 * Return: The middle sample, or the mean of the two middle ones.
 */
double bench_median(double *v, unsigned n);

/*
 * One repetition of a measurement: do the work, setting *ns to the time of
 * the part being measured and *ops to the number of operations in it.
 * Untimed set-up and clean-up may happen around the timed part.
 * Return 0, or -1 after reporting a functional failure.
 */
typedef int (*bench_rep_fn)(void *arg, uint64_t *ns, uint64_t *ops);

/* A measurement for bench_measure_jobs(). */
struct bench_job {
	bench_rep_fn fn;	/* one repetition */
	void *arg;		/* passed to fn */
	double ns_per_op;	/* out: the median */
	double min, max;	/* out: the fastest and slowest repetition */
};

/**
 * bench_measure_jobs() - Measure several things, interleaving their repetitions.
 * @o: The options.
 * @jobs: The measurements; each one's ns_per_op is set.
 * @n: How many.
 *
 * Runs repetition 1 of every job, then repetition 2 of every job, and so on,
 * so that a drift of the machine's speed spreads over all of them and their
 * ratios stay meaningful.
 *
 * Return: 0, or -1 as soon as a repetition fails.
 */
int bench_measure_jobs(const struct bench_opts *o, struct bench_job *jobs, unsigned n);

/**
 * bench_measure() - Run a repetition o->reps times and take the median.
 * @o: The options.
 * @fn: One repetition.
 * @arg: Passed to @fn.
 * @ns_per_op: Set to the median of the repetitions' ns per operation.
 *
 * Return: 0, or -1 as soon as a repetition fails.
 */
int bench_measure(const struct bench_opts *o, bench_rep_fn fn, void *arg, double *ns_per_op);

/**
 * bench_count() - Scale a default count.
 * @o: The options.
 * @n: The count at scale 1.
 * @min: The smallest count returned.
 *
 * Return: @n * o->scale rounded, at least @min.
 */
uint64_t bench_count(const struct bench_opts *o, uint64_t n, uint64_t min);

/*
 * Defeats dead-code elimination: measured loops add what they find into a
 * local sum and store it here once.
 */
extern volatile uint64_t bench_sink;

/* A fixed-seed PRNG: splitmix64. */

struct bench_rng {
	uint64_t state;
};

static inline uint64_t bench_rand(struct bench_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A number in [0, @n), @n > 0; the bias of the multiply is negligible here. */
static inline uint64_t bench_rand_below(struct bench_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)bench_rand(r) * n) >> 64);
}

/**
 * bench_shuffle() - Shuffle an array in place (Fisher-Yates).
 * @v: The array.
 * @n: Its length.
 * @r: The PRNG.
 */
void bench_shuffle(uint64_t *v, uint64_t n, struct bench_rng *r);

/**
 * bench_alloc() - calloc() that reports failure.
 * @n: Elements.
 * @size: Size of one.
 * @what: Named in the message on failure.
 *
 * Return: Zeroed memory, or NULL after a message on stderr.
 */
void *bench_alloc(size_t n, size_t size, const char *what);

/* Output. */

/**
 * bench_section() - Start a section's output.
 * @o: The options.
 * @name: The section's name, written into every JSON row that follows.
 */
void bench_section(const struct bench_opts *o, const char *name);

/**
 * bench_note() - A line of explanation (the workload, the parameters).
 * @o: The options.
 * @fmt: printf format.
 *
 * Human form "# text"; JSON form {"section":..,"note":"text"}.
 */
void bench_note(const struct bench_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * bench_row() - A timing result.
 * @o: The options.
 * @name: What was measured, e.g. "dense.lookup_hit".
 * @ns_per_op: The median ns per operation.
 * @fmt: printf format of a free-form extra column, or NULL.
 */
void bench_row(const struct bench_opts *o, const char *name, double ns_per_op,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/**
 * bench_value() - A non-timing result (bytes per entry, node counts).
 * @o: The options.
 * @name: What it is.
 * @value: The figure.
 * @unit: Its unit, e.g. "bytes/entry".
 * @fmt: printf format of a free-form extra column, or NULL.
 */
void bench_value(const struct bench_opts *o, const char *name, double value, const char *unit,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/**
 * bench_target() - A ratio with the target it is held against.
 * @o: The options.
 * @name: What the ratio is.
 * @ratio: Its value.
 * @at_most: true for a target "ratio <= @target", false for ">= @target".
 * @target: The target.
 *
 * Prints "ok" or "MISSED"; missing a target is not an error.
 *
 * Return: true if the target is met.
 */
bool bench_target(const struct bench_opts *o, const char *name, double ratio, bool at_most,
		  double target);

/**
 * bench_cpu_pair() - The first two CPUs the calling thread may run on.
 * @client: Receives the first, for the timing thread.
 * @server: Receives the second, for the process it talks to.
 * Return: 0, -ENODEV with fewer than two, or a negative errno.
 */
int bench_cpu_pair(int *client, int *server);

/**
 * bench_pin_thread() - Keep the calling thread on @cpu.
 * @cpu: The CPU.
 * @saved: Receives the thread's affinity before, for bench_unpin_thread().
 * Return: 0 or a negative errno.
 */
int bench_pin_thread(int cpu, cpu_set_t *saved);

/** bench_unpin_thread() - Give the calling thread back @saved.  Return: 0 or -errno. */
int bench_unpin_thread(const cpu_set_t *saved);

/**
 * bench_pin_process() - Set the affinity of every thread @pid has now.
 * @pid: The process (threads it creates later inherit its creator's).
 * @set: The CPUs.
 * Return: 0, or the first negative errno (the other threads are still set).
 */
int bench_pin_process(pid_t pid, const cpu_set_t *set);

/** bench_pin_process_cpu() - bench_pin_process() onto the one CPU @cpu. */
int bench_pin_process_cpu(pid_t pid, int cpu);

/**
 * bench_fail() - Report a functional failure on stderr.
 * @fmt: printf format; the message is prefixed with "dt-bench: <section>: ".
 */
void bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * bench_wait_go() - Sleep until *@go (under @lock) is no longer 0, the start
 * signal of a benchmark's threads.  Return: its value, 1 run or -1 give up.
 */
static inline int bench_wait_go(pthread_mutex_t *lock, pthread_cond_t *cond, const int *go)
{
	int v;

	pthread_mutex_lock(lock);
	while (!*go)
		pthread_cond_wait(cond, lock);
	v = *go;
	pthread_mutex_unlock(lock);
	return v;
}

#endif /* DT_BENCH_H */
