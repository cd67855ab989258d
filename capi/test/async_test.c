/* Asynchronous calls: callbacks, re-entrant callbacks, small user_data, the completion queue and its wake-up. */
#include "capi_test.h"

/* small_ud_cb records the user_data it got: callers pass integers too. */
static uintptr_t small_ud_seen;
static uint64_t small_ud_handle;
static void small_ud_cb(void *ud, int32_t status, uint64_t handle, const char *err) {
	(void)err;
	if (status == LOCK_OK) __atomic_store_n(&small_ud_handle, handle, __ATOMIC_SEQ_CST);
	__atomic_store_n(&small_ud_seen, (uintptr_t)ud, __ATOMIC_SEQ_CST);
}

/* ----- async ----- */

typedef struct {
	uint64_t client;
	int32_t status;
	double took_ms;
} sync_waiter_t;

static void *sync_waiter(void *arg) {
	sync_waiter_t *w = arg;
	uint64_t l = 0;
	char *err = NULL;
	double t0 = now_ms();
	w->status = lock_acquire(w->client, "busy", 10000, "{\"wait_ms\":60000}", &l, &err);
	w->took_ms = now_ms() - t0;
	if (w->status != LOCK_OK)
		CHECK(err != NULL, "err set");
	lock_string_free(err);
	return NULL;
}

/* A callback that calls back into the library: frees the lock it got, then
 * the client that is running it. */
typedef struct {
	done_t d;
	uint64_t client;
	int32_t free_lock, free_client;
} reentrant_t;

static void reentrant_cb(void *ud, int32_t status, uint64_t handle, const char *err) {
	reentrant_t *r = ud;
	r->free_lock = status == LOCK_OK ? lock_free(handle) : -1;
	r->free_client = lock_free(r->client);
	on_done(&r->d, status, handle, err);
}

void test_reentrant(void) {
	reentrant_t r;
	done_init(&r.d);
	r.client = new_client("t11:");
	char *err = NULL;
	CHECK_ST(lock_acquire_async(r.client, "re", 10000, NULL, reentrant_cb, &r, NULL, &err), LOCK_OK, &err);
	CHECK(wait_done(&r.d, (int)bound_ms()) == 1 && r.d.status == LOCK_OK, "reentrant: %d", r.d.status);
	CHECK(r.free_lock == LOCK_OK && r.free_client == LOCK_OK, "frees from a callback: %d %d", r.free_lock,
	      r.free_client);
	CHECK(settled_nodes_with("t11:re", NULL, 0) == 0, "released from the callback");
	CHECK(lock_free(r.client) == LOCK_INVALID_HANDLE, "client gone");
	done_destroy(&r.d);
}

