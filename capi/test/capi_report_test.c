/*
 * capi_report_test.c -- what liblock.so tells a C program about its own
 * work: nothing on the process's stderr (a lost lock is delivered through
 * lock_on_lost and the status codes), and the report stream of
 * lock_client_set_report when the program asks for it. Run by
 * capi/test/run.sh under build/redisnodes (LIBLOCK_NODES: comma-separated
 * redis:// URLs), as its own program so that it redirects its stderr freely.
 *
 * Prints "N passed, M failed" last; exits non-zero on any failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "liblock.h"

static int passed, failed;
static pthread_mutex_t check_mu = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(cond, ...) check_((cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
static int check_(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
	pthread_mutex_lock(&check_mu);
	if (ok) {
		passed++;
	} else {
		failed++;
		va_list ap;
		va_start(ap, fmt);
		fprintf(stderr, "FAIL %s:%d: %s: ", file, line, expr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		va_end(ap);
	}
	pthread_mutex_unlock(&check_mu);
	return ok;
}

/* CHECK_ST checks a status, then frees the message. */
#define CHECK_ST(got, want, errp)                                                                           \
	do {                                                                                                \
		int32_t st_ = (got);                                                                        \
		CHECK(st_ == (want), "status %d, want %d, err=%s", st_, (want), *(errp) ? *(errp) : "(null)"); \
		lock_string_free(*(errp));                                                                  \
		*(errp) = NULL;                                                                             \
	} while (0)

static double now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms) {
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
	}
}

/* POLL_UNTIL(cond, ms): checks cond every 2 ms until it holds or ms pass;
 * the caller then CHECKs cond. */
#define POLL_UNTIL(cond, ms) \
	for (double poll_end_ = now_ms() + (ms); !(cond) && now_ms() < poll_end_;) sleep_ms(2)

#define MAXN 16
static int nnodes;
static char *node_urls[MAXN];
static int node_ports[MAXN];
static const int node_timeout_ms = 200;

static void parse_env(void) {
	const char *urls = getenv("LIBLOCK_NODES");
	if (!urls) {
		fprintf(stderr, "run under build/redisnodes: LIBLOCK_NODES is required\n");
		exit(2);
	}
	char *u = strdup(urls), *save = NULL;
	for (char *t = strtok_r(u, ",", &save); t && nnodes < MAXN; t = strtok_r(NULL, ",", &save)) {
		node_urls[nnodes] = strdup(t);
		const char *colon = strrchr(t, ':');
		node_ports[nnodes] = colon ? atoi(colon + 1) : 0;
		nnodes++;
	}
	free(u);
}

/* rset sets key on node i over plain TCP (RESP); 0 on +OK. */
static int rset(int i, const char *key, const char *val) {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	struct timeval tv = {2, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_in sa = {0};
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)node_ports[i]);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	char buf[1024], out[64] = {0};
	int n = snprintf(buf, sizeof buf, "*3\r\n$3\r\nSET\r\n$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(key), key,
	                 strlen(val), val);
	int ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && write(fd, buf, (size_t)n) == n &&
	         read(fd, out, sizeof out - 1) > 0 && strncmp(out, "+OK", 3) == 0;
	close(fd);
	return ok ? 0 : -1;
}

static uint64_t new_client(const char *prefix) {
	char js[4096];
	int n = snprintf(js, sizeof js, "{\"nodes\":[");
	for (int i = 0; i < nnodes; i++)
		n += snprintf(js + n, sizeof js - (size_t)n, "%s\"%s\"", i ? "," : "", node_urls[i]);
	snprintf(js + n, sizeof js - (size_t)n, "],\"key_prefix\":\"%s\",\"node_timeout_ms\":%d}", prefix, node_timeout_ms);
	uint64_t c = 0;
	char *err = NULL;
	CHECK_ST(lock_client_new(js, &c, &err), LOCK_OK, &err);
	return c;
}

/* A counted callback. */
typedef struct {
	pthread_mutex_t mu;
	int calls;
	int32_t status;
} seen_t;

static void on_seen(void *ud, int32_t status, uint64_t handle, const char *err) {
	(void)handle;
	(void)err;
	seen_t *s = ud;
	pthread_mutex_lock(&s->mu);
	s->calls++;
	s->status = status;
	pthread_mutex_unlock(&s->mu);
}

