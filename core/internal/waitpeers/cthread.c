// A thread Go did not create that runs acquire+release pairs by calling
// into Go (goAcquire, goRelease), as a C program or Python's ctypes calls
// the C ABI's blocking lock_acquire and lock_release: the Go runtime locks
// the callback's goroutine to this thread for each call.
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "cthread.h"

extern int goAcquire(void);
extern int goRelease(void);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int todo;        // pairs of the burst asked for, 0: none
static int64_t *lat;    // each pair's latency, ns
static int done_fd;     // written one byte when a burst ends
static int failed;

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *loop(void *arg) {
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (todo == 0) pthread_cond_wait(&cv, &mu);
		int n = todo;
		pthread_mutex_unlock(&mu);
		for (int i = 0; i < n; i++) {
			int64_t t0 = now_ns();
			if (goAcquire() != 0 || goRelease() != 0) failed = 1;
			lat[i] = now_ns() - t0;
		}
		pthread_mutex_lock(&mu);
		todo = 0;
		pthread_mutex_unlock(&mu);
		char b = 1;
		(void)!write(done_fd, &b, 1);
	}
	return 0;
}

int cthread_start(int fd) {
	pthread_t t;
	done_fd = fd;
	return pthread_create(&t, 0, loop, 0);
}

int cthread_failed(void) { return failed; }

void cthread_burst(int64_t *out, int n) {
	pthread_mutex_lock(&mu);
	lat = out;
	todo = n;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}