void test_async(void) {
	uint64_t c = new_client("t6:");
	char *err = NULL;
	uint64_t op = 0;
	done_t d;

	/* acquire, extend, release */
	done_init(&d);
	CHECK_ST(lock_acquire_async(c, "async", 10000, NULL, on_done, &d, &op, &err), LOCK_OK, &err);
	CHECK(op != 0 && op < (1ULL << 53), "op handle");
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_OK && d.handle != 0, "async acquire: %d %s",
	      d.status, d.err);
	CHECK(!pthread_equal(d.thread, pthread_self()), "callback on a library thread");
	CHECK(d.err[0] == 0, "err %s", d.err);
	uint64_t l = d.handle;
	CHECK(nodes_with("t6:async", NULL) >= quorum(), "held");
	CHECK(lock_cancel(op) == LOCK_INVALID_HANDLE, "op expired after its callback");
	done_destroy(&d);

	done_init(&d);
	CHECK_ST(lock_extend_async(l, 30000, on_done, &d, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_OK && d.handle == l, "async extend: %d", d.status);
	done_destroy(&d);

	/* async acquire of a held resource without wait: NOT_ACQUIRED via callback */
	done_init(&d);
	CHECK_ST(lock_acquire_async(c, "async", 10000, NULL, on_done, &d, NULL, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_NOT_ACQUIRED && d.handle == 0 && d.err[0],
	      "async not acquired: %d", d.status);
	done_destroy(&d);

	/* a waiter is woken by the release */
	done_t w;
	done_init(&w);
	CHECK_ST(lock_acquire_async(c, "async", 10000, "{\"wait_ms\":30000}", on_done, &w, &op, &err), LOCK_OK, &err);
	POLL_UNTIL(nodes_listening("t6:async", 1) == live_nodes(), bound_ms());
	CHECK(nodes_listening("t6:async", 1) == live_nodes(), "the acquire waits (listens for releases)");
	CHECK(calls_of(&w) == 0, "still waiting");
	done_init(&d);
	CHECK_ST(lock_release_async(l, on_done, &d, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_OK && d.handle == l, "async release: %d", d.status);
	done_destroy(&d);
	CHECK(wait_done(&w, (int)bound_ms()) == 1 && w.status == LOCK_OK, "waiter got it: %d", w.status);
	CHECK(lock_cancel(op) == LOCK_INVALID_HANDLE, "cancel after success");
	done_init(&d);
	CHECK_ST(lock_release_async(l, on_done, &d, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_LOST, "second async release: %d", d.status);
	done_destroy(&d);
	CHECK(lock_free(l) == LOCK_OK, "free");
	l = w.handle;
	done_destroy(&w);

	/* cancel a waiting acquire: LOCK_CANCELED promptly, no key of its own left */
	char holder_tok[512];
	info_field(l, "token", holder_tok, sizeof holder_tok);
	int holder_on = settled_nodes_with("t6:async", holder_tok, nnodes); /* the late nodes' SETs landed */
	CHECK(holder_on >= quorum(), "held");
	done_init(&d);
	/* the last waiter stopped listening once it held the lock: so the
	 * listener counted next is this acquire's */
	POLL_UNTIL(nodes_listening("t6:async", 0) == live_nodes(), bound_ms());
	CHECK(nodes_listening("t6:async", 0) == live_nodes(), "the former waiter stopped listening");
	CHECK_ST(lock_acquire_async(c, "async", 10000, "{\"wait_ms\":60000}", on_done, &d, &op, &err), LOCK_OK, &err);
	POLL_UNTIL(nodes_listening("t6:async", 1) == live_nodes(), bound_ms());
	CHECK(nodes_listening("t6:async", 1) == live_nodes(), "the acquire to cancel waits");
	double t0 = now_ms();
	CHECK(lock_cancel(op) == LOCK_OK, "cancel");
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_CANCELED && d.handle == 0, "canceled: %d",
	      d.status);
	CHECK(now_ms() - t0 < bound_ms(), "cancel took %.0f ms", now_ms() - t0);
	CHECK(lock_cancel(op) == LOCK_INVALID_HANDLE, "second cancel");
	CHECK(nodes_with("t6:async", holder_tok) == holder_on, "the holder's key is untouched");
	done_destroy(&d);
	CHECK(lock_free(l) == LOCK_OK, "free");
	CHECK(settled_nodes_with("t6:async", NULL, 0) == 0, "no key left");

	/* cancel racing a free-resource acquire: CANCELED leaves no key, OK holds */
	int canceled = 0, won = 0;
	for (int i = 0; i < (quick ? 10 : 100); i++) {
		char res[64], key[80];
		snprintf(res, sizeof res, "cancel-race-%d", i);
		snprintf(key, sizeof key, "t6:%s", res);
		done_init(&d);
		CHECK_ST(lock_acquire_async(c, res, 10000, NULL, on_done, &d, &op, &err), LOCK_OK, &err);
		if (i % 3) /* deliberate: cancels spread over the acquire's course */
			usleep((useconds_t)(i * 10));
		int32_t cst = lock_cancel(op);
		CHECK(wait_done(&d, (int)bound_ms()) == 1, "callback");
		if (d.status == LOCK_CANCELED) {
			canceled++;
			CHECK(cst == LOCK_OK, "CANCELED only after a successful cancel");
			CHECK(settled_nodes_with(key, NULL, 0) == 0, "canceled acquire left a key (%s)", key);
		} else {
			won++;
			CHECK(d.status == LOCK_OK && cst == LOCK_INVALID_HANDLE, "not canceled: %d cancel %d", d.status, cst);
			CHECK(lock_free(d.handle) == LOCK_OK, "free");
		}
		done_destroy(&d);
	}
	printf("# cancel race: %d canceled, %d acquired first\n", canceled, won);
	CHECK(canceled > 0, "some cancel won");

	/* freeing the client cancels its pending operations and frees its locks */
	uint64_t held = 0;
	CHECK_ST(lock_acquire(c, "busy", 10000, NULL, &held, &err), LOCK_OK, &err);
	enum { NW = 20 };
	done_t ws[NW];
	for (int i = 0; i < NW; i++) {
		done_init(&ws[i]);
		CHECK_ST(lock_acquire_async(c, "busy", 10000, "{\"wait_ms\":60000}", on_done, &ws[i], NULL, &err), LOCK_OK,
		         &err);
	}
	done_t ext;
	done_init(&ext);
	sync_waiter_t sw = {c, -1, 0};
	pthread_t swt;
	pthread_create(&swt, NULL, sync_waiter, &sw);
	POLL_UNTIL(lock_debug_blocking() >= 1, bound_ms());
	CHECK(lock_debug_blocking() == 1, "the blocking acquire is under way");
	t0 = now_ms();
	CHECK(lock_free(c) == LOCK_OK, "free client with pending ops");
	pthread_join(swt, NULL);
	CHECK(sw.status == LOCK_CANCELED, "a blocking acquire ends with LOCK_CANCELED when its client is freed: %d",
	      sw.status);
	for (int i = 0; i < NW; i++) {
		CHECK(wait_done(&ws[i], (int)bound_ms()) == 1 && ws[i].status == LOCK_CANCELED, "pending op %d: %d", i,
		      ws[i].status);
		done_destroy(&ws[i]);
	}
	CHECK(now_ms() - t0 < bound_ms() * 2, "client free took %.0f ms", now_ms() - t0);
	CHECK(settled_nodes_with("t6:busy", NULL, 0) == 0, "the client's held lock was released");
	CHECK(lock_free(held) == LOCK_INVALID_HANDLE, "its lock handle went with it");
	CHECK_ST(lock_extend_async(held, 1000, on_done, &ext, &err), LOCK_INVALID_HANDLE, &err);
	done_destroy(&ext);
}

/* A user_data that is a small integer, not an address, must come back
 * unchanged: Go's runtime kills the process if it keeps such a value as a
 * pointer. */
void test_small_user_data(void) {
	uint64_t c = new_client("smallud:"), op = 0;
	char *err = NULL;
	for (uintptr_t v = 1; v <= 3; v++) {
		__atomic_store_n(&small_ud_seen, 0, __ATOMIC_SEQ_CST);
		CHECK_ST(lock_acquire_async(c, "r", 10000, "{\"wait_ms\":1000}", small_ud_cb, (void *)v, &op, &err), LOCK_OK, &err);
		POLL_UNTIL(__atomic_load_n(&small_ud_seen, __ATOMIC_SEQ_CST) != 0, 5000);
		CHECK(__atomic_load_n(&small_ud_seen, __ATOMIC_SEQ_CST) == v, "user_data %lu came back as %lu", (unsigned long)v,
		      (unsigned long)__atomic_load_n(&small_ud_seen, __ATOMIC_SEQ_CST));
		uint64_t l = __atomic_load_n(&small_ud_handle, __ATOMIC_SEQ_CST);
		CHECK(l != 0, "lock handle");
		CHECK_ST(lock_on_lost(l, small_ud_cb, (void *)(v + 10), &err), LOCK_OK, &err);
		CHECK(lock_free(l) == LOCK_OK, "free lock");
	}
	CHECK(lock_free(c) == LOCK_OK, "free client");
}

/* drain_until collects completions from the queue into got (at most max),
 * polling the queue's pipe, until want have arrived or ms pass; returns the
 * number collected. */
static int drain_until(lock_completion *got, int want, int max, int ms) {
	int fd = lock_queue_fd(), n = 0;
	double end = now_ms() + ms;
	while (n < want && now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 20) > 0) {
			char buf[64];
			while (read(fd, buf, sizeof buf) > 0) {
			}
		}
		/* Small batches: exercises a drain that leaves entries behind. */
		int32_t k;
		while (n < max && (k = lock_queue_drain(got + n, max - n < 3 ? max - n : 3)) > 0)
			n += k;
	}
	return n;
}

