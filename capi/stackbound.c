// The main thread's stack bounds, looked up once.
//
// Why: every call into a Go export from a thread the Go runtime did not
// create runs runtime.callbackUpdateSystemStack, which, unless it already
// knows that the stack pointer lies inside the thread's stack, asks glibc for
// the thread's stack (x_cgo_getstackbound -> pthread_getattr_np). Hosts that
// run native calls on a stack of their own (koffi does, on every call) never
// satisfy that test, so the question is asked on every call. For the
// process's main thread glibc answers it by reading the rlimits and parsing
// /proc/self/maps: about 0.1-0.2 ms per call, on a Node event loop. For other
// threads the answer comes from the thread descriptor and is cheap.
//
// The library is linked with -Wl,--wrap=pthread_getattr_np (see the cgo
// LDFLAGS in stackbound.go), so the runtime's reference lands here. For the
// main thread asking about itself, the first answer is kept and handed out
// again as a fresh attribute object with the same stack address and size;
// every other case goes to glibc. The main thread's stack does not move;
// only its reported size could (setrlimit, a mapping placed below it), and
// the Go runtime uses the bounds only as a plausibility check against its
// stack pointer, falling back to an estimate when they do not contain it.
//
// The attribute object is never copied from glibc's: the main thread's one
// owns a CPU-set allocation that pthread_attr_destroy frees.
#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

int __real_pthread_getattr_np(pthread_t thread, pthread_attr_t *attr);
int __wrap_pthread_getattr_np(pthread_t thread, pthread_attr_t *attr)
	__attribute__((visibility("hidden")));

// Only the main thread reads or writes these (see is_main_thread), so they
// need no synchronization. cached_pid makes a forked child, whose main thread
// is another thread of another stack, look its bounds up again.
static pid_t cached_pid;
static void *cached_addr;
static size_t cached_size;

// Whether the calling thread is the process's initial thread, asked of the
// kernel once per thread: getpid and gettid are real system calls, and this
// runs on every call into a Go export (two syscalls per call were about a
// tenth of a Node acquire+release pair on one node). A thread keeps its
// identity; a forked child's thread (where it is the initial thread now)
// asks again (at_fork_child).
static __thread int tl_main = -1; // -1: not asked yet, 0: no, 1: yes
static __thread pid_t tl_pid;

static void at_fork_child(void) {
	tl_main = -1;
}

__attribute__((constructor)) static void stackbound_init(void) {
	pthread_atfork(NULL, NULL, at_fork_child);
}

// is_main_thread: the calling thread is the process's initial thread; *pid
// is the process id (when it is).
static int is_main_thread(pid_t *pid) {
	if (tl_main < 0) {
		tl_pid = getpid();
		tl_main = (pid_t)syscall(SYS_gettid) == tl_pid;
	}
	*pid = tl_pid;
	return tl_main;
}

int __wrap_pthread_getattr_np(pthread_t thread, pthread_attr_t *attr) {
	pid_t pid = 0;
	if (attr == NULL || !pthread_equal(thread, pthread_self()) || !is_main_thread(&pid)) {
		return __real_pthread_getattr_np(thread, attr);
	}
	if (cached_pid != pid) {
		pthread_attr_t real;
		int rc = __real_pthread_getattr_np(thread, &real);
		if (rc != 0) {
			return rc;
		}
		void *addr = NULL;
		size_t size = 0;
		rc = pthread_attr_getstack(&real, &addr, &size);
		pthread_attr_destroy(&real);
		if (rc != 0 || addr == NULL || size == 0) {
			// Nothing worth keeping: let glibc answer the caller directly.
			return __real_pthread_getattr_np(thread, attr);
		}
		cached_addr = addr;
		cached_size = size;
		cached_pid = pid;
	}
	int rc = pthread_attr_init(attr);
	if (rc != 0) {
		return rc;
	}
	rc = pthread_attr_setstack(attr, cached_addr, cached_size);
	if (rc != 0) {
		pthread_attr_destroy(attr);
		return __real_pthread_getattr_np(thread, attr);
	}
	return 0;
}