static int calls_of(seen_t *s) {
	pthread_mutex_lock(&s->mu);
	int c = s->calls;
	pthread_mutex_unlock(&s->mu);
	return c;
}

/* ---------- a lost lock writes nothing on stderr ---------- */

/* The loss of a lock is the program's to report: lock_on_lost and the
 * LOCK_LOST of lock_extend/lock_release deliver it. The library itself
 * writes nothing on the process's stderr (fd 2), which this test points at
 * a file while two locks are lost (one overwritten under its
 * auto-extension, one whose validity runs out). */
static void test_loss_is_quiet(void) {
	char path[] = "/tmp/liblock-stderr-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	if (fd < 0)
		return;
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);

	uint64_t c = new_client("quiet:");
	char *err = NULL;
	uint64_t l1 = 0, l2 = 0;
	seen_t s1 = {PTHREAD_MUTEX_INITIALIZER, 0, 0}, s2 = {PTHREAD_MUTEX_INITIALIZER, 0, 0};
	CHECK_ST(lock_acquire(c, "over", 1500, "{\"auto_extend\":true}", &l1, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l1, on_seen, &s1, &err), LOCK_OK, &err);
	for (int i = 0; i < nnodes; i++)
		rset(i, "quiet:over", "other");
	CHECK_ST(lock_acquire(c, "expire", 100, NULL, &l2, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l2, on_seen, &s2, &err), LOCK_OK, &err);
	POLL_UNTIL(calls_of(&s1) == 1 && calls_of(&s2) == 1, 1500 + 8 * node_timeout_ms + 3000);
	/* An operation of the same client after the losses: its driver handled
	 * them (and would have logged them) before it serves this one. */
	uint64_t l3 = 0;
	CHECK_ST(lock_acquire(c, "after", 1000, NULL, &l3, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l3, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l1, &err), LOCK_LOST, &err);
	CHECK_ST(lock_release(l2, &err), LOCK_LOST, &err);
	lock_free(l1);
	lock_free(l2);
	lock_free(l3);
	lock_free(c);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	CHECK(calls_of(&s1) == 1 && s1.status == LOCK_LOST, "overwritten lock lost: %d calls", calls_of(&s1));
	CHECK(calls_of(&s2) == 1 && s2.status == LOCK_LOST, "expired lock lost: %d calls", calls_of(&s2));
	char out[4096] = {0};
	ssize_t n = pread(fd, out, sizeof out - 1, 0);
	close(fd);
	unlink(path);
	CHECK(n == 0, "liblock.so wrote on stderr: %s", out);
}


/* ---------- the report stream ---------- */

#define MAXREP 4096
typedef struct {
	pthread_mutex_t mu;
	int n;
	lock_report r[MAXREP];
	pthread_t thread[MAXREP];
} replog_t;

static void on_report(void *ud, const lock_report *r) {
	replog_t *l = ud;
	pthread_mutex_lock(&l->mu);
	if (l->n < MAXREP) {
		l->thread[l->n] = pthread_self();
		l->r[l->n++] = *r;
	}
	pthread_mutex_unlock(&l->mu);
}

/* count_of counts the records of kind what (0: any) with that op and lock
 * (-1: any); last, if not NULL, gets the last one. */
static int count_of(replog_t *l, int what, int64_t op, int64_t lock, lock_report *last) {
	int n = 0;
	pthread_mutex_lock(&l->mu);
	for (int i = 0; i < l->n; i++) {
		lock_report *r = &l->r[i];
		if ((what == 0 || r->what == what) && (op < 0 || r->op == (uint64_t)op) &&
		    (lock < 0 || r->lock == (uint64_t)lock)) {
			n++;
			if (last)
				*last = *r;
		}
	}
	pthread_mutex_unlock(&l->mu);
	return n;
}

static void clear(replog_t *l) {
	pthread_mutex_lock(&l->mu);
	l->n = 0;
	pthread_mutex_unlock(&l->mu);
}

static int index_of(replog_t *l, int what, int64_t op, int64_t lock) {
	int at = -1;
	pthread_mutex_lock(&l->mu);
	for (int i = 0; i < l->n && at < 0; i++)
		if (l->r[i].what == what && (op < 0 || l->r[i].op == (uint64_t)op) && (lock < 0 || l->r[i].lock == (uint64_t)lock))
			at = i;
	pthread_mutex_unlock(&l->mu);
	return at;
}

