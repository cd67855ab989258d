// A completion queue for hosts with an event loop (extension; liblock.h,
// "COMPLETION QUEUE").
//
// Why: a host such as Node can only run JS on its main thread. With a
// callback per completion (koffi's registered callbacks), every completion
// makes the library thread hand the call to the main thread and wait there
// until JS has run. Here a completion is a struct appended under a mutex;
// only the completion that finds the queue empty wakes the host (a wake-up
// function, and a byte on a pipe if one was asked for), and the host drains
// everything that has arrived by then with one call. Under load, many
// completions share one wake-up, and the other library threads never wait
// for the host.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "liblock.h" // the queue's public declarations

static pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;
static lock_completion *ring;   // capacity entries; head is the oldest
static size_t capacity, head, count;
static int notified;            // a byte was written since the last drain emptied the queue
static int pipe_r = -1, pipe_w = -1;
static pthread_once_t pipe_once = PTHREAD_ONCE_INIT;
static void (*wakeup_fn)(void); // read and written atomically

void lock_queue_set_wakeup(void (*fn)(void)) {
	__atomic_store_n(&wakeup_fn, fn, __ATOMIC_SEQ_CST);
}

static void open_pipe(void) {
	int fds[2];
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0) {
		pipe_r = fds[0];
		pipe_w = fds[1];
	}
}

int32_t lock_queue_fd(void) {
	pthread_once(&pipe_once, open_pipe);
	return pipe_r;
}

// grow doubles the ring (queue_mu held); 0 on success.
static int grow(void) {
	size_t ncap = capacity ? capacity * 2 : 256;
	lock_completion *n = malloc(ncap * sizeof *n);
	if (n == NULL) {
		return -1;
	}
	for (size_t i = 0; i < count; i++) {
		n[i] = ring[(head + i) % capacity];
	}
	free(ring);
	ring = n;
	capacity = ncap;
	head = 0;
	return 0;
}

void lock_queue_callback(void *user_data, int32_t status, uint64_t handle, const char *err) {
	char *msg = err ? strdup(err) : NULL;
	pthread_mutex_lock(&queue_mu);
	while (count == capacity && grow() != 0) {
		// Out of memory: a completion must never be dropped (its operation
		// would stay pending and a granted lock would leak), so wait for
		// memory rather than lose it.
		pthread_mutex_unlock(&queue_mu);
		nanosleep(&(struct timespec){0, 1000000}, NULL);
		pthread_mutex_lock(&queue_mu);
	}
	lock_completion *c = &ring[(head + count) % capacity];
	c->user_data = user_data;
	c->status = status;
	c->reserved = 0;
	c->handle = handle;
	c->err = msg;
	count++;
	int wake = !notified;
	notified = 1;
	pthread_mutex_unlock(&queue_mu);
	if (!wake) {
		return;
	}
	if (pipe_w >= 0) {
		// One byte per empty->non-empty transition; EAGAIN (a full pipe)
		// means the reader has bytes to read anyway.
		ssize_t r;
		do {
			r = write(pipe_w, "", 1);
		} while (r < 0 && errno == EINTR);
	}
	void (*fn)(void) = __atomic_load_n(&wakeup_fn, __ATOMIC_SEQ_CST);
	if (fn != NULL) {
		fn();
	}
}

int32_t lock_queue_drain(lock_completion *out, int32_t max) {
	if (out == NULL || max <= 0) {
		return 0;
	}
	pthread_mutex_lock(&queue_mu);
	int32_t n = 0;
	while (n < max && count > 0) {
		out[n++] = ring[head];
		head = (head + 1) % capacity;
		count--;
	}
	if (count == 0) {
		notified = 0;
	}
	pthread_mutex_unlock(&queue_mu);
	return n;
}