static int wakeups;
static void on_wakeup(void) { __atomic_add_fetch(&wakeups, 1, __ATOMIC_SEQ_CST); }

/* The wake-up function is called when a completion finds the queue empty,
 * not again until a drain emptied it. Runs before test_queue: a library
 * thread that queued a completion there may call the wake-up function late,
 * once a test set one (a spurious wake-up, which the contract allows), and
 * that would upset the exact counts here. */
void test_queue_wakeup(void) {
	lock_completion got[8];
	while (lock_queue_drain(got, 8) > 0) {
	}
	lock_queue_set_wakeup(on_wakeup);
	__atomic_store_n(&wakeups, 0, __ATOMIC_SEQ_CST);
	lock_queue_callback((void *)1, LOCK_OK, 1, NULL);
	CHECK(__atomic_load_n(&wakeups, __ATOMIC_SEQ_CST) == 1, "wake-up on the first completion: %d", wakeups);
	lock_queue_callback((void *)2, LOCK_OK, 2, NULL);
	CHECK(__atomic_load_n(&wakeups, __ATOMIC_SEQ_CST) == 1, "no wake-up while undrained: %d", wakeups);
	CHECK(lock_queue_drain(got, 8) == 2 && got[0].user_data == (void *)1 && got[1].user_data == (void *)2,
	      "both drained, in order");
	lock_queue_callback((void *)3, LOCK_LOST, 3, "m");
	CHECK(__atomic_load_n(&wakeups, __ATOMIC_SEQ_CST) == 2, "wake-up again after the drain: %d", wakeups);
	/* From a real operation, on a library thread. */
	uint64_t c = new_client("queuewake:");
	char *err = NULL;
	CHECK(lock_queue_drain(got, 8) == 1 && got[0].err && strcmp(got[0].err, "m") == 0, "third drained");
	lock_string_free(got[0].err);
	CHECK_ST(lock_acquire_async(c, "w", 10000, NULL, lock_queue_callback, (void *)4, NULL, &err), LOCK_OK, &err);
	double end = now_ms() + bound_ms();
	int n = 0;
	while (n == 0 && now_ms() < end) {
		POLL_UNTIL(__atomic_load_n(&wakeups, __ATOMIC_SEQ_CST) >= 3 || now_ms() >= end, bound_ms());
		n = lock_queue_drain(got, 8);
	}
	CHECK(__atomic_load_n(&wakeups, __ATOMIC_SEQ_CST) == 3, "wake-up from a library thread: %d", wakeups);
	CHECK(n == 1 && got[0].user_data == (void *)4, "the acquire's completion: %d, %p", n, n ? got[0].user_data : NULL);
	for (int i = 0; i < n; i++) {
		if (got[i].status == LOCK_OK)
			CHECK(lock_free(got[i].handle) == LOCK_OK, "free");
		lock_string_free(got[i].err);
	}
	lock_queue_set_wakeup(NULL);
	lock_queue_callback((void *)5, LOCK_OK, 5, NULL);
	CHECK(__atomic_load_n(&wakeups, __ATOMIC_SEQ_CST) == 3, "no wake-up once removed");
	CHECK(lock_queue_drain(got, 8) == 1, "fifth drained");
	CHECK(lock_free(c) == LOCK_OK, "free client");
}