typedef struct {
	pthread_mutex_t mu;
	int calls;
	int32_t status;
	uint64_t handle;
} done_t;

static void on_done(void *ud, int32_t status, uint64_t handle, const char *err) {
	(void)err;
	done_t *d = ud;
	pthread_mutex_lock(&d->mu);
	d->calls++;
	d->status = status;
	d->handle = handle;
	pthread_mutex_unlock(&d->mu);
}

static int done_calls(done_t *d) {
	pthread_mutex_lock(&d->mu);
	int c = d->calls;
	pthread_mutex_unlock(&d->mu);
	return c;
}

static void test_report_stream(void) {
	static replog_t log = {PTHREAD_MUTEX_INITIALIZER, 0, {{0}}, {0}};
	const int quorum = nnodes / 2 + 1, bound = 8 * node_timeout_ms + 3000;
	uint64_t c = new_client("rep:"), c2 = new_client("rep:");
	char *err = NULL;
	uint64_t l = 0, op = 0;
	lock_report last;

	/* Before a callback: no report (and a bad handle is refused). */
	CHECK_ST(lock_client_set_report(987654321, on_report, &log, &err), LOCK_INVALID_HANDLE, &err);
	CHECK_ST(lock_client_set_report(c, on_report, &log, &err), LOCK_OK, &err);

	/* An asynchronous acquire: its reports carry its op handle. */
	done_t d = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
	CHECK_ST(lock_acquire_async(c, "job", 5000, NULL, on_done, &d, &op, &err), LOCK_OK, &err);
	POLL_UNTIL(done_calls(&d) == 1, bound);
	CHECK(done_calls(&d) == 1 && d.status == LOCK_OK, "acquire: %d calls, status %d", done_calls(&d), d.status);
	l = d.handle;
	CHECK(count_of(&log, LOCK_REPORT_ACQUIRE_START, (int64_t)op, 0, NULL) == 1, "one ACQUIRE_START of op %" PRIu64, op);
	CHECK(count_of(&log, LOCK_REPORT_NODE, (int64_t)op, 0, &last) >= quorum, "a NODE per answer of the quorum: %d",
	      count_of(&log, LOCK_REPORT_NODE, (int64_t)op, -1, NULL));
	CHECK(last.outcome == LOCK_NODE_OK && last.node < nnodes && last.duration_us >= 0, "NODE: outcome %d node %d",
	      last.outcome, last.node);
	CHECK(count_of(&log, LOCK_REPORT_ACQUIRE_END, (int64_t)op, 0, &last) == 1 && last.outcome == LOCK_OK &&
	          last.attempts == 1 && last.duration_us > 0,
	      "ACQUIRE_END: outcome %d attempts %u duration %" PRId64, last.outcome, last.attempts, last.duration_us);
	CHECK(last.call == 1 && last.reserved[0] == 0, "an acquire the program called: call %d", last.call);
	CHECK(index_of(&log, LOCK_REPORT_ACQUIRE_START, (int64_t)op, -1) < index_of(&log, LOCK_REPORT_ACQUIRE_END, (int64_t)op, -1),
	      "the start before the end");

	/* Another client's failed attempt is not this client's report. */
	uint64_t l2 = 0;
	CHECK_ST(lock_acquire(c2, "job", 5000, NULL, &l2, &err), LOCK_NOT_ACQUIRED, &err);
	done_t d2 = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};
	uint64_t op2 = 0;
	CHECK_ST(lock_client_set_report(c2, on_report, &log, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire_async(c2, "job", 5000, NULL, on_done, &d2, &op2, &err), LOCK_OK, &err);
	POLL_UNTIL(done_calls(&d2) == 1, bound);
	CHECK(d2.status == LOCK_NOT_ACQUIRED, "contended: %d", d2.status);
	CHECK(count_of(&log, LOCK_REPORT_ACQUIRE_END, (int64_t)op2, 0, &last) == 1 && last.outcome == LOCK_NOT_ACQUIRED,
	      "ACQUIRE_END of the refused one: %d", last.outcome);
	CHECK_ST(lock_client_set_report(c2, NULL, NULL, &err), LOCK_OK, &err);

	/* Synchronous extend and release: the lock's handle. */
	clear(&log);
	CHECK_ST(lock_extend(l, 5000, &err), LOCK_OK, &err);
	CHECK(count_of(&log, LOCK_REPORT_EXTEND_START, 0, (int64_t)l, NULL) == 1, "EXTEND_START of lock %" PRIu64, l);
	CHECK(count_of(&log, LOCK_REPORT_NODE, 0, (int64_t)l, NULL) >= quorum, "the extension's NODE reports");
	CHECK(count_of(&log, LOCK_REPORT_EXTEND_END, 0, (int64_t)l, &last) == 1 && last.outcome == LOCK_OK && last.call == 1,
	      "EXTEND_END of a call: outcome %d call %d", last.outcome, last.call);
	clear(&log);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	CHECK(count_of(&log, LOCK_REPORT_RELEASE_END, 0, (int64_t)l, &last) == 1 && last.outcome == LOCK_OK, "RELEASE_END");
	CHECK(count_of(&log, LOCK_REPORT_HOLD, -1, (int64_t)l, &last) == 1 && last.outcome == LOCK_OK && last.duration_us > 0,
	      "HOLD: released after %" PRId64 " us", last.duration_us);
	lock_free(l);

	/* A loss: LOST and HOLD (lost) of the lock's handle. */
	clear(&log);
	CHECK_ST(lock_acquire(c, "expire", 100, NULL, &l, &err), LOCK_OK, &err);
	POLL_UNTIL(count_of(&log, LOCK_REPORT_LOST, -1, (int64_t)l, NULL) == 1, bound);
	CHECK(count_of(&log, LOCK_REPORT_LOST, -1, (int64_t)l, &last) == 1 && last.outcome == LOCK_LOST, "LOST of lock %" PRIu64, l);
	POLL_UNTIL(count_of(&log, LOCK_REPORT_HOLD, -1, (int64_t)l, NULL) == 1, bound);
	CHECK(count_of(&log, LOCK_REPORT_HOLD, -1, (int64_t)l, &last) == 1 && last.outcome == LOCK_LOST, "HOLD (lost): %d",
	      last.outcome);
	CHECK(count_of(&log, LOCK_REPORT_ACQUIRE_END, 0, 0, &last) == 1 && last.call == 1,
	      "a synchronous acquire's reports: op 0, lock 0, call 1");
	CHECK_ST(lock_release(l, &err), LOCK_LOST, &err);
	lock_free(l);

	/* An auto-extension: the lock's, the library's own (call 0). */
	clear(&log);
	CHECK_ST(lock_acquire(c, "auto", 600, "{\"auto_extend\":true}", &l, &err), LOCK_OK, &err);
	POLL_UNTIL(count_of(&log, LOCK_REPORT_EXTEND_END, 0, (int64_t)l, NULL) >= 1, 600 + bound);
	CHECK(count_of(&log, LOCK_REPORT_EXTEND_END, 0, (int64_t)l, &last) >= 1 && last.call == 0 && last.outcome == LOCK_OK,
	      "an auto-extension's EXTEND_END: call %d outcome %d", last.call, last.outcome);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	lock_free(l);

	/* Removed: when set_report returns no callback runs, and none comes. */
	CHECK_ST(lock_client_set_report(c, NULL, NULL, &err), LOCK_OK, &err);
	clear(&log);
	CHECK_ST(lock_acquire(c, "after", 1000, NULL, &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	lock_free(l);
	CHECK(count_of(&log, 0, -1, -1, NULL) == 0, "no report after the callback is removed: %d", count_of(&log, 0, -1, -1, NULL));
	lock_free(c);
	lock_free(c2);
	CHECK(lock_debug_handles() == 0, "handles left: %" PRId64, lock_debug_handles());
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_env();
	printf("# report: %d nodes\n", nnodes);
	struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
	    {"loss_is_quiet", test_loss_is_quiet},
	    {"report_stream", test_report_stream},
	};
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		int f0 = failed;
		double t0 = now_ms();
		tests[i].fn();
		printf("# %-14s %s (%.0f ms)\n", tests[i].name, failed == f0 ? "ok" : "FAILED", now_ms() - t0);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
