// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util/sigbus.c - per-thread recovery points for SIGBUS (see sigbus.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "sigbus.h"

#define GUARD_PAGE 4096UL

/*
 * initial-exec: a load at a fixed offset from the thread pointer, no
 * __tls_get_addr() call in libdaxtrack-client (a library loaded with the
 * program; dlopen() of it takes a few bytes of the static TLS surplus).
 */
static __thread struct dt_sigbus_jmp *armed __attribute__((tls_model("initial-exec")));
static struct sigaction prev_action;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_error;

/* Not ours: what would have happened without us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	if (prev_action.sa_flags & SA_SIGINFO) {
		prev_action.sa_sigaction(sig, si, uc);
		return;
	}
	if (prev_action.sa_handler != SIG_DFL && prev_action.sa_handler != SIG_IGN) {
		prev_action.sa_handler(sig);
		return;
	}
	/* Sent (kill(2)): ignored if it was, else the default action. */
	if (si->si_code <= 0) {
		if (prev_action.sa_handler == SIG_IGN)
			return;
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	/* A fault: it re-executes under the default action, fatal (an ignored one too). */
	signal(sig, SIG_DFL);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	struct dt_sigbus_jmp *j = armed;
	uintptr_t a = (uintptr_t)si->si_addr;
	sigset_t bus;

	if (j && si->si_code > 0 && a >= j->lo && a < j->hi) {
		armed = NULL;
		j->addr = a;
		j->code = si->si_code;
		/*
		 * SA_NODEFER leaves SIGBUS unblocked, but a runtime that wraps
		 * handlers (ThreadSanitizer's) may block it around ours: the
		 * jump restores no mask (sigsetjmp(env, 0)), and a SIGBUS
		 * raised while blocked kills.  On the fault path only.
		 */
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		siglongjmp(j->env, 1);
	}
	chain(sig, si, uc);
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &prev_action))
		install_error = -errno;
}

int dt_sigbus_install(void)
{
	pthread_once(&install_once, install);
	return install_error;
}

/* Make @j this thread's armed point; the one before.  Inline in dt_sigbus_call(). */
static inline struct dt_sigbus_jmp *swap_armed(struct dt_sigbus_jmp *j)
{
	struct dt_sigbus_jmp *old = armed;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	armed = j;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return old;
}

static inline void set_range(struct dt_sigbus_jmp *j, const void *addr, size_t len)
{
	j->lo = (uintptr_t)addr & ~(GUARD_PAGE - 1);
	j->hi = ((uintptr_t)addr + len + GUARD_PAGE - 1) & ~(GUARD_PAGE - 1);
}

struct dt_sigbus_jmp *dt_sigbus_arm(struct dt_sigbus_jmp *j, const void *addr, size_t len)
{
	set_range(j, addr, len);
	return swap_armed(j);
}

struct dt_sigbus_jmp *dt_sigbus_rearm(struct dt_sigbus_jmp *j)
{
	return swap_armed(j);
}

/* @old is not changed after sigsetjmp(): it needs no volatile. */
int dt_sigbus_call(void (*fn)(const void *, size_t), const void *addr, size_t len, uintptr_t *fault)
{
	struct dt_sigbus_jmp j, *old;

	set_range(&j, addr, len);
	old = swap_armed(&j);
	if (sigsetjmp(j.env, 0)) {
		swap_armed(old);
		if (fault)
			*fault = j.addr;
		return j.code == BUS_MCEERR_AR ? -EIO : -EFAULT;
	}
	fn(addr, len);
	swap_armed(old);
	return 0;
}