void test_queue(void) {
	int fd = lock_queue_fd();
	CHECK(fd >= 0, "lock_queue_fd %d", fd);
	CHECK(lock_queue_fd() == fd, "lock_queue_fd is stable");
	CHECK(fd < 0 || (fcntl(fd, F_GETFL) & O_NONBLOCK), "the queue's fd is non-blocking");
	lock_completion one[4];
	CHECK(lock_queue_drain(NULL, 4) == 0, "drain(NULL)");
	CHECK(lock_queue_drain(one, 0) == 0, "drain(max 0)");
	CHECK(lock_queue_drain(one, -1) == 0, "drain(max -1)");
	CHECK(lock_queue_drain(one, 4) == 0, "nothing queued");

	/* Called directly: the message is copied, user_data comes back as is. */
	char msg[] = "direct";
	lock_queue_callback((void *)7, LOCK_LOST, 42, msg);
	msg[0] = 'X';
	lock_queue_callback(NULL, LOCK_OK, 0, NULL);
	CHECK(drain_until(one, 2, 4, 2000) == 2, "two direct completions");
	CHECK(one[0].user_data == (void *)7 && one[0].status == LOCK_LOST && one[0].handle == 42 && one[0].err &&
	          strcmp(one[0].err, "direct") == 0,
	      "first completion: %p %d %" PRIu64 " %s", one[0].user_data, one[0].status, one[0].handle,
	      one[0].err ? one[0].err : "(null)");
	CHECK(one[1].user_data == NULL && one[1].status == LOCK_OK && one[1].err == NULL, "second completion");
	lock_string_free(one[0].err);

	/* Real operations: N acquires, every completion exactly once. Their ttl
	 * outlasts the whole test on a slow machine: under valgrind, 100
	 * acquires, the drain and the check below once took 10 s, so that every
	 * 10 s lock had expired before its release (0 of 100 released). */
	enum { N = 100 };
	uint64_t c = new_client("queue:");
	char *err = NULL;
	static char marks[N];
	static lock_completion got[2 * N];
	memset(marks, 0, sizeof marks);
	int accepted = 0;
	for (int i = 0; i < N; i++) {
		char res[32];
		snprintf(res, sizeof res, "r%d", i);
		if (CHECK_ST(lock_acquire_async(c, res, 60000, NULL, lock_queue_callback, &marks[i], NULL, &err), LOCK_OK, &err))
			accepted++;
	}
	int n = drain_until(got, accepted, 2 * N, (int)bound_ms() * 4);
	CHECK(n == accepted, "%d of %d acquire completions", n, accepted);
	uint64_t locks[N] = {0};
	int ok = 0;
	for (int i = 0; i < n; i++) {
		char *m = got[i].user_data;
		int idx = (int)(m - marks);
		if (idx < 0 || idx >= N || marks[idx]++ != 0) {
			CHECK(0, "completion %d: unknown or repeated user_data %p", i, got[i].user_data);
			continue;
		}
		if (got[i].status == LOCK_OK) {
			CHECK(got[i].handle != 0 && got[i].err == NULL, "OK completion with a handle and no message");
			locks[idx] = got[i].handle;
			ok++;
		} else {
			/* Possible on a loaded machine (valgrind): a node timeout. */
			CHECK(got[i].handle == 0 && got[i].err != NULL, "a failed completion has a message, no handle");
		}
		lock_string_free(got[i].err);
	}
	CHECK(ok > 0, "%d of %d acquired", ok, accepted);
	if (ok < accepted)
		printf("# queue: %d of %d acquires failed (node timeouts on a loaded machine)\n", accepted - ok, accepted);

	/* A failure carries its message: r0 is held, one attempt only. */
	if (locks[0]) {
		CHECK_ST(lock_acquire_async(c, "r0", 10000, NULL, lock_queue_callback, NULL, NULL, &err), LOCK_OK, &err);
		CHECK(drain_until(one, 1, 1, (int)bound_ms()) == 1, "NOT_ACQUIRED completion");
		CHECK((one[0].status == LOCK_NOT_ACQUIRED || one[0].status == LOCK_UNAVAILABLE) && one[0].handle == 0 && one[0].err && strlen(one[0].err) > 0,
		      "NOT_ACQUIRED with a message: %d %s", one[0].status, one[0].err ? one[0].err : "(null)");
		lock_string_free(one[0].err);
	}

	/* Releases through the queue, then every handle freed. */
	int rel = 0;
	for (int i = 0; i < N; i++)
		if (locks[i] && CHECK_ST(lock_release_async(locks[i], lock_queue_callback, &marks[i], &err), LOCK_OK, &err))
			rel++;
	n = drain_until(got, rel, 2 * N, (int)bound_ms() * 4);
	CHECK(n == rel, "%d of %d release completions", n, rel);
	int relok = 0, relshown = 0;
	for (int i = 0; i < n; i++) {
		if (got[i].status == LOCK_OK)
			relok++;
		else {
			CHECK(got[i].err != NULL, "a failed release has a message");
			if (relshown++ < 3) /* why, should the check below fail */
				printf("# queue: a release failed: status %d: %s\n", got[i].status, got[i].err ? got[i].err : "(null)");
		}
		lock_string_free(got[i].err);
	}
	CHECK(relok > 0, "%d of %d released", relok, rel);
	for (int i = 0; i < N; i++)
		if (locks[i])
			CHECK(lock_free(locks[i]) == LOCK_OK, "free lock %d", i);
	CHECK(lock_free(c) == LOCK_OK, "free client");
	CHECK(lock_queue_drain(one, 4) == 0, "queue empty at the end");
}
