/*
 * capi_test.c -- the C test of liblock.so, run by capi/test/run.sh under
 * build/redisnodes, which provides real redis-servers through
 * LIBLOCK_NODES (comma-separated redis:// URLs) and LIBLOCK_NODE_PIDS.
 *
 * It exercises every exported function and every status code, talks to the
 * nodes directly over plain TCP (RESP) to check and overwrite keys, and
 * freezes (SIGSTOP/SIGCONT) and kills (SIGKILL) nodes.
 *
 * Environment:
 *   LIBLOCK_TEST_QUICK=1   skip the 20,000-cycle leak test and use fewer
 *                          iterations (for valgrind).
 *   LIBLOCK_TEST_TIMEOUT   node_timeout_ms for the clients (default 200: large
 *                          enough for a loaded 2-core machine, small enough
 *                          for the frozen-node bounds to mean something).
 *   LIBLOCK_TEST_KILL=1    end with the SIGKILL tests (a node killed in a
 *                          fenced acquire's second round, then a minority).
 *   LIBLOCK_FAULTPROXY     the faultproxy binary (default build/faultproxy).
 *   LIBLOCK_TEST_ONLY      run only these tests (comma-separated names).
 *
 * Timing assertions are upper bounds only, generous on purpose.
 *
 * Prints "N passed, M failed" last; exits non-zero on any failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/time.h>
/* The engine's output, marked defined for memcheck where lock_engine_step
 * hands it over: memcheck takes a switch between two nearby goroutine
 * stacks for a frame pop and marks the bytes between them undefined, and
 * Go's copy carries those marks into the host's buffer (capi/README, item
 * 5: seen in the decoder, in the checks and in write(2) of a WRITE's
 * bytes, every value right). Only [0, n) is marked: a read past what the
 * engine wrote stays reported. Without valgrind's header, a no-op. */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define ENGINE_OUT_DEFINED(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#endif
#endif
#ifndef ENGINE_OUT_DEFINED
#define ENGINE_OUT_DEFINED(p, n) ((void)0)
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "liblock.h"

/* ---------- test bookkeeping ---------- */

static int passed, failed;
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(cond, ...) check_((cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
static int check_(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
	pthread_mutex_lock(&report_mu);
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
	pthread_mutex_unlock(&report_mu);
	return ok;
}

/* CHECK_ST checks a status and the err out-parameter (NULL on success, a
 * message on failure), then frees the message. */
#define CHECK_ST(got, want, errp) check_st_((got), (want), #want, (errp), __FILE__, __LINE__, #got)
static int check_st_(int32_t got, int32_t want, const char *wname, char **errp, const char *file, int line,
                     const char *expr) {
	int ok = check_(got == want, file, line, expr, "status %d, want %d (%s) err=%s", got, want, wname,
	                *errp ? *errp : "(null)");
	if (got == LOCK_OK)
		ok &= check_(*errp == NULL, file, line, expr, "err must be NULL on success");
	else
		ok &= check_(*errp != NULL && strlen(*errp) > 0, file, line, expr, "err must be set on failure");
	lock_string_free(*errp);
	*errp = NULL;
	return ok;
}

static double now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* sleep_ms lets time pass. Only for time that must pass (a ttl to run
 * out, a window in which something must NOT happen, a critical section's
 * work), each call saying why; to wait for a condition use POLL_UNTIL. */
static void sleep_ms(int ms) {
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
	}
}

/* POLL_UNTIL(cond, ms): the one way these tests wait for a condition. It
 * checks cond every 2 ms until it holds or ms pass (cond is checked once
 * after the last pause, so a late truth is seen); the caller then CHECKs
 * cond, or what it computed, naming what it waited for. */
#define POLL_UNTIL(cond, ms) \
	for (double poll_end_ = now_ms() + (ms); !(cond) && now_ms() < poll_end_;) sleep_ms(2)

/* ---------- the nodes ---------- */

#define MAXN 16
static int nnodes;
static char *node_urls[MAXN];
static int node_ports[MAXN];
static pid_t node_pids[MAXN];
static int node_frozen[MAXN], node_dead[MAXN];
static int node_timeout_ms = 200;
static int quick;

static void parse_env(void) {
	const char *urls = getenv("LIBLOCK_NODES"), *pids = getenv("LIBLOCK_NODE_PIDS");
	if (!urls || !pids) {
		fprintf(stderr, "run under build/redisnodes: LIBLOCK_NODES and LIBLOCK_NODE_PIDS are required\n");
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
	char *p = strdup(pids);
	int i = 0;
	for (char *t = strtok_r(p, ",", &save); t && i < MAXN; t = strtok_r(NULL, ",", &save))
		node_pids[i++] = (pid_t)atoi(t);
	free(p);
	if (i != nnodes) {
		fprintf(stderr, "LIBLOCK_NODES and LIBLOCK_NODE_PIDS disagree\n");
		exit(2);
	}
	if (getenv("LIBLOCK_TEST_QUICK") && strcmp(getenv("LIBLOCK_TEST_QUICK"), "1") == 0)
		quick = 1;
	if (getenv("LIBLOCK_TEST_TIMEOUT"))
		node_timeout_ms = atoi(getenv("LIBLOCK_TEST_TIMEOUT"));
}

static void freeze(int i) {
	kill(node_pids[i], SIGSTOP);
	node_frozen[i] = 1;
}
static void thaw(int i) {
	kill(node_pids[i], SIGCONT);
	node_frozen[i] = 0;
}

/* rcmd sends one command to node i over plain TCP and reads one reply into
 * out (the raw RESP text). Returns 0 on success. Only for live nodes. */
static int rcmd(int i, char *out, size_t outsz, int argc, const char **argv) {
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	struct timeval tv = {2, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	struct sockaddr_in sa = {0};
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)node_ports[i]);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		close(fd);
		return -1;
	}
	char buf[4096];
	int n = snprintf(buf, sizeof buf, "*%d\r\n", argc);
	for (int a = 0; a < argc; a++)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "$%zu\r\n%s\r\n", strlen(argv[a]), argv[a]);
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, out + got, outsz - 1 - got);
		if (r <= 0) {
			close(fd);
			return -1;
		}
		got += (size_t)r;
		out[got] = 0;
		char *eol = strstr(out, "\r\n");
		if (!eol)
			continue;
		if (out[0] == '$') {
			long len = atol(out + 1);
			if (len < 0 || got >= (size_t)(eol - out) + 2 + (size_t)len + 2)
				break;
			continue;
		}
		break;
	}
	close(fd);
	return 0;
}

/* rget returns node i's value of key in val ("" when absent). */
static int rget(int i, const char *key, char *val, size_t valsz) {
	char out[4096];
	const char *argv[] = {"GET", key};
	val[0] = 0;
	if (rcmd(i, out, sizeof out, 2, argv) != 0)
		return -1;
	if (out[0] == '$' && out[1] != '-') {
		char *body = strstr(out, "\r\n") + 2;
		char *end = strstr(body, "\r\n");
		if (end)
			*end = 0;
		snprintf(val, valsz, "%s", body);
	}
	return 0;
}

static int rset(int i, const char *key, const char *val) {
	char out[256];
	const char *argv[] = {"SET", key, val};
	return rcmd(i, out, sizeof out, 3, argv) == 0 && strncmp(out, "+OK", 3) == 0 ? 0 : -1;
}

static void rdel(int i, const char *key) {
	char out[256];
	const char *argv[] = {"DEL", key};
	rcmd(i, out, sizeof out, 2, argv);
}

/* nodes_with returns how many live nodes hold key (with value val if not NULL). */
static int nodes_with(const char *key, const char *val) {
	int n = 0;
	char got[512];
	for (int i = 0; i < nnodes; i++) {
		if (node_frozen[i] || node_dead[i])
			continue;
		if (rget(i, key, got, sizeof got) == 0 && got[0] && (!val || strcmp(got, val) == 0))
			n++;
	}
	return n;
}

static int quorum(void) { return nnodes / 2 + 1; }

static double now_ms(void);

static double settle_ms(void);
static int rw_settled(const char *key, int want);

/* settled_nodes_with polls nodes_with until it is want, for up to
 * settle_ms(), and returns what it found last: an operation returns as soon
 * as a quorum answered, and its commands to the other nodes are still on
 * their way. */
static int settled_nodes_with(const char *key, const char *val, int want) {
	int n;
	POLL_UNTIL((n = nodes_with(key, val)) == want, settle_ms());
	return n;
}

/* nodes_listening returns on how many live nodes some client listens for
 * releases of key (PUBSUB NUMSUB of its channel is want): an acquire does
 * so only once an attempt was refused or it queued behind another, so
 * polling for it is how a test waits until an acquire waits. */
static int nodes_listening(const char *key, int want) {
	char ch[600], out[1024], end[32];
	snprintf(ch, sizeof ch, "liblock:released:%s", key);
	snprintf(end, sizeof end, "\r\n:%d\r\n", want);
	const char *argv[] = {"PUBSUB", "NUMSUB", ch};
	int n = 0;
	for (int i = 0; i < nnodes; i++) {
		if (node_frozen[i] || node_dead[i])
			continue;
		/* a reply read in part does not match: the next poll reads it whole */
		if (rcmd(i, out, sizeof out, 3, argv) == 0 && strlen(out) >= strlen(end) &&
		    strcmp(out + strlen(out) - strlen(end), end) == 0)
			n++;
	}
	return n;
}

/* nodes_pttl_above returns on how many live nodes key's PTTL is above ms. */
static int nodes_pttl_above(const char *key, long ms) {
	char out[256];
	const char *argv[] = {"PTTL", key};
	int n = 0;
	for (int i = 0; i < nnodes; i++)
		if (!node_frozen[i] && !node_dead[i])
			n += rcmd(i, out, sizeof out, 2, argv) == 0 && out[0] == ':' && atol(out + 1) > ms;
	return n;
}

/* dead_answering returns how many nodes marked dead still answer a PING
 * (a killed process's listening socket closes as it exits). */
static int dead_answering(void) {
	char out[64];
	const char *argv[] = {"PING"};
	int n = 0;
	for (int i = 0; i < nnodes; i++)
		if (node_dead[i])
			n += rcmd(i, out, sizeof out, 1, argv) == 0;
	return n;
}

static int live_nodes(void) {
	int n = 0;
	for (int i = 0; i < nnodes; i++)
		n += !node_frozen[i] && !node_dead[i];
	return n;
}

/* ---------- helpers around the library ---------- */

/* config_urls_json: a client config over these nnodes node URLs. */
static char *config_urls_json(const char *const *urls, const char *prefix, int timeout_ms) {
	static char buf[8192];
	int n = snprintf(buf, sizeof buf, "{\"nodes\":[");
	for (int i = 0; i < nnodes; i++)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "%s\"%s\"", i ? "," : "", urls[i]);
	snprintf(buf + n, sizeof buf - (size_t)n, "],\"node_timeout_ms\":%d,\"key_prefix\":\"%s\"}", timeout_ms, prefix);
	return buf;
}

static char *config_json(const char *prefix, int timeout_ms) {
	return config_urls_json((const char *const *)node_urls, prefix, timeout_ms);
}

/* small_ud_cb records the user_data it got: callers pass integers too. */
static uintptr_t small_ud_seen;
static uint64_t small_ud_handle;
static void small_ud_cb(void *ud, int32_t status, uint64_t handle, const char *err) {
	(void)err;
	if (status == LOCK_OK) __atomic_store_n(&small_ud_handle, handle, __ATOMIC_SEQ_CST);
	__atomic_store_n(&small_ud_seen, (uintptr_t)ud, __ATOMIC_SEQ_CST);
}

static uint64_t new_client(const char *prefix) {
	uint64_t c = 0;
	char *err = NULL;
	CHECK_ST(lock_client_new(config_json(prefix, node_timeout_ms), &c, &err), LOCK_OK, &err);
	CHECK(c != 0, "client handle");
	return c;
}

/* json_field copies the raw value of "key" in a flat JSON object. */
static int json_field(const char *js, const char *key, char *out, size_t outsz) {
	char pat[128];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(js, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	if (*p == '"') {
		p++;
		const char *e = strchr(p, '"');
		snprintf(out, outsz, "%.*s", (int)(e - p), p);
	} else {
		size_t l = strcspn(p, ",}");
		snprintf(out, outsz, "%.*s", (int)l, p);
	}
	return 0;
}

static void info_field(uint64_t lock, const char *key, char *out, size_t outsz) {
	char *js = NULL, *err = NULL;
	out[0] = 0;
	CHECK_ST(lock_info(lock, &js, &err), LOCK_OK, &err);
	if (js) {
		CHECK(json_field(js, key, out, outsz) == 0, "lock_info lacks %s: %s", key, js);
		lock_string_free(js);
	}
}

/* A completion record for callbacks. */
typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int calls;
	int32_t status;
	uint64_t handle;
	char err[512];
	pthread_t thread;
} done_t;

static void done_init(done_t *d) {
	memset(d, 0, sizeof *d);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
}

static void done_destroy(done_t *d) {
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cv);
}

static void on_done(void *ud, int32_t status, uint64_t handle, const char *err) {
	done_t *d = ud;
	pthread_mutex_lock(&d->mu);
	d->calls++;
	d->status = status;
	d->handle = handle;
	d->thread = pthread_self();
	snprintf(d->err, sizeof d->err, "%s", err ? err : "");
	if (status == LOCK_OK && err != NULL)
		snprintf(d->err, sizeof d->err, "BUG: err not NULL on LOCK_OK");
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
}

/* wait_done waits up to ms for the callback; returns the number of calls. */
static int wait_done(done_t *d, int ms) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&d->mu);
	while (d->calls == 0 && pthread_cond_timedwait(&d->cv, &d->mu, &ts) == 0) {
	}
	int calls = d->calls;
	pthread_mutex_unlock(&d->mu);
	return calls;
}

static int calls_of(done_t *d) {
	pthread_mutex_lock(&d->mu);
	int c = d->calls;
	pthread_mutex_unlock(&d->mu);
	return c;
}

/* The bound for one operation that may hit a node timeout: a few node
 * timeouts plus 1.5 s of slack, since a loaded 2-core CI machine can stall
 * a process for most of a second (it stays below the 3 s read timeout an
 * unbounded client would show). */
static double bound_ms(void) { return node_timeout_ms * 4 + 1500 + (quick ? 2000 : 0); }

/* settle_ms bounds a wait for the nodes outside a quorum to run their
 * commands: generous (a loaded 2-core machine, valgrind), since it costs
 * nothing unless the state never comes. */
static double settle_ms(void) { return 5000 + bound_ms(); }

/* ---------- tests ---------- */

static char *inspect_js(uint64_t c, const char *res, int32_t want);
static int count_of(const char *s, const char *pat);

static void test_basics(void) {
	CHECK(lock_abi_version() == LIBLOCK_ABI_VERSION, "abi version %d", lock_abi_version());
	CHECK(lock_engine_protocol_version() == LOCK_ENGINE_PROTOCOL_VERSION, "engine protocol version %d",
	      lock_engine_protocol_version());
	CHECK(lock_version() != NULL && strlen(lock_version()) > 0, "lock_version");
	lock_string_free(NULL);
	char *err = NULL;
	CHECK_ST(lock_debug_panic(&err), LOCK_INTERNAL, &err);
	CHECK(lock_debug_panic(NULL) == LOCK_INTERNAL, "panic without err");
	CHECK(lock_debug_goroutines() > 0, "goroutines");
	CHECK(lock_debug_handles() >= 0, "handles");
}

static void test_client_config(void) {
	static const char *bad[] = {
	    "",
	    "not json",
	    "null",
	    "[]",
	    "\"x\"",
	    "{}",
	    "{\"nodes\":[]}",
	    "{\"nodes\":null}",
	    "{\"nodes\":\"redis://127.0.0.1:1\"}",
	    "{\"nodes\":[1]}",
	    "{\"nodes\":[null]}",
	    "{\"nodes\":[\"\"]}",
	    "{\"nodes\":[\"http://127.0.0.1:1\"]}",
	    "{\"nodes\":[\"redis://127.0.0.1:1?bogus=1\"]}", /* go-redis: unexpected option (redis:// alone is localhost:6379) */
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"nodetimeout\":5}",
	    "{\"Nodes\":[\"redis://127.0.0.1:1\"]}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"node_timeout_ms\":0}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"node_timeout_ms\":-5}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"node_timeout_ms\":1.5}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"node_timeout_ms\":1e2}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"node_timeout_ms\":\"50\"}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"node_timeout_ms\":null}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"node_timeout_ms\":60001}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"node_timeout_ms\":99999999999999999999}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"drift_factor\":-0.1}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"drift_factor\":0.5}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"drift_factor\":\"0.01\"}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"key_prefix\":5}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"key_prefix\":null}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"]} x",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"]}{}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"nodes\":[\"redis://127.0.0.1:2\"]}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"]",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t c = 77;
		char *err = NULL;
		int32_t st = lock_client_new(bad[i], &c, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT, "config %s: status %d err=%s", bad[i], st, err ? err : "(null)");
		CHECK(err != NULL, "config %s: err", bad[i]);
		lock_string_free(err);
	}
	/* over-long key prefix */
	{
		char js[1024], pre[300];
		memset(pre, 'p', 257);
		pre[257] = 0;
		snprintf(js, sizeof js, "{\"nodes\":[\"redis://127.0.0.1:1\"],\"key_prefix\":\"%s\"}", pre);
		uint64_t c = 0;
		char *err = NULL;
		CHECK_ST(lock_client_new(js, &c, &err), LOCK_INVALID_ARGUMENT, &err);
	}
	/* one server twice: refused, naming both entries */
	{
		uint64_t c = 0;
		char *err = NULL;
		int32_t st = lock_client_new("{\"nodes\":[\"redis://127.0.0.1:1\",\"redis://127.0.0.1:2\",\"redis://127.0.0.1:1/3\"]}", &c, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT && err && strstr(err, "nodes[2]: the same server as nodes[0]"),
		      "duplicate node: status %d err=%s", st, err ? err : "(null)");
		lock_string_free(err);
	}
	/* 65 nodes */
	{
		char js[4096];
		int n = snprintf(js, sizeof js, "{\"nodes\":[");
		for (int i = 0; i < 65; i++)
			n += snprintf(js + n, sizeof js - (size_t)n, "%s\"redis://127.0.0.1:%d\"", i ? "," : "", 1000 + i);
		snprintf(js + n, sizeof js - (size_t)n, "]}");
		uint64_t c = 0;
		char *err = NULL;
		CHECK_ST(lock_client_new(js, &c, &err), LOCK_INVALID_ARGUMENT, &err);
	}
	uint64_t c = 0;
	char *err = NULL;
	CHECK_ST(lock_client_new(NULL, &c, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_client_new("{\"nodes\":[\"redis://127.0.0.1:1\"]}", NULL, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK(lock_client_new(NULL, &c, NULL) == LOCK_INVALID_ARGUMENT, "NULL err out-param is fine");

	/* valid ones, none needs a reachable node; drift_factor 0 is valid */
	static const char *good[] = {
	    "{\"nodes\":[\"redis://127.0.0.1:1\"]}",
	    " { \"nodes\" : [ \"redis://127.0.0.1:1\" ] } ",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"drift_factor\":0}",
	    "{\"nodes\":[\"redis://127.0.0.1:1\"],\"drift_factor\":0.1,\"node_timeout_ms\":60000,\"key_prefix\":\"\"}",
	    "{\"nodes\":[\"redis://u:pw@127.0.0.1:1/2\",\"rediss://127.0.0.1:2\",\"unix:///tmp/x.sock\"]}",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		c = 0;
		err = (char *)1; /* must be overwritten with NULL */
		int32_t st = lock_client_new(good[i], &c, &err);
		CHECK(st == LOCK_OK && c != 0 && err == NULL, "config %s: status %d", good[i], st);
		if (st != LOCK_OK)
			lock_string_free(err);
		CHECK(lock_free(c) == LOCK_OK, "free client");
		CHECK(lock_free(c) == LOCK_INVALID_HANDLE, "double free client");
	}
}

static void test_unreachable(void) {
	/* Refused connections: LOCK_UNAVAILABLE, and the password never shows. */
	uint64_t c = 0, l = 0;
	char *err = NULL;
	CHECK_ST(lock_client_new("{\"nodes\":[\"redis://user:s3cr3tpw@127.0.0.1:1\",\"redis://127.0.0.1:2\",\"redis://127.0.0.1:3\"],"
	                         "\"node_timeout_ms\":100}",
	                         &c, &err),
	         LOCK_OK, &err);
	double t0 = now_ms();
	int32_t st = lock_acquire(c, "unreachable", 1000, NULL, &l, &err);
	double el = now_ms() - t0;
	CHECK(st == LOCK_UNAVAILABLE, "refused nodes: status %d", st);
	CHECK(err && !strstr(err, "s3cr3tpw"), "password in message: %s", err ? err : "");
	CHECK(el < 100 * 4 + 1500 + (quick ? 2000 : 0), "refused nodes took %.0f ms", el);
	lock_string_free(err);
	CHECK(lock_free(c) == LOCK_OK, "free");
}

static void test_basic_lock(void) {
	uint64_t c = new_client("t1:");
	uint64_t l = 0;
	char *err = NULL, buf[512], tok[512];
	CHECK_ST(lock_acquire(c, "basic", 10000, NULL, &l, &err), LOCK_OK, &err);
	CHECK(l != 0 && l < (1ULL << 53), "lock handle %" PRIu64, l);
	info_field(l, "resource", buf, sizeof buf);
	CHECK(strcmp(buf, "basic") == 0, "resource %s", buf);
	info_field(l, "key", buf, sizeof buf);
	CHECK(strcmp(buf, "t1:basic") == 0, "key %s", buf);
	info_field(l, "token", tok, sizeof tok);
	CHECK(strlen(tok) >= 21, "token %s", tok);
	/* the validity first: it runs down while the test waits for the nodes */
	info_field(l, "validity_ms", buf, sizeof buf);
	CHECK(atol(buf) > 9000 && atol(buf) <= 10000, "validity %s", buf);
	CHECK(settled_nodes_with("t1:basic", tok, nnodes) == nnodes, "the key holds the token on every node");
	info_field(l, "auto_extend", buf, sizeof buf);
	CHECK(strcmp(buf, "false") == 0, "auto_extend %s", buf);
	info_field(l, "lost", buf, sizeof buf);
	CHECK(strcmp(buf, "false") == 0, "lost %s", buf);

	/* a plain SET NX by another program on the same key is excluded */
	{
		char out[256];
		const char *argv[] = {"SET", "t1:basic", "intruder", "NX", "PX", "10000"};
		CHECK(rcmd(0, out, sizeof out, 6, argv) == 0 && out[0] == '$' && out[1] == '-', "SET NX must fail: %s", out);
	}
	/* another owner: NOT_ACQUIRED */
	uint64_t l2 = 0;
	CHECK_ST(lock_acquire(c, "basic", 10000, "{\"wait_ms\":0}", &l2, &err), LOCK_NOT_ACQUIRED, &err);
	double t0 = now_ms();
	CHECK_ST(lock_acquire(c, "basic", 10000, "{\"wait_ms\":150}", &l2, &err), LOCK_NOT_ACQUIRED, &err);
	double el = now_ms() - t0;
	CHECK(el >= 140 && el < 150 + bound_ms(), "wait_ms 150 took %.0f ms", el);

	CHECK_ST(lock_extend(l, 20000, &err), LOCK_OK, &err);
	info_field(l, "validity_ms", buf, sizeof buf);
	CHECK(atol(buf) > 19000, "validity after extend %s", buf);
	info_field(l, "ttl_ms", buf, sizeof buf);
	CHECK(strcmp(buf, "20000") == 0, "ttl after extend %s", buf);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	CHECK(settled_nodes_with("t1:basic", NULL, 0) == 0, "released: no key left");
	CHECK_ST(lock_release(l, &err), LOCK_LOST, &err);
	CHECK_ST(lock_extend(l, 1000, &err), LOCK_LOST, &err);
	info_field(l, "released", buf, sizeof buf);
	CHECK(strcmp(buf, "true") == 0, "released %s", buf);
	info_field(l, "validity_ms", buf, sizeof buf);
	CHECK(strcmp(buf, "0") == 0, "validity after release %s", buf);
	CHECK(lock_free(l) == LOCK_OK, "free released lock");
	CHECK(lock_free(l) == LOCK_INVALID_HANDLE, "double free lock");

	/* free of a held lock releases it */
	CHECK_ST(lock_acquire(c, "basic", 10000, "{\"auto_extend\":true,\"wait_ms\":1000}", &l, &err), LOCK_OK, &err);
	info_field(l, "auto_extend", buf, sizeof buf);
	CHECK(strcmp(buf, "true") == 0, "auto_extend %s", buf);
	CHECK(nodes_with("t1:basic", NULL) >= quorum(), "held");
	CHECK(lock_free(l) == LOCK_OK, "free held lock");
	CHECK(settled_nodes_with("t1:basic", NULL, 0) == 0, "free released the key");

	/* NULL err everywhere */
	CHECK(lock_acquire(c, "basic", 1000, NULL, &l, NULL) == LOCK_OK, "acquire, NULL err");
	CHECK(lock_extend(l, 1000, NULL) == LOCK_OK, "extend, NULL err");
	CHECK(lock_release(l, NULL) == LOCK_OK, "release, NULL err");
	CHECK(lock_release(l, NULL) == LOCK_LOST, "release twice, NULL err");
	CHECK(lock_free(l) == LOCK_OK, "free");

	/* drift_factor 0 and a short ttl: validity is ttl - elapsed - 2 ms */
	{
		uint64_t c0 = 0;
		char js[8192];
		snprintf(js, sizeof js, "%s", config_json("t1:", node_timeout_ms));
		js[strlen(js) - 1] = 0;
		strcat(js, ",\"drift_factor\":0}");
		CHECK_ST(lock_client_new(js, &c0, &err), LOCK_OK, &err);
		CHECK_ST(lock_acquire(c0, "drift", 100000, NULL, &l, &err), LOCK_OK, &err);
		info_field(l, "validity_ms", buf, sizeof buf);
		/* with the default 0.01 the drift would be 1 s */
		CHECK(atol(buf) > 99000, "validity with drift 0: %s", buf);
		CHECK(lock_free(l) == LOCK_OK, "free");
		CHECK(lock_free(c0) == LOCK_OK, "free");
	}
	CHECK(lock_free(c) == LOCK_OK, "free client");
}

static void test_bad_arguments(void) {
	uint64_t c = new_client("t2:");
	uint64_t l = 0, h = 0;
	char *err = NULL;
	char longres[1100];
	memset(longres, 'r', 1025);
	longres[1025] = 0;
	done_t d;
	done_init(&d);

	CHECK_ST(lock_acquire(c, NULL, 1000, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire(c, "", 1000, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire(c, longres, 1000, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	longres[1024] = 0; /* exactly 1024 is fine */
	CHECK_ST(lock_acquire(c, longres, 1000, NULL, &l, &err), LOCK_OK, &err);
	CHECK(lock_free(l) == LOCK_OK, "free");
	CHECK_ST(lock_acquire(c, "\xff\xfe", 1000, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire(c, "a", 0, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire(c, "a", -1, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire(c, "a", 86400001, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire(c, "a", INT64_MAX, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire(c, "a", INT64_MIN, NULL, &l, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire(c, "a", 1000, NULL, NULL, &err), LOCK_INVALID_ARGUMENT, &err);
	static const char *badopts[] = {
	    "",
	    "x",
	    "null",
	    "[]",
	    "{\"wait\":5}",
	    "{\"Wait_ms\":5}",
	    "{\"wait_ms\":-1}",
	    "{\"wait_ms\":1.0}",
	    "{\"wait_ms\":\"5\"}",
	    "{\"wait_ms\":null}",
	    "{\"wait_ms\":86400001}",
	    "{\"auto_extend\":1}",
	    "{\"auto_extend\":\"true\"}",
	    "{\"auto_extend\":null}",
	    "{} {}",
	    "{\"wait_ms\":1,\"wait_ms\":2}",
	};
	for (size_t i = 0; i < sizeof badopts / sizeof badopts[0]; i++) {
		int32_t st = lock_acquire(c, "a", 1000, badopts[i], &l, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT, "options %s: status %d", badopts[i], st);
		CHECK(err != NULL, "options %s: err", badopts[i]);
		lock_string_free(err);
		err = NULL;
		st = lock_acquire_async(c, "a", 1000, badopts[i], on_done, &d, &h, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT, "async options %s: status %d", badopts[i], st);
		lock_string_free(err);
		err = NULL;
	}
	CHECK_ST(lock_acquire(c, "a", 1000, "{}", &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_extend(l, 0, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_extend(l, -5, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_extend(l, 86400001, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_info(l, NULL, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_extend_async(l, 0, on_done, &d, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_extend_async(l, 1000, NULL, &d, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_release_async(l, NULL, &d, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire_async(c, NULL, 1000, NULL, on_done, &d, &h, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire_async(c, "", 1000, NULL, on_done, &d, &h, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire_async(c, "a", 0, NULL, on_done, &d, &h, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_acquire_async(c, "a", 1000, NULL, NULL, &d, &h, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK(lock_free(l) == LOCK_OK, "free");
	/* Deliberate: proves a callback does NOT come, so lets the time pass in
	 * which a wrongly started operation would have called back. */
	sleep_ms(50);
	CHECK(calls_of(&d) == 0, "no callback after a rejected async call (%d)", calls_of(&d));
	CHECK(lock_free(c) == LOCK_OK, "free");
	done_destroy(&d);
}

static void test_bad_handles(void) {
	uint64_t c = new_client("t3:");
	uint64_t l = 0, freed_lock = 0, freed_client = 0, op = 0, out = 0;
	char *err = NULL, *js = NULL;
	done_t d;
	done_init(&d);
	CHECK_ST(lock_acquire(c, "h", 10000, NULL, &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "h2", 10000, NULL, &freed_lock, &err), LOCK_OK, &err);
	CHECK(lock_free(freed_lock) == LOCK_OK, "free");
	CHECK_ST(lock_client_new(config_json("t3:", node_timeout_ms), &freed_client, &err), LOCK_OK, &err);
	CHECK(lock_free(freed_client) == LOCK_OK, "free");
	/* a pending op handle: wait on the held resource */
	CHECK_ST(lock_acquire_async(c, "h", 10000, "{\"wait_ms\":60000}", on_done, &d, &op, &err), LOCK_OK, &err);
	/* the acquire returned at a quorum: let the other nodes' SETs land, so
	 * the count compared below is not a snapshot of one still on its way */
	int held_on = settled_nodes_with("t3:h", NULL, nnodes);
	CHECK(held_on >= quorum(), "held");

	uint64_t not_clients[] = {0, 123456789, (1ULL << 53) + 5, UINT64_MAX, freed_client, l, op, freed_lock};
	for (size_t i = 0; i < sizeof not_clients / sizeof not_clients[0]; i++) {
		uint64_t h = not_clients[i];
		CHECK_ST(lock_acquire(h, "x", 1000, NULL, &out, &err), LOCK_INVALID_HANDLE, &err);
		CHECK_ST(lock_acquire_async(h, "x", 1000, NULL, on_done, &d, &out, &err), LOCK_INVALID_HANDLE, &err);
	}
	uint64_t not_locks[] = {0, 123456789, (1ULL << 53) + 5, UINT64_MAX, freed_lock, c, op, freed_client};
	for (size_t i = 0; i < sizeof not_locks / sizeof not_locks[0]; i++) {
		uint64_t h = not_locks[i];
		CHECK_ST(lock_extend(h, 1000, &err), LOCK_INVALID_HANDLE, &err);
		CHECK_ST(lock_release(h, &err), LOCK_INVALID_HANDLE, &err);
		CHECK_ST(lock_extend_async(h, 1000, on_done, &d, &err), LOCK_INVALID_HANDLE, &err);
		CHECK_ST(lock_release_async(h, on_done, &d, &err), LOCK_INVALID_HANDLE, &err);
		CHECK_ST(lock_on_lost(h, on_done, &d, &err), LOCK_INVALID_HANDLE, &err);
		CHECK_ST(lock_info(h, &js, &err), LOCK_INVALID_HANDLE, &err);
	}
	uint64_t not_ops[] = {0, 123456789, UINT64_MAX, c, l, freed_lock};
	for (size_t i = 0; i < sizeof not_ops / sizeof not_ops[0]; i++)
		CHECK(lock_cancel(not_ops[i]) == LOCK_INVALID_HANDLE, "cancel of a non-op");
	uint64_t not_freeable[] = {0, 123456789, UINT64_MAX, freed_lock, freed_client, op};
	for (size_t i = 0; i < sizeof not_freeable / sizeof not_freeable[0]; i++)
		CHECK(lock_free(not_freeable[i]) == LOCK_INVALID_HANDLE, "free of %" PRIu64, not_freeable[i]);
	/* a handle problem wins over an argument problem */
	CHECK_ST(lock_acquire(0, NULL, 0, "bad", NULL, &err), LOCK_INVALID_HANDLE, &err);

	/* the op is still pending and the lock still held: nothing happened */
	CHECK(calls_of(&d) == 0, "no callback from rejected calls");
	CHECK(nodes_with("t3:h", NULL) == held_on, "lock still held");
	CHECK(lock_cancel(op) == LOCK_OK, "cancel");
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_CANCELED, "canceled: %d", d.status);
	CHECK(lock_cancel(op) == LOCK_INVALID_HANDLE, "cancel after callback");
	CHECK(lock_free(c) == LOCK_OK, "free");
	CHECK_ST(lock_info(l, &js, &err), LOCK_INVALID_HANDLE, &err); /* freed with its client */
	CHECK(lock_free(l) == LOCK_INVALID_HANDLE, "lock freed with its client");
	sleep_ms(20); /* deliberate: a window in which a second callback would come */
	CHECK(calls_of(&d) == 1, "exactly one callback");
	done_destroy(&d);
}

/* ----- contention ----- */

typedef struct {
	uint64_t client;
	int iterations;
	int acquired;
} worker_t;

static volatile int holders;
static volatile int overlaps;

static void *contender(void *arg) {
	worker_t *w = arg;
	for (int i = 0; i < w->iterations; i++) {
		uint64_t l = 0;
		char *err = NULL;
		int32_t st = lock_acquire(w->client, "contended", 5000, "{\"wait_ms\":20000}", &l, &err);
		if (!CHECK(st == LOCK_OK, "contended acquire: %d %s", st, err ? err : "")) {
			lock_string_free(err);
			continue;
		}
		if (__atomic_add_fetch(&holders, 1, __ATOMIC_SEQ_CST) != 1)
			__atomic_add_fetch(&overlaps, 1, __ATOMIC_SEQ_CST);
		usleep(200); /* deliberate: the section's work, so an overlapping holder would be seen */
		__atomic_sub_fetch(&holders, 1, __ATOMIC_SEQ_CST);
		st = lock_release(l, &err);
		CHECK(st == LOCK_OK, "contended release: %d %s", st, err ? err : "");
		lock_string_free(err);
		lock_free(l);
		w->acquired++;
	}
	return NULL;
}

static void test_contention(void) {
	/* two clients (two "processes"), four threads each */
	uint64_t c1 = new_client("t4:"), c2 = new_client("t4:");
	enum { NT = 8 };
	pthread_t th[NT];
	worker_t w[NT];
	int iters = quick ? 5 : 25;
	for (int i = 0; i < NT; i++) {
		w[i] = (worker_t){i % 2 ? c1 : c2, iters, 0};
		pthread_create(&th[i], NULL, contender, &w[i]);
	}
	int total = 0;
	for (int i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		total += w[i].acquired;
	}
	CHECK(total == NT * iters, "all acquired: %d of %d", total, NT * iters);
	CHECK(overlaps == 0, "at most one holder at a time: %d overlaps", overlaps);
	CHECK(settled_nodes_with("t4:contended", NULL, 0) == 0, "no key left");
	lock_free(c1);
	lock_free(c2);
}

/* ----- racing calls on one handle ----- */

static uint64_t race_handle;
static int race_status[2];
static void *race_free(void *arg) {
	race_status[(intptr_t)arg] = lock_free(race_handle);
	return NULL;
}
static void *race_release(void *arg) {
	race_status[(intptr_t)arg] = lock_release(race_handle, NULL);
	return NULL;
}
static void *race_extend(void *arg) {
	race_status[(intptr_t)arg] = lock_extend(race_handle, 5000, NULL);
	return NULL;
}

static void test_races(void) {
	uint64_t c = new_client("t5:");
	char *err = NULL;
	for (int i = 0; i < (quick ? 5 : 50); i++) {
		pthread_t a, b;
		/* two frees */
		CHECK_ST(lock_acquire(c, "race", 5000, NULL, &race_handle, &err), LOCK_OK, &err);
		pthread_create(&a, NULL, race_free, (void *)0);
		pthread_create(&b, NULL, race_free, (void *)1);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		CHECK((race_status[0] == LOCK_OK) + (race_status[1] == LOCK_OK) == 1 &&
		          (race_status[0] == LOCK_INVALID_HANDLE) + (race_status[1] == LOCK_INVALID_HANDLE) == 1,
		      "two frees: %d %d", race_status[0], race_status[1]);
		CHECK(settled_nodes_with("t5:race", NULL, 0) == 0, "freed");
		/* an extend racing a release */
		CHECK_ST(lock_acquire(c, "race", 5000, NULL, &race_handle, &err), LOCK_OK, &err);
		pthread_create(&a, NULL, race_extend, (void *)0);
		pthread_create(&b, NULL, race_release, (void *)1);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		CHECK((race_status[0] == LOCK_OK || race_status[0] == LOCK_LOST) && race_status[1] == LOCK_OK,
		      "extend/release race: %d %d", race_status[0], race_status[1]);
		CHECK(settled_nodes_with("t5:race", NULL, 0) == 0, "released, not re-acquired by the extend");
		/* a free racing a client free */
		CHECK_ST(lock_acquire(c, "race", 5000, NULL, &race_handle, &err), LOCK_OK, &err);
		if (i == 0) {
			uint64_t keep = race_handle, c2 = new_client("t5:");
			CHECK_ST(lock_acquire(c2, "race2", 5000, NULL, &race_handle, &err), LOCK_OK, &err);
			pthread_create(&a, NULL, race_free, (void *)0);
			CHECK(lock_free(c2) == LOCK_OK, "client free");
			pthread_join(a, NULL);
			CHECK(race_status[0] == LOCK_OK || race_status[0] == LOCK_INVALID_HANDLE, "free vs client free: %d",
			      race_status[0]);
			CHECK(settled_nodes_with("t5:race2", NULL, 0) == 0, "released by one of the frees");
			race_handle = keep;
		}
		CHECK(lock_free(race_handle) == LOCK_OK, "free");
	}
	lock_free(c);
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

static void test_reentrant(void) {
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

static void test_async(void) {
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

/* ----- loss ----- */

static void test_on_lost(void) {
	uint64_t c = new_client("t7:");
	char *err = NULL, tok[512], buf[64];
	uint64_t l = 0;
	done_t d;

	/* auto-extended lock whose keys are overwritten by someone else */
	done_init(&d);
	/* 1.5 s, not less: an extension is due every third of the ttl, and a
	 * loaded machine can stall the process for a few hundred ms */
	CHECK_ST(lock_acquire(c, "lost", 1500, "{\"auto_extend\":true}", &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l, on_done, &d, &err), LOCK_OK, &err);
	info_field(l, "token", tok, sizeof tok);
	/* Deliberate: the lock must outlive its ttl (1.5 s) thanks to the
	 * auto-extension; the checks below say it did. */
	sleep_ms(1700);
	CHECK(calls_of(&d) == 0, "auto-extended lock not lost");
	CHECK(nodes_with("t7:lost", tok) >= quorum(), "still held after its ttl");
	for (int i = 0; i < nnodes; i++)
		CHECK(rset(i, "t7:lost", "other") == 0, "overwrite node %d", i);
	CHECK(wait_done(&d, 1500 + (int)bound_ms()) == 1 && d.status == LOCK_LOST && d.handle == l, "on_lost: %d",
	      d.status);
	CHECK(!pthread_equal(d.thread, pthread_self()), "on_lost on a library thread");
	info_field(l, "lost", buf, sizeof buf);
	CHECK(strcmp(buf, "true") == 0, "lost %s", buf);
	CHECK_ST(lock_extend(l, 1000, &err), LOCK_LOST, &err);
	CHECK_ST(lock_release(l, &err), LOCK_LOST, &err);
	CHECK(settled_nodes_with("t7:lost", "other", nnodes) == nnodes, "another owner's key is never touched");
	sleep_ms(50); /* deliberate: a window in which a second on_lost would come */
	CHECK(calls_of(&d) == 1, "on_lost called once");
	CHECK(lock_free(l) == LOCK_OK, "free");
	for (int i = 0; i < nnodes; i++)
		rdel(i, "t7:lost");
	done_destroy(&d);

	/* a plain lock whose validity runs out; registering after the loss calls at once */
	done_init(&d);
	CHECK_ST(lock_acquire(c, "expire", 100, NULL, &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l, on_done, &d, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, 100 + (int)bound_ms()) == 1 && d.status == LOCK_LOST, "expired: %d", d.status);
	done_destroy(&d);
	done_init(&d);
	CHECK_ST(lock_on_lost(l, on_done, &d, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_LOST, "late registration: %d", d.status);
	done_destroy(&d);
	CHECK(lock_free(l) == LOCK_OK, "free");

	/* replaced, removed, and never after a release or a free */
	done_t d1, d2, d3;
	done_init(&d1);
	done_init(&d2);
	done_init(&d3);
	uint64_t l2 = 0, l3 = 0;
	CHECK_ST(lock_acquire(c, "quiet", 150, NULL, &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l, on_done, &d1, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l, on_done, &d2, &err), LOCK_OK, &err); /* replaces d1 */
	CHECK_ST(lock_acquire(c, "quiet2", 150, NULL, &l2, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l2, on_done, &d3, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l2, NULL, NULL, &err), LOCK_OK, &err); /* removed */
	CHECK_ST(lock_acquire(c, "quiet3", 150, NULL, &l3, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l3, on_done, &d3, &err), LOCK_OK, &err);
	CHECK(lock_free(l3) == LOCK_OK, "free"); /* freed: never called */
	CHECK(wait_done(&d2, 150 + (int)bound_ms()) == 1, "the replacement is called");
	/* Deliberate: proves callbacks do NOT come, so lets twice the locks'
	 * 150 ms ttl pass, by which they would have been called. */
	sleep_ms(300);
	CHECK(calls_of(&d1) == 0, "the replaced callback is not called");
	CHECK(calls_of(&d3) == 0, "removed / freed: not called");
	lock_free(l);
	lock_free(l2);
	/* 500 ms: the release must come before the lock expires, on a loaded
	 * machine too (with 150 ms a stall could make it LOCK_LOST) */
	CHECK_ST(lock_acquire(c, "quiet", 500, NULL, &l, &err), LOCK_OK, &err);
	done_init(&d);
	CHECK_ST(lock_on_lost(l, on_done, &d, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	sleep_ms(1000); /* deliberate: twice the ttl, by which an expiry would have called it */
	CHECK(calls_of(&d) == 0, "not called after a release");
	lock_free(l);
	done_destroy(&d);
	done_destroy(&d1);
	done_destroy(&d2);
	done_destroy(&d3);
	lock_free(c);
}

/* lock_client_on_lost: one callback for every lock of a client */
typedef struct {
	pthread_mutex_t mu;
	int calls;
	uint64_t handles[8];
	int32_t status[8];
} lost_all_t;

static void on_lost_all(void *ud, int32_t status, uint64_t handle, const char *err) {
	(void)err;
	lost_all_t *a = ud;
	pthread_mutex_lock(&a->mu);
	if (a->calls < 8) {
		a->handles[a->calls] = handle;
		a->status[a->calls] = status;
	}
	a->calls++;
	pthread_mutex_unlock(&a->mu);
}

static int lost_all_calls(lost_all_t *a) {
	pthread_mutex_lock(&a->mu);
	int c = a->calls;
	pthread_mutex_unlock(&a->mu);
	return c;
}

static void test_client_on_lost(void) {
	uint64_t c = new_client("t7b:"), l1 = 0, l2 = 0, l3 = 0, l4 = 0;
	char *err = NULL;
	lost_all_t a, none;
	memset(&a, 0, sizeof a);
	memset(&none, 0, sizeof none);
	pthread_mutex_init(&a.mu, NULL);
	pthread_mutex_init(&none.mu, NULL);
	done_t own, late;
	done_init(&own);
	done_init(&late);

	/* The client's first acquire dials and greets every node: under valgrind
	 * that alone can take longer than the short ttls below, so it goes first. */
	CHECK_ST(lock_acquire(c, "warm", 30000, NULL, &l1, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l1, &err), LOCK_OK, &err);
	lock_free(l1);
	CHECK_ST(lock_client_on_lost(c, on_lost_all, &none, &err), LOCK_OK, &err);
	CHECK_ST(lock_client_on_lost(c, on_lost_all, &a, &err), LOCK_OK, &err); /* replaces */
	/* two plain locks whose validity runs out (one with its own callback too),
	 * one released and one freed: the client's callback is told of the two lost */
	CHECK_ST(lock_acquire(c, "e1", 300, NULL, &l1, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "e2", 300, NULL, &l2, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l2, on_done, &own, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "r", 600, NULL, &l3, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l3, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "f", 300, NULL, &l4, &err), LOCK_OK, &err);
	CHECK(lock_free(l4) == LOCK_OK, "free");
	POLL_UNTIL(lost_all_calls(&a) >= 2, 300 + bound_ms());
	CHECK(wait_done(&own, (int)bound_ms()) == 1 && own.status == LOCK_LOST && own.handle == l2, "own: %d",
	      own.status);
	/* Deliberate: proves no further call comes (the released and freed
	 * locks' ttl, 600 ms, passes). */
	sleep_ms(700);
	pthread_mutex_lock(&a.mu);
	CHECK(a.calls == 2, "client callback: %d calls, want 2", a.calls);
	CHECK(a.calls >= 2 && a.status[0] == LOCK_LOST && a.status[1] == LOCK_LOST, "statuses");
	CHECK(a.calls >= 2 && ((a.handles[0] == l1 && a.handles[1] == l2) || (a.handles[0] == l2 && a.handles[1] == l1)),
	      "handles %" PRIu64 " %" PRIu64, a.handles[0], a.handles[1]);
	pthread_mutex_unlock(&a.mu);
	CHECK(lost_all_calls(&none) == 0, "the replaced client callback is not called");
	/* a lock's own callback registered after the loss runs; the client's is not told twice */
	CHECK_ST(lock_on_lost(l1, on_done, &late, &err), LOCK_OK, &err);
	CHECK(wait_done(&late, (int)bound_ms()) == 1 && late.handle == l1, "late own callback");
	CHECK(lost_all_calls(&a) == 2, "told once per lock");
	/* removed: not called */
	CHECK_ST(lock_client_on_lost(c, NULL, NULL, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "e3", 300, NULL, &l4, &err), LOCK_OK, &err);
	sleep_ms(900); /* deliberate: three times its ttl, by which it would have been called */
	CHECK(lost_all_calls(&a) == 2, "removed: not called");
	/* not a client handle */
	CHECK_ST(lock_client_on_lost(l1, on_lost_all, &a, &err), LOCK_INVALID_HANDLE, &err);
	CHECK_ST(lock_client_on_lost(0, on_lost_all, &a, &err), LOCK_INVALID_HANDLE, &err);
	lock_free(l1);
	lock_free(l2);
	lock_free(l3);
	lock_free(l4);
	lock_free(c);
	CHECK_ST(lock_client_on_lost(c, on_lost_all, &a, &err), LOCK_INVALID_HANDLE, &err);
	done_destroy(&own);
	done_destroy(&late);
	pthread_mutex_destroy(&a.mu);
	pthread_mutex_destroy(&none.mu);
}

/* ----- frozen and killed nodes ----- */

static void test_frozen(void) {
	int minority = (nnodes - 1) / 2, majority = nnodes / 2 + 1;
	uint64_t c = new_client("t8:"), l = 0, pre = 0;
	char *err = NULL;

	CHECK_ST(lock_acquire(c, "pre", 30000, NULL, &pre, &err), LOCK_OK, &err);
	/* a frozen minority: still acquires, extends and releases within the bound */
	for (int i = 0; i < minority; i++)
		freeze(i);
	double t0 = now_ms();
	CHECK_ST(lock_acquire(c, "frozen-min", 10000, NULL, &l, &err), LOCK_OK, &err);
	double el = now_ms() - t0;
	CHECK(el < bound_ms(), "frozen minority: acquire took %.0f ms (bound %.0f)", el, bound_ms());
	t0 = now_ms();
	CHECK_ST(lock_extend(l, 10000, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	el = now_ms() - t0;
	CHECK(el < 2 * bound_ms(), "frozen minority: extend+release took %.0f ms", el);
	lock_free(l);
	/* inspect still answers, each frozen node's entry saying why */
	t0 = now_ms();
	char *js = inspect_js(c, "pre", LOCK_OK);
	CHECK(now_ms() - t0 < bound_ms(), "frozen minority: inspect took %.0f ms", now_ms() - t0);
	if (js) {
		CHECK(strstr(js, "\"held\":true") && count_of(js, "\"error\":null") == nnodes - minority &&
		          count_of(js, "\"holder\":true") == nnodes - minority,
		      "frozen minority: %s", js);
		lock_string_free(js);
	}
	printf("# frozen minority (%d of %d): acquire ok\n", minority, nnodes);
	for (int i = 0; i < minority; i++)
		thaw(i);

	/* a frozen majority: LOCK_UNAVAILABLE within the bound, for every operation */
	for (int i = 0; i < majority; i++)
		freeze(i);
	t0 = now_ms();
	CHECK_ST(lock_acquire(c, "frozen-maj", 10000, NULL, &l, &err), LOCK_UNAVAILABLE, &err);
	el = now_ms() - t0;
	CHECK(el < bound_ms(), "frozen majority: acquire took %.0f ms (bound %.0f)", el, bound_ms());
	t0 = now_ms();
	CHECK_ST(lock_extend(pre, 30000, &err), LOCK_UNAVAILABLE, &err);
	CHECK(now_ms() - t0 < bound_ms(), "frozen majority: extend took %.0f ms", now_ms() - t0);
	t0 = now_ms();
	CHECK_ST(lock_release(pre, &err), LOCK_UNAVAILABLE, &err);
	CHECK(now_ms() - t0 < bound_ms(), "frozen majority: release took %.0f ms", now_ms() - t0);
	t0 = now_ms();
	CHECK(inspect_js(c, "pre", LOCK_UNAVAILABLE) == NULL, "frozen majority: inspect");
	CHECK(now_ms() - t0 < bound_ms(), "frozen majority: inspect took %.0f ms", now_ms() - t0);
	done_t d;
	done_init(&d);
	CHECK_ST(lock_acquire_async(c, "frozen-maj", 10000, NULL, on_done, &d, NULL, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_UNAVAILABLE, "async unavailable: %d", d.status);
	done_destroy(&d);
	printf("# frozen majority (%d of %d): unavailable\n", majority, nnodes);
	for (int i = 0; i < majority; i++)
		thaw(i);
	/* the release can be retried once the nodes are back. The first one's
	 * commands were in the frozen nodes' socket buffers and may have run at
	 * the thaw (README, "late commands on a frozen node"): then the retry
	 * finds no key and says LOCK_LOST. Either way no key is left. */
	int32_t st = lock_release(pre, &err);
	CHECK(st == LOCK_OK || st == LOCK_LOST, "release retried after the thaw: status %d (%s)", st, err ? err : "");
	lock_string_free(err);
	err = NULL;
	CHECK(settled_nodes_with("t8:pre", NULL, 0) == 0, "no key left after the retried release");
	lock_free(pre);
	/* a frozen acquire canceled: no key on the live nodes at once. The frozen
	 * nodes may still hold SETs in their socket buffers, which they run when
	 * thawed, after the cleanup that timed out: such a key holds only this
	 * (canceled) token and goes away by its ttl. */
	for (int i = 0; i < majority; i++)
		freeze(i);
	done_init(&d);
	uint64_t op = 0;
	CHECK_ST(lock_acquire_async(c, "frozen-cancel", 1000, "{\"wait_ms\":60000}", on_done, &d, &op, &err), LOCK_OK,
	         &err);
	/* Deliberate: two node timeouts, so the acquire's first attempt has met
	 * the frozen nodes and the cancel lands in its wait, with SETs still
	 * unanswered in the frozen nodes' buffers (what the scenario is about). */
	sleep_ms(node_timeout_ms * 2);
	CHECK(lock_cancel(op) == LOCK_OK, "cancel");
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_CANCELED, "canceled: %d", d.status);
	done_destroy(&d);
	CHECK(settled_nodes_with("t8:frozen-cancel", NULL, 0) == 0, "canceled acquire left no key on the live nodes");
	for (int i = 0; i < majority; i++)
		thaw(i);
	POLL_UNTIL(nodes_with("t8:frozen-cancel", NULL) == 0, 1000 + bound_ms());
	CHECK(settled_nodes_with("t8:frozen-cancel", NULL, 0) == 0, "late keys on thawed nodes expire by their ttl");
	lock_free(c);
}

static void test_killed(void) {
	int minority = (nnodes - 1) / 2, dead = 0;
	for (int i = 0; i < nnodes; i++)
		dead += node_dead[i];
	if (minority == 0 || dead >= minority)
		return;
	uint64_t c = new_client("t9:"), l = 0;
	char *err = NULL;
	/* a minority in all, with any node fence_killed killed */
	for (int i = nnodes - 1; i >= 0 && dead < minority; i--) {
		if (node_dead[i])
			continue;
		kill(node_pids[i], SIGKILL);
		node_dead[i] = 1;
		dead++;
	}
	POLL_UNTIL(dead_answering() == 0, bound_ms());
	CHECK(dead_answering() == 0, "the killed nodes are gone");
	double t0 = now_ms();
	CHECK_ST(lock_acquire(c, "killed", 10000, NULL, &l, &err), LOCK_OK, &err);
	CHECK(now_ms() - t0 < bound_ms(), "killed minority: acquire took %.0f ms", now_ms() - t0);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	lock_free(l);
	lock_free(c);
}

/* ----- a node frozen or killed in a fenced acquire's second round ----- */

/* build/faultproxy in front of every node: it signals the first `faults`
 * nodes that the fence round's command (fence.lua) reaches, just before it
 * does (see core/testkit/redistest/faultproxy). */
typedef struct {
	pid_t pid;
	FILE *in, *out;
	char urls[MAXN][64];
} fproxy;

static int fproxy_start(fproxy *p, const char *sig, int faults) {
	const char *bin = getenv("LIBLOCK_FAULTPROXY") ? getenv("LIBLOCK_FAULTPROXY") : "build/faultproxy";
	char fbuf[16], routes[MAXN][64];
	char *argv[8 + 2 * MAXN];
	int a = 0, to[2], from[2];
	snprintf(fbuf, sizeof fbuf, "%d", faults);
	argv[a++] = (char *)bin;
	argv[a++] = "-signal";
	argv[a++] = (char *)sig;
	argv[a++] = "-faults";
	argv[a++] = fbuf;
	argv[a++] = "-fence";
	for (int i = 0; i < nnodes; i++) {
		snprintf(routes[i], sizeof routes[i], "127.0.0.1:%d=%d", node_ports[i], (int)node_pids[i]);
		argv[a++] = "-route";
		argv[a++] = routes[i];
	}
	argv[a] = NULL;
	if (pipe2(to, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(from, O_CLOEXEC) != 0) {
		close(to[0]), close(to[1]);
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], 0);
	posix_spawn_file_actions_adddup2(&fa, from[1], 1);
	int rc = posix_spawn(&p->pid, bin, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(to[0]);
	close(from[1]);
	if (rc != 0) {
		fprintf(stderr, "spawn %s: %s (run make build)\n", bin, strerror(rc));
		close(to[1]), close(from[0]);
		return -1;
	}
	p->in = fdopen(to[1], "w");
	p->out = fdopen(from[0], "r");
	char line[MAXN * 64];
	if (!fgets(line, sizeof line, p->out))
		return -1;
	char *save = NULL, *t = strtok_r(line, " \n", &save);
	for (int i = 0; i < nnodes; i++, t = strtok_r(NULL, " \n", &save)) {
		if (!t)
			return -1;
		snprintf(p->urls[i], sizeof p->urls[i], "redis://%s", t);
	}
	return 0;
}

/* fproxy_fired fills idx with the nodes signalled so far; returns how many. */
static int fproxy_fired(fproxy *p, int *idx) {
	char line[512];
	fputs("fired\n", p->in);
	fflush(p->in);
	if (!fgets(line, sizeof line, p->out) || strncmp(line, "fired", 5) != 0)
		return -1;
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(line + 5, " \n", &save); t && n < MAXN; t = strtok_r(NULL, " \n", &save))
		idx[n++] = atoi(t);
	return n;
}

/* fproxy_stop: the end of its input ends it. */
static void fproxy_stop(fproxy *p) {
	if (p->in)
		fclose(p->in);
	if (p->out)
		fclose(p->out);
	int st;
	if (p->pid > 0)
		waitpid(p->pid, &st, 0);
}

/* The second round goes to the nodes whose grants made the first round's
 * quorum, and to the others as their grants come in. While the nodes not
 * signalled are a quorum, the acquire succeeds with a higher fence;
 * otherwise it fails with LOCK_UNAVAILABLE, naming the fence, within the
 * bound -- never a lock. Once the nodes are thawed no lock key is left (the
 * release or the cleanup, or the ttl), and the next fenced acquire's fence
 * is above the one before. A killed node stays dead (the LIBLOCK_TEST_KILL
 * run, just before test_killed, which counts it). */
static void fence_fault(const char *sig, int faults) {
	if (faults > quorum())
		return;
	uint64_t c = new_client("tff:"), fc = 0, l = 0;
	char *err = NULL, buf[512];
	int is_kill = strcmp(sig, "KILL") == 0;
	CHECK_ST(lock_acquire(c, "res", 5000, "{\"fence\":true}", &l, &err), LOCK_OK, &err);
	info_field(l, "fence", buf, sizeof buf);
	long long first = atoll(buf);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	lock_free(l);
	CHECK(settled_nodes_with("tff:res", NULL, 0) == 0, "released");

	fproxy p = {0};
	if (!CHECK(fproxy_start(&p, sig, faults) == 0, "faultproxy did not start")) {
		fproxy_stop(&p);
		lock_free(c);
		return;
	}
	const char *purls[MAXN];
	for (int i = 0; i < nnodes; i++)
		purls[i] = p.urls[i];
	CHECK_ST(lock_client_new(config_urls_json(purls, "tff:", node_timeout_ms), &fc, &err), LOCK_OK, &err);
	int ttl = 3 * node_timeout_ms + 1000; /* a key the cleanup cannot reach expires soon */
	l = 0;
	double t0 = now_ms();
	int32_t st = lock_acquire(fc, "res", ttl, "{\"fence\":true}", &l, &err);
	double el = now_ms() - t0;
	if (nnodes - faults >= quorum()) {
		/* the late grants take the fence instead of the signalled nodes */
		CHECK(st == LOCK_OK, "%s x%d in the fence round: status %d err %s", sig, faults, st, err ? err : "(null)");
		if (st == LOCK_OK) {
			info_field(l, "fence", buf, sizeof buf);
			CHECK(atoll(buf) > first, "%s x%d: fence %s after %lld", sig, faults, buf, first);
			first = atoll(buf);
			CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
		}
	} else {
		CHECK(st == LOCK_UNAVAILABLE && err && strstr(err, "fence"), "%s x%d in the fence round: status %d err %s",
		      sig, faults, st, err ? err : "(null)");
	}
	CHECK(el < bound_ms(), "%s x%d: acquire took %.0f ms (bound %.0f)", sig, faults, el, bound_ms());
	lock_string_free(err);
	err = NULL;
	if (st == LOCK_OK)
		lock_free(l);
	int fired[MAXN], nf = fproxy_fired(&p, fired);
	CHECK(nf == faults, "faultproxy signalled %d nodes, want %d", nf, faults);
	for (int k = 0; k < nf; k++) {
		if (is_kill)
			node_dead[fired[k]] = 1;
		else
			thaw(fired[k]);
	}
	CHECK(lock_free(fc) == LOCK_OK, "free the proxied client");
	fproxy_stop(&p);
	int left;
	POLL_UNTIL((left = nodes_with("tff:res", NULL)) == 0, ttl + 5000);
	CHECK(left == 0, "%s x%d: %d nodes still hold the lock key", sig, faults, left);

	CHECK_ST(lock_acquire(c, "res", 5000, "{\"fence\":true}", &l, &err), LOCK_OK, &err);
	info_field(l, "fence", buf, sizeof buf);
	CHECK(atoll(buf) > first, "%s x%d: fence %s after %lld", sig, faults, buf, first);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	lock_free(l);
	CHECK(settled_nodes_with("tff:res", NULL, 0) == 0, "released");
	lock_free(c);
}

static void test_fence_frozen_round(void) {
	fence_fault("STOP", 1);
	fence_fault("STOP", 2);
}

static void test_fence_killed_round(void) { fence_fault("KILL", 1); }

/* ----- leaks ----- */

static long rss_kb(void) {
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, res = 0;
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static int64_t settle_goroutines(int64_t target, int ms) {
	int64_t g;
	POLL_UNTIL((g = lock_debug_goroutines()) <= target, ms);
	return g;
}

static void test_leaks(void) {
	int64_t g0 = lock_debug_goroutines(), h0 = lock_debug_handles();
	/* A long node timeout: this test is about leaks, and a loaded machine
	 * must not turn a slow round trip into a failed cycle. */
	uint64_t c = 0;
	char *err = NULL;
	CHECK_ST(lock_client_new(config_json("t10:", node_timeout_ms > 2000 ? node_timeout_ms : 2000), &c, &err), LOCK_OK,
	         &err);
	int cycles = quick ? 200 : 20000, warm = quick ? 50 : 2000;
	for (int i = 0; i < warm; i++) {
		uint64_t l = 0;
		if (lock_acquire(c, "leak", 5000, NULL, &l, NULL) == LOCK_OK) {
			lock_release(l, NULL);
			lock_free(l);
		}
	}
	int64_t g1 = settle_goroutines(0, 200);
	long rss1 = rss_kb();
	double t0 = now_ms();
	int fails = 0;
	for (int i = 0; i < cycles; i++) {
		uint64_t l = 0;
		int32_t st = lock_acquire(c, "leak", 5000, NULL, &l, &err);
		if (st != LOCK_OK) {
			fails++;
			lock_string_free(err);
			err = NULL;
			continue;
		}
		if (lock_release(l, NULL) != LOCK_OK)
			fails++;
		if (lock_free(l) != LOCK_OK)
			fails++;
	}
	double el = now_ms() - t0;
	long rss2 = rss_kb();
	int64_t g2 = settle_goroutines(g1, 3000);
	CHECK(fails == 0, "%d failed cycles", fails);
	CHECK(g2 <= g1, "goroutines back to baseline: %" PRId64 " -> %" PRId64, g1, g2);
	CHECK(rss2 - rss1 < 8 * 1024, "RSS growth %ld kB", rss2 - rss1);
	printf("# leak: %d acquire/release/free cycles on %d nodes in %.1f s (%.0f us/cycle); RSS %ld kB -> %ld kB "
	       "(%+ld kB); goroutines %" PRId64 " -> %" PRId64 "\n",
	       cycles, nnodes, el / 1000, el * 1000 / cycles, rss1, rss2, rss2 - rss1, g1, g2);
	/* async: acquire, release, free, and acquires canceled while waiting */
	{
		int n = quick ? 50 : 2000, bad = 0;
		uint64_t held = 0;
		CHECK_ST(lock_acquire(c, "leak-held", 60000, NULL, &held, &err), LOCK_OK, &err);
		for (int i = 0; i < n; i++) {
			done_t d;
			done_init(&d);
			uint64_t op = 0;
			if (lock_acquire_async(c, "leak-async", 5000, NULL, on_done, &d, &op, NULL) != LOCK_OK ||
			    wait_done(&d, 5000) != 1 || d.status != LOCK_OK)
				bad++;
			else {
				uint64_t l = d.handle;
				done_destroy(&d);
				done_init(&d);
				if (lock_release_async(l, on_done, &d, NULL) != LOCK_OK || wait_done(&d, 5000) != 1 ||
				    d.status != LOCK_OK || lock_free(l) != LOCK_OK)
					bad++;
			}
			done_destroy(&d);
			done_init(&d);
			if (lock_acquire_async(c, "leak-held", 5000, "{\"wait_ms\":60000}", on_done, &d, &op, NULL) !=
			        LOCK_OK ||
			    lock_cancel(op) != LOCK_OK || wait_done(&d, 5000) != 1 || d.status != LOCK_CANCELED)
				bad++;
			done_destroy(&d);
		}
		CHECK(bad == 0, "%d bad async cycles", bad);
		lock_free(held);
		int64_t g4 = settle_goroutines(g1, 3000);
		CHECK(g4 <= g1, "goroutines back after async cycles: %" PRId64 " -> %" PRId64, g1, g4);
		printf("# leak: %d async acquire/release/free + acquire/cancel cycles; RSS now %ld kB; goroutines %" PRId64
		       "\n",
		       n, rss_kb(), g4);
	}
	CHECK(lock_free(c) == LOCK_OK, "free");
	int64_t g3 = settle_goroutines(g0, 3000);
	CHECK(g3 <= g0, "goroutines back to the pre-client baseline: %" PRId64 " -> %" PRId64, g0, g3);
	CHECK(lock_debug_handles() == h0, "handles back: %" PRId64 " -> %" PRId64, h0, lock_debug_handles());
}

/* A user_data that is a small integer, not an address, must come back
 * unchanged: Go's runtime kills the process if it keeps such a value as a
 * pointer. */
static void test_small_user_data(void) {
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
static void test_queue_wakeup(void) {
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

static void test_queue(void) {
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

/* ----- inspect, re-entry by token, fences (ABI v1 additions) ----- */

/* config_owner_json is config_json with "owner" (raw JSON text for the value). */
static char *config_owner_json(const char *prefix, const char *owner_value) {
	static char buf[9000];
	char *base = config_json(prefix, node_timeout_ms);
	size_t n = strlen(base);
	snprintf(buf, sizeof buf, "%.*s,\"owner\":%s}", (int)(n - 1), base, owner_value);
	return buf;
}

/* count_of counts the occurrences of pat in s. */
static int count_of(const char *s, const char *pat) {
	int n = 0;
	for (const char *p = s; (p = strstr(p, pat)) != NULL; p += strlen(pat))
		n++;
	return n;
}

/* inspect_js runs lock_inspect and returns its JSON (the caller frees it), or NULL. */
static char *inspect_js(uint64_t c, const char *res, int32_t want) {
	char *js = (char *)1, *err = NULL;
	int32_t st = lock_inspect(c, res, &js, &err);
	CHECK(st == want, "inspect %s: status %d, want %d: %s", res, st, want, err ? err : "");
	if (st != LOCK_OK) {
		CHECK(js == NULL, "inspection_json must be NULL on failure");
		CHECK(err != NULL, "err on failure");
		lock_string_free(err);
		return NULL;
	}
	CHECK(err == NULL && js != NULL, "inspect: js and err");
	return js;
}

/* A completion record for lock_inspect_callback. */
typedef struct {
	done_t d;
	char js[8192];
	int js_null;
} idone_t;

static void on_inspected(void *ud, int32_t status, const char *js, const char *err) {
	idone_t *x = ud;
	pthread_mutex_lock(&x->d.mu);
	x->d.calls++;
	x->d.status = status;
	x->d.thread = pthread_self();
	x->js_null = js == NULL;
	snprintf(x->js, sizeof x->js, "%s", js ? js : "");
	snprintf(x->d.err, sizeof x->d.err, "%s", err ? err : "");
	if (status == LOCK_OK && (err != NULL || js == NULL))
		snprintf(x->d.err, sizeof x->d.err, "BUG: err not NULL or json NULL on LOCK_OK");
	if (status != LOCK_OK && (err == NULL || js != NULL))
		snprintf(x->d.err, sizeof x->d.err, "BUG: err NULL or json set on failure");
	pthread_cond_broadcast(&x->d.cv);
	pthread_mutex_unlock(&x->d.mu);
}

static void test_inspect(void) {
	uint64_t a = 0, b = new_client("ti:"), l = 0;
	char *err = NULL, buf[512], tok[512];
	CHECK_ST(lock_client_new(config_owner_json("ti:", "\"worker-7\""), &a, &err), LOCK_OK, &err);

	/* a free resource */
	char *js = inspect_js(b, "insp", LOCK_OK);
	if (js) {
		CHECK(strstr(js, "\"held\":false") && strstr(js, "\"validity_ms\":0,") && strstr(js, "\"owner\":\"\""),
		      "free: %s", js);
		CHECK(count_of(js, "\"node\":") == nnodes && count_of(js, "\"locked\":false") == nnodes &&
		          count_of(js, "\"error\":null") == nnodes && count_of(js, "\"ttl_ms\":-1") == nnodes,
		      "free nodes: %s", js);
		CHECK(strstr(js, "\"addr\":\"127.0.0.1:") != NULL, "addr: %s", js);
		lock_string_free(js);
	}
	/* held, with the owner label */
	CHECK_ST(lock_acquire(a, "insp", 10000, NULL, &l, &err), LOCK_OK, &err);
	info_field(l, "token", tok, sizeof tok);
	CHECK(strncmp(tok, "worker-7/", 9) == 0 && strlen(tok) == 9 + 36, "owner token %s", tok);
	CHECK(settled_nodes_with("ti:insp", tok, nnodes) == nnodes, "the labelled token is on every node");
	js = inspect_js(b, "insp", LOCK_OK);
	if (js) {
		CHECK(strstr(js, "\"held\":true") && json_field(js, "validity_ms", buf, sizeof buf) == 0 && atol(buf) > 9000 &&
		          atol(buf) <= 10000,
		      "held: %s", js);
		CHECK(json_field(js, "owner", buf, sizeof buf) == 0 && strcmp(buf, "worker-7") == 0, "owner: %s", js);
		CHECK(count_of(js, "\"holder\":true") == nnodes && count_of(js, "\"owner\":\"worker-7\"") == nnodes + 1,
		      "held nodes: %s", js);
		lock_string_free(js);
	}
	/* the async form: the same answer through lock_inspect_callback */
	idone_t x;
	memset(&x, 0, sizeof x);
	done_init(&x.d);
	uint64_t op = 0;
	CHECK_ST(lock_inspect_async(a, "insp", on_inspected, &x, &op, &err), LOCK_OK, &err);
	CHECK(op != 0 && op < (1ULL << 53), "op handle");
	CHECK(wait_done(&x.d, (int)bound_ms()) == 1 && x.d.status == LOCK_OK, "async inspect: %d %s", x.d.status, x.d.err);
	CHECK(!pthread_equal(x.d.thread, pthread_self()), "callback on a library thread");
	CHECK(strstr(x.js, "\"held\":true") && strstr(x.js, "\"owner\":\"worker-7\""), "async json: %s", x.js);
	CHECK(lock_cancel(op) == LOCK_INVALID_HANDLE, "op handle ends with its callback");
	done_destroy(&x.d);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	lock_free(l);

	/* another program's key: held, no owner; without expiry: validity -1 */
	for (int i = 0; i < nnodes; i++) {
		char out[256];
		const char *argv[] = {"SET", "ti:insp", "legacy", "PX", "60000"};
		CHECK(rcmd(i, out, sizeof out, 5, argv) == 0 && strncmp(out, "+OK", 3) == 0, "SET PX: %s", out);
	}
	js = inspect_js(a, "insp", LOCK_OK);
	if (js) {
		CHECK(strstr(js, "\"held\":true") && json_field(js, "validity_ms", buf, sizeof buf) == 0 && atol(buf) > 50000,
		      "foreign: %s", js);
		CHECK(json_field(js, "owner", buf, sizeof buf) == 0 && buf[0] == 0 && count_of(js, "\"owner\":\"\"") == nnodes + 1,
		      "foreign owner: %s", js);
		lock_string_free(js);
	}
	for (int i = 0; i < nnodes; i++)
		rset(i, "ti:insp", "forever");
	js = inspect_js(a, "insp", LOCK_OK);
	if (js) {
		CHECK(strstr(js, "\"held\":true,\"validity_ms\":-1,") && count_of(js, "\"ttl_ms\":-1") == nnodes,
		      "no expiry: %s", js);
		lock_string_free(js);
	}
	CHECK_ST(lock_acquire(a, "insp", 1000, NULL, &l, &err), LOCK_NOT_ACQUIRED, &err);
	/* a minority's value is no holder */
	if (nnodes >= 3) {
		rset(0, "ti:insp", "other");
		for (int i = 1; i < nnodes; i++)
			rdel(i, "ti:insp");
		js = inspect_js(a, "insp", LOCK_OK);
		if (js) {
			CHECK(strstr(js, "\"held\":false") && count_of(js, "\"locked\":true") == 1 &&
			          count_of(js, "\"holder\":true") == 0,
			      "split: %s", js);
			lock_string_free(js);
		}
	}
	for (int i = 0; i < nnodes; i++)
		rdel(i, "ti:insp");
	CHECK(lock_free(a) == LOCK_OK, "free");
	CHECK(lock_free(b) == LOCK_OK, "free");
}

static void test_reenter(void) {
	uint64_t a = new_client("tr:"), b = new_client("tr:"), l = 0, h = 0, f = 0, x = 0;
	char *err = NULL, tok[512], tok2[512], buf[512], opts[1200];
	CHECK_ST(lock_acquire(a, "re", 2000, NULL, &l, &err), LOCK_OK, &err);
	info_field(l, "reentered", buf, sizeof buf);
	CHECK(strcmp(buf, "false") == 0, "a fresh lock: reentered %s", buf);
	info_field(l, "fence", buf, sizeof buf);
	CHECK(strcmp(buf, "0") == 0, "fence without asking: %s", buf);
	info_field(l, "token", tok, sizeof tok);
	/* the acquire returned at a quorum: let every node's grant land, or the
	 * re-entry could meet a node before it (a fresh grant there) and count a
	 * re-entry on too few nodes */
	CHECK(settled_nodes_with("tr:re", tok, nnodes) == nnodes, "the token on every node");
	/* b re-enters a's lock with a's token, its ttl raised */
	snprintf(opts, sizeof opts, "{\"token\":\"%s\"}", tok);
	CHECK_ST(lock_acquire(b, "re", 20000, opts, &h, &err), LOCK_OK, &err);
	info_field(h, "reentered", buf, sizeof buf);
	CHECK(strcmp(buf, "true") == 0, "re-entry: reentered %s", buf);
	info_field(h, "token", tok2, sizeof tok2);
	CHECK(strcmp(tok, tok2) == 0, "re-entry token %s vs %s", tok2, tok);
	info_field(h, "validity_ms", buf, sizeof buf);
	CHECK(atol(buf) > 19000, "re-entry validity %s", buf);
	{ /* the re-entry returned once a quorum answered: the rest follow */
		int raised;
		POLL_UNTIL((raised = nodes_pttl_above("tr:re", 10000)) == nnodes, bound_ms());
		CHECK(raised == nnodes, "ttl raised on %d of %d nodes", raised, nnodes);
	}
	CHECK(settled_nodes_with("tr:re", tok, nnodes) == nnodes, "one key, one token");
	/* another token does not get in */
	CHECK_ST(lock_acquire(b, "re", 1000, "{\"token\":\"someone-elses-token-0123\",\"wait_ms\":0}", &x, &err),
	         LOCK_NOT_ACQUIRED, &err);
	/* released once for both */
	CHECK_ST(lock_release(h, &err), LOCK_OK, &err);
	CHECK(settled_nodes_with("tr:re", NULL, 0) == 0, "the hand-over's release deleted the key");
	CHECK_ST(lock_release(l, &err), LOCK_LOST, &err);
	lock_free(h);
	lock_free(l);
	/* an unknown token on a free resource: an ordinary acquire with it */
	CHECK_ST(lock_acquire(b, "re", 5000, "{\"token\":\"a-token-of-my-own-0001\",\"auto_extend\":true}", &f, &err), LOCK_OK,
	         &err);
	info_field(f, "reentered", buf, sizeof buf);
	CHECK(strcmp(buf, "false") == 0, "fresh token: reentered %s", buf);
	info_field(f, "token", buf, sizeof buf);
	CHECK(strcmp(buf, "a-token-of-my-own-0001") == 0, "fresh token: %s", buf);
	CHECK(settled_nodes_with("tr:re", "a-token-of-my-own-0001", nnodes) == nnodes, "the caller's token is the value");
	/* the async form re-enters too */
	done_t d;
	done_init(&d);
	CHECK_ST(lock_acquire_async(a, "re", 5000, "{\"token\":\"a-token-of-my-own-0001\"}", on_done, &d, NULL, &err), LOCK_OK,
	         &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_OK && d.handle != 0, "async re-entry: %d %s", d.status,
	      d.err);
	if (d.status == LOCK_OK) {
		info_field(d.handle, "reentered", buf, sizeof buf);
		CHECK(strcmp(buf, "true") == 0, "async re-entry: reentered %s", buf);
		CHECK(lock_free(d.handle) == LOCK_OK, "free of the re-entered lock releases it");
	}
	done_destroy(&d);
	CHECK(settled_nodes_with("tr:re", NULL, 0) == 0, "freed once for both");
	CHECK_ST(lock_release(f, &err), LOCK_LOST, &err);
	lock_free(f);
	CHECK(lock_free(a) == LOCK_OK, "free");
	CHECK(lock_free(b) == LOCK_OK, "free");
}

static void test_fence(void) {
	uint64_t c[2] = {new_client("tf:"), new_client("tf:")}, l = 0;
	char *err = NULL, buf[512];
	long long last = 0;
	int n = quick ? 4 : 10;
	for (int i = 0; i < n; i++) {
		CHECK_ST(lock_acquire(c[i % 2], "fenced", 5000, "{\"fence\":true,\"wait_ms\":5000}", &l, &err), LOCK_OK, &err);
		info_field(l, "fence", buf, sizeof buf);
		long long f = atoll(buf);
		CHECK(f > last && f >= 1, "fence %lld after %lld", f, last);
		last = f;
		info_field(l, "reentered", buf, sizeof buf);
		CHECK(strcmp(buf, "false") == 0, "fenced: reentered %s", buf);
		CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
		lock_free(l);
	}
	/* async, and auto_extend with a fence */
	done_t d;
	done_init(&d);
	CHECK_ST(lock_acquire_async(c[0], "fenced", 5000, "{\"fence\":true,\"auto_extend\":true}", on_done, &d, NULL, &err),
	         LOCK_OK, &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_OK, "async fenced: %d %s", d.status, d.err);
	if (d.status == LOCK_OK) {
		info_field(d.handle, "fence", buf, sizeof buf);
		CHECK(atoll(buf) > last, "async fence %s after %lld", buf, last);
		lock_free(d.handle);
	}
	done_destroy(&d);
	/* a lock without "fence" has fence 0 */
	CHECK_ST(lock_acquire(c[1], "fenced", 5000, "{\"fence\":false}", &l, &err), LOCK_OK, &err);
	info_field(l, "fence", buf, sizeof buf);
	CHECK(strcmp(buf, "0") == 0, "unfenced: %s", buf);
	lock_free(l);
	/* fence with token: refused, naming fence */
	const char *both[] = {"{\"fence\":true,\"token\":\"0123456789abcdef\"}", "{\"token\":\"0123456789abcdef\",\"fence\":true}"};
	for (int i = 0; i < 2; i++) {
		int32_t st = lock_acquire(c[0], "fenced", 5000, both[i], &l, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT && err && strstr(err, "fence"), "%s: %d %s", both[i], st, err ? err : "");
		lock_string_free(err);
		err = NULL;
		done_init(&d);
		st = lock_acquire_async(c[0], "fenced", 5000, both[i], on_done, &d, NULL, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT && err && strstr(err, "fence"), "async %s: %d %s", both[i], st, err ? err : "");
		lock_string_free(err);
		err = NULL;
		sleep_ms(10); /* deliberate: a window in which a wrong callback would come */
		CHECK(calls_of(&d) == 0, "no callback after a rejected call");
		done_destroy(&d);
	}
	CHECK(settled_nodes_with("tf:fenced", NULL, 0) == 0, "released");
	CHECK(lock_free(c[0]) == LOCK_OK && lock_free(c[1]) == LOCK_OK, "free");
}

/* expect_arg checks LOCK_INVALID_ARGUMENT with a message naming name. */
#define EXPECT_ARG(call, name, errp) expect_arg_((call), (name), (errp), __FILE__, __LINE__, #call)
static void expect_arg_(int32_t st, const char *name, char **errp, const char *file, int line, const char *expr) {
	char pat[128];
	snprintf(pat, sizeof pat, "invalid argument: %s:", name);
	check_(st == LOCK_INVALID_ARGUMENT && *errp && strstr(*errp, pat), file, line, expr,
	       "status %d err=%s, want LOCK_INVALID_ARGUMENT naming %s", st, *errp ? *errp : "(null)", name);
	lock_string_free(*errp);
	*errp = NULL;
}

static void test_new_bad_arguments(void) {
	char *err = NULL, *js = NULL, big[1100], cfg[9500];
	uint64_t c = 0, l = 0, op = 0, freed = 0;
	idone_t x;
	memset(&x, 0, sizeof x);
	done_init(&x.d);
	/* config "owner" */
	struct {
		const char *value, *name;
	} owners[] = {{"\"a/b\"", "owner"},   {"5", "owner"},           {"null", "owner"},         {"true", "owner"},
	              {"[\"x\"]", "owner"},   {"\"x\",\"owner\":\"y\"", "config"}};
	for (size_t i = 0; i < sizeof owners / sizeof owners[0]; i++) {
		c = 77;
		EXPECT_ARG(lock_client_new(config_owner_json("tb:", owners[i].value), &c, &err), owners[i].name, &err);
		CHECK(c == 77, "out_client untouched on failure");
		EXPECT_ARG(lock_engine_new(config_owner_json("tb:", owners[i].value), &c, &err), owners[i].name, &err);
	}
	big[0] = '"';
	memset(big + 1, 'o', 129);
	big[130] = '"', big[131] = 0;
	EXPECT_ARG(lock_client_new(config_owner_json("tb:", big), &c, &err), "owner", &err); /* 129 bytes */
	big[129] = '"', big[130] = 0;                                                       /* 128 bytes: fine */
	snprintf(cfg, sizeof cfg, "%s", config_owner_json("tb:", big));
	CHECK_ST(lock_client_new(cfg, &c, &err), LOCK_OK, &err);
	CHECK(lock_free(c) == LOCK_OK, "free");
	CHECK_ST(lock_client_new(config_owner_json("tb:", "\"\""), &c, &err), LOCK_OK, &err); /* "" is no label */
	CHECK(lock_free(c) == LOCK_OK, "free");
	CHECK_ST(lock_client_new(config_owner_json("tb:", "\"w\xc3\xa9 7\""), &c, &err), LOCK_OK, &err); /* UTF-8 */
	CHECK(lock_free(c) == LOCK_OK, "free");
	EXPECT_ARG(lock_client_new(config_owner_json("tb:", "\"\xff\""), &c, &err), "config", &err); /* not UTF-8 */

	/* options "token" and "fence": each bad value names its key */
	c = new_client("tb:");
	char longtok[600];
	int k = snprintf(longtok, sizeof longtok, "{\"token\":\"");
	memset(longtok + k, 't', 513);
	strcpy(longtok + k + 513, "\"}"); /* 513 bytes */
	struct {
		const char *opts, *name;
	} badopts[] = {
	    {"{\"token\":\"short\"}", "token"},
	    {"{\"token\":\"0123456789abcde\"}", "token"}, /* 15 bytes */
	    {"{\"token\":\"\"}", "token"},
	    {longtok, "token"},
	    {"{\"token\":5}", "token"},
	    {"{\"token\":null}", "token"},
	    {"{\"token\":true}", "token"},
	    {"{\"token\":[\"0123456789abcdef\"]}", "token"},
	    {"{\"token\":{}}", "token"},
	    {"{\"fence\":1}", "fence"},
	    {"{\"fence\":\"true\"}", "fence"},
	    {"{\"fence\":null}", "fence"},
	    {"{\"fence\":[]}", "fence"},
	    {"{\"fence\":true,\"token\":\"0123456789abcdef\"}", "fence"},
	    {"{\"fence\":true,\"fence\":true}", "options"},
	    {"{\"token\":\"0123456789abcdef\",\"token\":\"0123456789abcdef\"}", "options"},
	    {"{\"Fence\":true}", "options"},
	    {"{\"fencing\":true}", "options"},
	    {"{\"fence\":true,}", "options"},
	    {"{\"token\":\"\xff" "0123456789abcdef\"}", "options"},
	};
	done_t d;
	done_init(&d);
	for (size_t i = 0; i < sizeof badopts / sizeof badopts[0]; i++) {
		EXPECT_ARG(lock_acquire(c, "a", 1000, badopts[i].opts, &l, &err), badopts[i].name, &err);
		EXPECT_ARG(lock_acquire_async(c, "a", 1000, badopts[i].opts, on_done, &d, &op, &err), badopts[i].name, &err);
	}
	/* 16 and 512 bytes are fine */
	CHECK_ST(lock_acquire(c, "a", 1000, "{\"token\":\"0123456789abcdef\"}", &l, &err), LOCK_OK, &err);
	lock_free(l);
	strcpy(longtok + k + 512, "\"}"); /* 512 bytes */
	CHECK_ST(lock_acquire(c, "a", 1000, longtok, &l, &err), LOCK_OK, &err);
	lock_free(l);

	/* lock_inspect and lock_inspect_async: bad handles (checked first) */
	CHECK_ST(lock_client_new(config_json("tb:", node_timeout_ms), &freed, &err), LOCK_OK, &err);
	CHECK(lock_free(freed) == LOCK_OK, "free");
	CHECK_ST(lock_acquire(c, "held", 10000, NULL, &l, &err), LOCK_OK, &err);
	uint64_t not_clients[] = {0, 123456789, (1ULL << 53) + 5, UINT64_MAX, freed, l};
	for (size_t i = 0; i < sizeof not_clients / sizeof not_clients[0]; i++) {
		js = (char *)1;
		CHECK_ST(lock_inspect(not_clients[i], "x", &js, &err), LOCK_INVALID_HANDLE, &err);
		CHECK(js == NULL, "inspection_json NULL on failure");
		CHECK_ST(lock_inspect_async(not_clients[i], "x", on_inspected, &x, &op, &err), LOCK_INVALID_HANDLE, &err);
		CHECK_ST(lock_inspect(not_clients[i], NULL, NULL, &err), LOCK_INVALID_HANDLE, &err);
	}
	/* bad arguments, each named */
	memset(big, 'r', 1025);
	big[1025] = 0;
	const char *badres[] = {NULL, "", big, "\xff\xfe", "ok\xc3"};
	for (size_t i = 0; i < sizeof badres / sizeof badres[0]; i++) {
		js = (char *)1;
		EXPECT_ARG(lock_inspect(c, badres[i], &js, &err), "resource", &err);
		CHECK(js == NULL, "inspection_json NULL on failure");
		EXPECT_ARG(lock_inspect_async(c, badres[i], on_inspected, &x, &op, &err), "resource", &err);
	}
	EXPECT_ARG(lock_inspect(c, "x", NULL, &err), "inspection_json", &err);
	EXPECT_ARG(lock_inspect_async(c, "x", NULL, &x, &op, &err), "cb", &err);
	CHECK(lock_inspect(c, NULL, &js, NULL) == LOCK_INVALID_ARGUMENT && js == NULL, "NULL err is fine");
	big[1024] = 0; /* exactly 1024 bytes is fine */
	js = inspect_js(c, big, LOCK_OK);
	lock_string_free(js);
	js = NULL;
	sleep_ms(20); /* deliberate: a window in which a wrong callback would come */
	CHECK(calls_of(&x.d) == 0, "no callback after a rejected call");
	/* NULL out_op and NULL err are fine */
	CHECK(lock_inspect_async(c, "held", on_inspected, &x, NULL, NULL) == LOCK_OK, "async, NULL out_op");
	CHECK(wait_done(&x.d, (int)bound_ms()) == 1 && x.d.status == LOCK_OK && strstr(x.js, "\"held\":true"), "async: %d %s",
	      x.d.status, x.d.err);
	/* an inspect op handle: lock_cancel takes it, nothing else does */
	done_destroy(&x.d);
	memset(&x, 0, sizeof x);
	done_init(&x.d);
	CHECK_ST(lock_inspect_async(c, "held", on_inspected, &x, &op, &err), LOCK_OK, &err);
	CHECK(lock_free(op) == LOCK_INVALID_HANDLE, "lock_free of an op");
	CHECK_ST(lock_info(op, &js, &err), LOCK_INVALID_HANDLE, &err);
	CHECK_ST(lock_inspect(op, "x", &js, &err), LOCK_INVALID_HANDLE, &err);
	int32_t cst = lock_cancel(op);
	CHECK(wait_done(&x.d, (int)bound_ms()) == 1, "one callback after cancel");
	CHECK((cst == LOCK_OK && x.d.status == LOCK_CANCELED && x.js_null) || (cst == LOCK_INVALID_HANDLE && x.d.status == LOCK_OK),
	      "cancel %d, outcome %d %s", cst, x.d.status, x.d.err);
	CHECK(lock_cancel(op) == LOCK_INVALID_HANDLE, "cancel after the callback");
	/* a client freed under pending inspections: one callback each */
	idone_t many[8];
	for (int i = 0; i < 8; i++) {
		memset(&many[i], 0, sizeof many[i]);
		done_init(&many[i].d);
		CHECK_ST(lock_inspect_async(c, "held", on_inspected, &many[i], NULL, &err), LOCK_OK, &err);
	}
	CHECK(lock_free(c) == LOCK_OK, "free client");
	for (int i = 0; i < 8; i++) {
		CHECK(wait_done(&many[i].d, (int)bound_ms()) == 1 &&
		          (many[i].d.status == LOCK_OK || many[i].d.status == LOCK_CANCELED),
		      "pending inspect %d: %d %s", i, many[i].d.status, many[i].d.err);
	}
	sleep_ms(20); /* deliberate: a window in which a second callback would come */
	for (int i = 0; i < 8; i++) {
		CHECK(calls_of(&many[i].d) == 1, "exactly one callback");
		done_destroy(&many[i].d);
	}
	CHECK_ST(lock_inspect(c, "held", &js, &err), LOCK_INVALID_HANDLE, &err);
	CHECK(settled_nodes_with("tb:held", NULL, 0) == 0, "the client's lock was released");
	done_destroy(&x.d);
	done_destroy(&d);
}

/* ---- The engine interface: a host with plain blocking sockets and poll() ---- */

typedef struct {
	uint8_t b[2048];
	size_t n;
} ev_t;
static void ev_u8(ev_t *e, uint8_t v) { e->b[e->n++] = v; }
static void ev_u32(ev_t *e, uint32_t v) {
	for (int i = 0; i < 4; i++)
		ev_u8(e, (uint8_t)(v >> (8 * i)));
}
static void ev_u64(ev_t *e, uint64_t v) {
	for (int i = 0; i < 8; i++)
		ev_u8(e, (uint8_t)(v >> (8 * i)));
}
static void ev_bytes(ev_t *e, const void *p, size_t n) {
	ev_u32(e, (uint32_t)n);
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

#define ENG_CONNS 64
typedef struct {
	uint64_t eng;
	int fd[ENG_CONNS + 1]; /* by conn id (the engine counts them from 1) */
	uint8_t *out;
	double timer_at; /* ms, 0: none */
	uint64_t started, done_op, done_lock, lock_seen;
	int32_t done_status, rejected, closed, info_ok;
	char token[128];
	uint32_t opened[ENG_CONNS];
	int nopened;
	int failures; /* unexpected decode or step errors */
	/* the order of actions: FENCE must come right before its DONE */
	int seq, fence_seq, done_seq, fences;
	uint64_t fence_lock;
	int64_t fence;
	int fence_reentered;
	/* the last INSPECTED */
	uint64_t inspected_op;
	int inspected_held, inspected_nodes, inspected_locked, inspected_failed, inspected_readers;
	int64_t inspected_validity;
	char inspected_owner[128];
} ehost;

typedef struct {
	const uint8_t *p;
	size_t n, i;
	int bad;
} rd_t;
static uint64_t rd_n(rd_t *r, int w) {
	if (r->i + (size_t)w > r->n) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (int k = 0; k < w; k++)
		v |= (uint64_t)r->p[r->i + (size_t)k] << (8 * k);
	r->i += (size_t)w;
	return v;
}
/* rd_str returns the bytes of a str/bytes field (not NUL-terminated). */
static const uint8_t *rd_str(rd_t *r, uint32_t *len) {
	*len = (uint32_t)rd_n(r, 4);
	if (r->bad || r->i + *len > r->n) {
		r->bad = 1;
		*len = 0;
		return NULL;
	}
	const uint8_t *p = r->p + r->i;
	r->i += *len;
	return p;
}
/* The last error record with a status: its argument and, for a value out of
 * its range (engine protocol 4), the bound crossed, its value, unit and the
 * value given. */
static struct {
	char arg[64], bound[8], unit[16];
	int64_t limit, got;
} last_err;

/* rd_cpy copies a str field into dst (NUL-terminated, cut to fit). */
static void rd_cpy(rd_t *r, char *dst, size_t cap) {
	uint32_t l;
	const uint8_t *p = rd_str(r, &l);
	size_t n = p && l < cap ? l : 0;
	if (n)
		memcpy(dst, p, n);
	dst[n] = 0;
}

/* rd_err reads an error record: i32 status, str message, str a, str b,
 * u16 n, n x (u16 node, str addr, str cause), str bound, i64 limit,
 * str unit, i64 got. */
static int32_t rd_err(rd_t *r) {
	uint32_t l;
	char arg[64], bound[8], unit[16];
	int32_t st = (int32_t)rd_n(r, 4);
	rd_str(r, &l);
	rd_cpy(r, arg, sizeof arg);
	rd_str(r, &l);
	int nn = (int)rd_n(r, 2);
	for (int k = 0; k < nn && !r->bad; k++)
		rd_n(r, 2), rd_str(r, &l), rd_str(r, &l);
	rd_cpy(r, bound, sizeof bound);
	int64_t limit = (int64_t)rd_n(r, 8);
	rd_cpy(r, unit, sizeof unit);
	int64_t got = (int64_t)rd_n(r, 8);
	if (st != 0 && !r->bad) {
		memcpy(last_err.arg, arg, sizeof arg);
		memcpy(last_err.bound, bound, sizeof bound);
		memcpy(last_err.unit, unit, sizeof unit);
		last_err.limit = limit, last_err.got = got;
	}
	return st;
}

/* bound_is reports whether the last rejection named arg and its bound. */
static int bound_is(const char *arg, const char *bound, int64_t limit, const char *unit, int64_t got) {
	return strcmp(last_err.arg, arg) == 0 && strcmp(last_err.bound, bound) == 0 && last_err.limit == limit &&
	       strcmp(last_err.unit, unit) == 0 && last_err.got == got;
}

static void eh_step(ehost *h, const ev_t *e);

/* eh_act carries out the actions in out[0..n). Opens are connected at once
 * (blocking) and reported after the whole buffer. */
static void eh_act(ehost *h, size_t n) {
	rd_t r = {h->out, n, 0, 0};
	while (r.i < r.n && !r.bad) {
		uint32_t l, conn;
		const uint8_t *p;
		switch ((int)rd_n(&r, 1)) {
		case 1: { /* OPEN */
			conn = (uint32_t)rd_n(&r, 4);
			rd_n(&r, 4), rd_n(&r, 1);
			rd_str(&r, &l);
			p = rd_str(&r, &l);
			char addr[256] = {0};
			memcpy(addr, p, l < 255 ? l : 255);
			rd_str(&r, &l);
			char *colon = strrchr(addr, ':');
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in sa = {0};
			sa.sin_family = AF_INET;
			sa.sin_port = htons((uint16_t)atoi(colon ? colon + 1 : "0"));
			sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			if (conn <= ENG_CONNS && fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
				h->fd[conn] = fd;
				h->opened[h->nopened++] = conn;
			} else {
				if (fd >= 0)
					close(fd);
				h->failures++;
			}
			break;
		}
		case 2: /* WRITE */
			conn = (uint32_t)rd_n(&r, 4);
			p = rd_str(&r, &l);
			if (conn <= ENG_CONNS && h->fd[conn] >= 0 && p)
				for (size_t off = 0; off < l;) {
					ssize_t w = write(h->fd[conn], p + off, l - off);
					if (w <= 0)
						break;
					off += (size_t)w;
				}
			break;
		case 3: /* CLOSE */
			conn = (uint32_t)rd_n(&r, 4);
			if (conn <= ENG_CONNS && h->fd[conn] >= 0) {
				close(h->fd[conn]);
				h->fd[conn] = -1;
			}
			break;
		case 4: { /* DONE: u64 op, u64 lock, i64 fence, u8 reentered, error (engine protocol 2) */
			h->done_seq = ++h->seq;
			h->done_op = rd_n(&r, 8);
			h->done_lock = rd_n(&r, 8);
			int64_t fence = (int64_t)rd_n(&r, 8);
			int reentered = (int)rd_n(&r, 1);
			if (h->done_lock != 0 && (fence != 0 || reentered)) {
				h->fence_seq = h->done_seq;
				h->fences++;
				h->fence_lock = h->done_lock;
				h->fence = fence;
				h->fence_reentered = reentered;
			}
			h->done_status = rd_err(&r);
			break;
		}
		case 5: /* LOST */
			rd_n(&r, 8), rd_err(&r);
			break;
		case 6: /* TIMER */
			h->timer_at = now_ms() + (double)(int64_t)rd_n(&r, 8) / 1000.0;
			break;
		case 7:
			h->closed = 1;
			break;
		case 8:
			h->started = rd_n(&r, 8);
			break;
		case 9:
			h->rejected = rd_err(&r);
			break;
		case 10:
			rd_n(&r, 1);
			break;
		case 11: /* INFO */
			rd_str(&r, &l), rd_str(&r, &l);
			p = rd_str(&r, &l);
			if (p && l < sizeof h->token) {
				memcpy(h->token, p, l);
				h->token[l] = 0;
			}
			rd_n(&r, 8), rd_n(&r, 8), rd_n(&r, 1), rd_err(&r);
			h->info_ok = 1;
			break;
		case 12: { /* INSPECTED: u64 op, u8 held, i64 validity_ms, str owner, u16 n, n x node, u32 permits, u16 h, h x holder, i64 term, str value */
			h->seq++;
			uint64_t iop = rd_n(&r, 8);
			int held = (int)rd_n(&r, 1);
			int64_t validity = (int64_t)rd_n(&r, 8);
			p = rd_str(&r, &l);
			if (p && l < sizeof h->inspected_owner) {
				memcpy(h->inspected_owner, p, l);
				h->inspected_owner[l] = 0;
			}
			int nn = (int)rd_n(&r, 2), locked = 0, failed_nodes = 0;
			for (int k = 0; k < nn && !r.bad; k++) {
				rd_n(&r, 2), rd_str(&r, &l); /* node, addr */
				locked += (int)(rd_n(&r, 1) & 1);
				rd_str(&r, &l), rd_n(&r, 8); /* owner, ttl_ms */
				rd_str(&r, &l);              /* cause */
				failed_nodes += l > 0;
			}
			rd_n(&r, 4); /* permits (protocol 3) */
			int nh = (int)rd_n(&r, 2), readers = 0;
			for (int k = 0; k < nh && !r.bad; k++) {
				rd_n(&r, 4), rd_str(&r, &l), rd_n(&r, 8); /* slot, owner, validity_ms */
				readers += rd_n(&r, 1) == 1;              /* mode (protocol 4): 1, a reader */
			}
			h->inspected_readers = readers;
			rd_n(&r, 8), rd_str(&r, &l); /* an election's term and value (protocol 3) */
			h->inspected_held = held, h->inspected_validity = validity, h->inspected_nodes = nn;
			h->inspected_locked = locked, h->inspected_failed = failed_nodes;
			h->inspected_op = iop; /* last: eh_run waits for it */
			break;
		}
		default:
			r.bad = 1;
		}
	}
	if (r.bad)
		h->failures++;
}

/* eh_step hands in one event (NULL: none) and carries out every action. */
static void eh_step(ehost *h, const ev_t *e) {
	int64_t n = lock_engine_step(h->eng, e ? e->b : NULL, e ? e->n : 0, h->out, LOCK_ENGINE_MIN_OUT);
	while (n > 0) {
		ENGINE_OUT_DEFINED(h->out, (size_t)n);
		eh_act(h, (size_t)n);
		n = lock_engine_step(h->eng, NULL, 0, h->out, LOCK_ENGINE_MIN_OUT);
	}
	if (n < 0)
		h->failures++;
	while (h->nopened > 0) {
		ev_t o = {.n = 0};
		ev_u8(&o, 7);
		ev_u32(&o, h->opened[--h->nopened]);
		eh_step(h, &o);
	}
}

/* eh_run runs the loop until *flag is set or ms pass; returns *flag. */
static int eh_run(ehost *h, volatile int32_t *flag, int ms) {
	double end = now_ms() + ms;
	while (!*flag && now_ms() < end) {
		struct pollfd pfd[ENG_CONNS];
		uint32_t ids[ENG_CONNS];
		int np = 0;
		for (uint32_t c = 1; c <= ENG_CONNS; c++)
			if (h->fd[c] >= 0) {
				pfd[np].fd = h->fd[c], pfd[np].events = POLLIN, pfd[np].revents = 0;
				ids[np++] = c;
			}
		int wait = 10;
		if (h->timer_at > 0 && h->timer_at - now_ms() < wait)
			wait = h->timer_at > now_ms() ? (int)(h->timer_at - now_ms()) + 1 : 0;
		poll(pfd, (nfds_t)np, wait);
		for (int k = 0; k < np; k++) {
			if (!pfd[k].revents || h->fd[ids[k]] < 0)
				continue;
			/* At most what one event holds beside its kind, id and length
			 * (an INFO reply in the handshake is larger: it comes in pieces). */
			uint8_t buf[sizeof(((ev_t *)0)->b) - 16];
			ssize_t got = read(pfd[k].fd, buf, sizeof buf);
			ev_t e = {.n = 0};
			if (got > 0) {
				ev_u8(&e, 8);
				ev_u32(&e, ids[k]);
				ev_bytes(&e, buf, (size_t)got);
			} else {
				close(h->fd[ids[k]]);
				h->fd[ids[k]] = -1;
				ev_u8(&e, 9);
				ev_u32(&e, ids[k]);
				ev_bytes(&e, "EOF", 3);
			}
			eh_step(h, &e);
		}
		if (h->timer_at > 0 && now_ms() >= h->timer_at) {
			h->timer_at = 0;
			ev_t t = {.n = 0};
			ev_u8(&t, 10);
			eh_step(h, &t);
		}
	}
	return *flag != 0;
}

static void eh_request(ehost *h, ev_t *e) {
	h->started = 0, h->rejected = 0, h->done_op = 0, h->done_status = -1, h->info_ok = 0;
	eh_step(h, e);
}

/* eh_wait_done runs the loop until the DONE of op (or the bound). */
static int eh_wait_done(ehost *h, uint64_t op) {
	double t0 = now_ms();
	while (now_ms() - t0 < bound_ms()) {
		if (h->done_op == op)
			return 1;
		h->done_op = 0;
		eh_run(h, (volatile int32_t *)&h->done_op, (int)bound_ms());
	}
	return h->done_op == op;
}

static void ev_acquire(ev_t *e, const char *res, int64_t ttl, uint8_t flags, const char *token) {
	e->n = 0;
	ev_u8(e, 1);
	ev_bytes(e, res, strlen(res));
	ev_u64(e, (uint64_t)ttl);
	ev_u64(e, 0);
	ev_u8(e, flags);
	if (token)
		ev_bytes(e, token, strlen(token));
}

/* The engine's additions: ACQUIRE with the fence flag (FENCE right before
 * DONE, fences increasing), with a token (re-entry: its DONE says so), both
 * (REJECTED), unknown flags (malformed); INSPECT (INSPECTED; REJECTED for
 * a bad resource). */
static void eng_fence_and_inspect(ehost *h) {
	ev_t e = {.n = 0};
	int64_t last = 0;
	for (int i = 0; i < 3; i++) {
		ev_acquire(&e, "eng-fence", 10000, 2, NULL);
		eh_request(h, &e);
		uint64_t op = h->started;
		CHECK(op != 0, "fenced acquire not started (rejected %d)", h->rejected);
		int fences0 = h->fences;
		CHECK(eh_wait_done(h, op) && h->done_status == LOCK_OK && h->done_lock != 0, "fenced acquire: %d", h->done_status);
		CHECK(h->fences == fences0 + 1 && h->fence_lock == h->done_lock && h->fence_seq == h->done_seq,
		      "the fence in the DONE: fences %d->%d, lock %" PRIu64 "/%" PRIu64 ", seq %d/%d", fences0, h->fences,
		      h->fence_lock, h->done_lock, h->fence_seq, h->done_seq);
		CHECK(h->fence > last && !h->fence_reentered, "fence %" PRId64 " after %" PRId64, h->fence, last);
		last = h->fence;
		uint64_t lock = h->done_lock;
		if (i == 2) { /* keep the last one, and look at it */
			ev_t in = {.n = 0};
			ev_u8(&in, 12);
			ev_bytes(&in, "eng-fence", 9);
			ev_u8(&in, 0); /* flags: the mutex */
			h->inspected_op = 0;
			eh_request(h, &in);
			CHECK(h->started != 0, "inspect not started (rejected %d)", h->rejected);
			uint64_t iop = h->started;
			eh_run(h, (volatile int32_t *)&h->inspected_op, (int)bound_ms());
			CHECK(h->inspected_op == iop && h->inspected_held && h->inspected_validity > 9000 &&
			          h->inspected_nodes == nnodes && h->inspected_locked == nnodes && h->inspected_failed == 0,
			      "INSPECTED: op %" PRIu64 "/%" PRIu64 " held %d validity %" PRId64 " nodes %d locked %d failed %d",
			      h->inspected_op, iop, h->inspected_held, h->inspected_validity, h->inspected_nodes, h->inspected_locked,
			      h->inspected_failed);
			CHECK(h->inspected_owner[0] == 0, "no owner configured: %s", h->inspected_owner);
			/* re-enter it with its token: FENCE says reentered */
			ev_t info = {.n = 0};
			ev_u8(&info, 11);
			ev_u64(&info, lock);
			eh_request(h, &info);
			char tok[128];
			snprintf(tok, sizeof tok, "%s", h->token);
			ev_acquire(&e, "eng-fence", 20000, 4, tok);
			eh_request(h, &e);
			op = h->started;
			CHECK(op != 0 && eh_wait_done(h, op) && h->done_status == LOCK_OK, "token acquire: %d", h->done_status);
			CHECK(h->fence_seq == h->done_seq && h->fence_reentered == 1 && h->fence == 0 && h->fence_lock == h->done_lock,
			      "the DONE of a re-entry: reentered %d fence %" PRId64, h->fence_reentered, h->fence);
			ev_t forget = {.n = 0};
			ev_u8(&forget, 5);
			ev_u64(&forget, h->done_lock);
			eh_request(h, &forget);
		}
		ev_t rel = {.n = 0};
		ev_u8(&rel, 3);
		ev_u64(&rel, lock);
		eh_request(h, &rel);
		CHECK(h->started != 0 && eh_wait_done(h, h->started) && h->done_status == LOCK_OK, "release: %d", h->done_status);
	}
	/* two readers of a read-write lock (ACQUIRE flag bit 4): an INSPECT of
	 * it (flag bit 4) lists both as holders of mode 1 (engine protocol 4) */
	uint64_t readers[2] = {0, 0};
	for (int i = 0; i < 2; i++) {
		ev_acquire(&e, "eng-rw", 10000, 16, NULL);
		eh_request(h, &e);
		uint64_t op = h->started;
		CHECK(op != 0 && eh_wait_done(h, op) && h->done_status == LOCK_OK && h->done_lock != 0, "reader %d: %d", i,
		      h->done_status);
		readers[i] = h->done_lock;
	}
	ev_t rin = {.n = 0};
	ev_u8(&rin, 12);
	ev_bytes(&rin, "eng-rw", 6);
	ev_u8(&rin, 16); /* flags: the read-write lock */
	h->inspected_op = 0, h->inspected_readers = -1;
	eh_request(h, &rin);
	uint64_t riop = h->started;
	CHECK(riop != 0, "rw inspect not started (rejected %d)", h->rejected);
	eh_run(h, (volatile int32_t *)&h->inspected_op, (int)bound_ms());
	CHECK(h->inspected_op == riop && h->inspected_readers == 2 && !h->inspected_held, "rw INSPECTED: %d readers, held %d",
	      h->inspected_readers, h->inspected_held);
	for (int i = 0; i < 2; i++) {
		ev_t rel = {.n = 0};
		ev_u8(&rel, 3);
		ev_u64(&rel, readers[i]);
		eh_request(h, &rel);
		CHECK(h->started != 0 && eh_wait_done(h, h->started) && h->done_status == LOCK_OK, "reader release: %d", h->done_status);
	}
	/* fence with a token: REJECTED; an empty token or an unknown flag: malformed */
	ev_acquire(&e, "eng-fence", 10000, 2 | 4, "0123456789abcdef");
	eh_request(h, &e);
	CHECK(h->rejected == LOCK_INVALID_ARGUMENT && h->started == 0, "fence+token: rejected %d", h->rejected);
	ev_acquire(&e, "eng-fence", 10000, 4, "short");
	eh_request(h, &e);
	CHECK(h->rejected == LOCK_INVALID_ARGUMENT && h->started == 0, "short token: rejected %d", h->rejected);
	CHECK(bound_is("token", "min", 16, "bytes", 5), "short token: the bound in the rejection: %s %s %lld %s %lld", last_err.arg,
	      last_err.bound, (long long)last_err.limit, last_err.unit, (long long)last_err.got);
	ev_acquire(&e, "eng-fence", 86400001, 0, NULL);
	eh_request(h, &e);
	CHECK(h->rejected == LOCK_INVALID_ARGUMENT && h->started == 0, "ttl above its max: rejected %d", h->rejected);
	CHECK(bound_is("ttl_ms", "max", 86400000, "ms", 86400001), "ttl above its max: the bound in the rejection: %s %s %lld %s %lld",
	      last_err.arg, last_err.bound, (long long)last_err.limit, last_err.unit, (long long)last_err.got);
	ev_acquire(&e, "eng-fence", 10000, 4, "");
	CHECK(lock_engine_step(h->eng, e.b, e.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "empty token");
	ev_acquire(&e, "eng-fence", 10000, 128, NULL);
	CHECK(lock_engine_step(h->eng, e.b, e.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "flag bit 7");
	ev_acquire(&e, "eng-fence", 10000, 8, NULL); /* the permits flag without permits */
	CHECK(lock_engine_step(h->eng, e.b, e.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "missing permits");
	ev_acquire(&e, "eng-fence", 10000, 4, NULL); /* the token flag without a token */
	CHECK(lock_engine_step(h->eng, e.b, e.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "missing token");
	ev_t in = {.n = 0};
	ev_u8(&in, 12);
	ev_bytes(&in, "", 0);
	ev_u8(&in, 0);
	eh_request(h, &in);
	CHECK(h->rejected == LOCK_INVALID_ARGUMENT && h->started == 0, "inspect of \"\": rejected %d", h->rejected);
	CHECK(bound_is("resource", "min", 1, "bytes", 0), "inspect of \"\": the bound in the rejection: %s %s", last_err.arg, last_err.bound);
	in.n = 0;
	ev_u8(&in, 12);
	ev_u32(&in, 5); /* a length past the end */
	CHECK(lock_engine_step(h->eng, in.b, in.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "truncated INSPECT");
	CHECK(lock_engine_step(h->eng, NULL, 0, h->out, LOCK_ENGINE_MIN_OUT) == 0, "a malformed event left actions");
}

static void test_engine(void) {
	char *err = NULL;
	uint64_t eng = 0;
	/* lock_engine_new: bad input */
	CHECK_ST(lock_engine_new(NULL, &eng, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_engine_new(config_json("ceng:", node_timeout_ms), NULL, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK(lock_engine_new("{\"nodes\":[\"redis://h:1\"],\"bogus\":1}", &eng, &err) == LOCK_INVALID_ARGUMENT && err &&
	          strstr(err, "bogus"),
	      "unknown key: %s", err ? err : "(null)");
	lock_string_free(err);
	err = NULL;
	CHECK(lock_engine_new("{\"nodes\":[\"redis://h:1\"],\"node_timeout_ms\":1.5}", &eng, NULL) == LOCK_INVALID_ARGUMENT,
	      "float timeout accepted");

	CHECK_ST(lock_engine_new(config_json("ceng:", node_timeout_ms), &eng, &err), LOCK_OK, &err);
	CHECK(err == NULL, "err set on success");
	ehost h = {.eng = eng, .out = malloc(LOCK_ENGINE_MIN_OUT)};
	for (int c = 0; c <= ENG_CONNS; c++)
		h.fd[c] = -1;

	/* lock_engine_step: bad input, nothing done */
	ev_t acq = {.n = 0};
	const char *res = "eng-res";
	ev_u8(&acq, 1);
	ev_bytes(&acq, res, strlen(res));
	ev_u64(&acq, 10000);
	ev_u64(&acq, 0);
	ev_u8(&acq, 0);
	CHECK(lock_engine_step(0, acq.b, acq.n, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_HANDLE, "handle 0");
	CHECK(lock_engine_step(eng + 1000000, acq.b, acq.n, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_HANDLE, "unknown handle");
	CHECK(lock_engine_step(eng, acq.b, acq.n - 1, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "truncated event");
	CHECK(lock_engine_step(eng, acq.b, acq.n, h.out, 100) == -LOCK_INVALID_ARGUMENT, "tiny out_cap");
	CHECK(lock_engine_step(eng, acq.b, acq.n, NULL, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "NULL out");
	CHECK(lock_engine_step(eng, NULL, 5, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "NULL in");
	uint8_t unknown[] = {200};
	CHECK(lock_engine_step(eng, unknown, 1, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "unknown kind");
	CHECK(lock_engine_step(eng, NULL, 0, h.out, LOCK_ENGINE_MIN_OUT) == 0, "a rejected event left actions");

	/* acquire, check the nodes, release */
	eh_request(&h, &acq);
	CHECK(h.started != 0 && h.failures == 0, "acquire not started (failures %d)", h.failures);
	uint64_t op = h.started;
	int32_t have = 0;
	double t0 = now_ms();
	while (!have && now_ms() - t0 < bound_ms()) {
		eh_run(&h, (volatile int32_t *)&h.done_op, (int)bound_ms());
		have = h.done_op == op;
		if (!have)
			h.done_op = 0;
	}
	CHECK(have && h.done_status == LOCK_OK && h.done_lock != 0, "acquire: op %" PRIu64 " status %d", h.done_op, h.done_status);
	uint64_t lock = h.done_lock;
	ev_t info = {.n = 0};
	ev_u8(&info, 11);
	ev_u64(&info, lock);
	eh_request(&h, &info);
	CHECK(h.info_ok && strlen(h.token) > 0, "lock info");
	CHECK(nodes_with("ceng:eng-res", h.token) >= quorum(), "the token is on %d nodes", nodes_with("ceng:eng-res", h.token));

	ev_t rel = {.n = 0};
	ev_u8(&rel, 3);
	ev_u64(&rel, lock);
	eh_request(&h, &rel);
	CHECK(h.started != 0, "release not started");
	eh_run(&h, (volatile int32_t *)&h.done_op, (int)bound_ms());
	CHECK(h.done_op == h.started && h.done_status == LOCK_OK, "release: status %d", h.done_status);
	t0 = now_ms();
	int32_t gone = 0;
	while (!gone && now_ms() - t0 < bound_ms()) {
		int32_t never = 0;
		eh_run(&h, &never, 5); /* deliver the other nodes' replies */
		gone = settled_nodes_with("ceng:eng-res", NULL, 0) == 0;
	}
	CHECK(gone, "the key is left on %d nodes", nodes_with("ceng:eng-res", NULL));
	eh_request(&h, &rel);
	CHECK(h.rejected == LOCK_INVALID_HANDLE, "release of a released lock: %d", h.rejected);
	CHECK(h.fences == 0, "FENCE after an acquire that asked for neither fence nor token");
	eng_fence_and_inspect(&h);

	/* an orderly end */
	ev_t cl = {.n = 0};
	ev_u8(&cl, 6);
	eh_request(&h, &cl);
	CHECK(eh_run(&h, &h.closed, (int)bound_ms()), "no CLOSED");
	CHECK(h.failures == 0, "%d decode or step failures", h.failures);
	for (int c = 0; c <= ENG_CONNS; c++)
		if (h.fd[c] >= 0) {
			CHECK(0, "connection %d left open after CLOSED", c);
			close(h.fd[c]);
		}
	CHECK(lock_engine_free(eng) == LOCK_OK, "free");
	CHECK(lock_engine_free(eng) == LOCK_INVALID_HANDLE, "double free");
	CHECK(lock_engine_free(0) == LOCK_INVALID_HANDLE, "free 0");
	CHECK(lock_engine_step(eng, NULL, 0, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_HANDLE, "step after free");
	free(h.out);
}

/* Counting semaphores: "permits" in options_json, lock_inspect_ex. */
static void test_semaphore(void) {
	uint64_t a = 0, b = new_client("ts:"), l[3] = {0};
	char *err = NULL, buf[64];
	CHECK_ST(lock_client_new(config_owner_json("ts:", "\"pool-7\""), &a, &err), LOCK_OK, &err);
	for (int i = 0; i < 2; i++)
		CHECK_ST(lock_acquire(a, "pool", 10000, "{\"permits\":2,\"fence\":true}", &l[i], &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(b, "pool", 10000, "{\"permits\":2}", &l[2], &err), LOCK_NOT_ACQUIRED, &err);
	/* the mutex of the name is another lock */
	CHECK_ST(lock_acquire(b, "pool", 10000, NULL, &l[2], &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l[2], &err), LOCK_OK, &err);
	lock_free(l[2]);
	char *js = NULL;
	CHECK_ST(lock_inspect_ex(b, "pool", "{\"permits\":2}", &js, &err), LOCK_OK, &err);
	if (js) {
		CHECK(strstr(js, "\"permits\":2") && strstr(js, "\"in_use\":2") && count_of(js, "\"slot\":") == 2 &&
		          count_of(js, "\"owner\":\"pool-7\"") >= 3 && strstr(js, "\"held\":true"),
		      "semaphore inspection: %s", js);
		lock_string_free(js);
		js = NULL;
	}
	/* NULL options: the mutex, as lock_inspect */
	CHECK_ST(lock_inspect_ex(b, "pool", NULL, &js, &err), LOCK_OK, &err);
	if (js) {
		CHECK(strstr(js, "\"held\":false") && !strstr(js, "\"permits\""), "mutex inspection: %s", js);
		lock_string_free(js);
		js = NULL;
	}
	/* bad permits: each LOCK_INVALID_ARGUMENT naming permits, nothing sent */
	const char *bad[] = {"{\"permits\":0}", "{\"permits\":-1}", "{\"permits\":1025}", "{\"permits\":\"2\"}",
	                     "{\"permits\":2.5}", "{\"permits\":null}", "{\"permits\":99999999999999999999}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t x = 7;
		int32_t st = lock_acquire(b, "badpool", 1000, bad[i], &x, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT && err && strstr(err, "permits"), "acquire %s: %d %s", bad[i], st,
		      err ? err : "");
		lock_string_free(err);
		err = NULL;
		st = lock_inspect_ex(b, "badpool", bad[i], &js, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT && err && strstr(err, "permits") && js == NULL, "inspect_ex %s: %d %s", bad[i], st,
		      err ? err : "");
		lock_string_free(err);
		err = NULL;
	}
	int32_t st = lock_inspect_ex(b, "pool", "{\"modes\":1}", &js, &err);
	CHECK(st == LOCK_INVALID_ARGUMENT && err && strstr(err, "unknown key"), "inspect_ex unknown key: %d %s", st, err ? err : "");
	lock_string_free(err);
	err = NULL;
	/* a release wakes a waiter of another client */
	uint64_t w = 0;
	double t0 = now_ms();
	CHECK_ST(lock_release(l[0], &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(b, "pool", 10000, "{\"permits\":2,\"wait_ms\":5000,\"fence\":true}", &w, &err), LOCK_OK, &err);
	CHECK(now_ms() - t0 < 4000, "the freed permit is taken at once");
	info_field(w, "fence", buf, sizeof buf);
	CHECK(atol(buf) >= 3, "a fence above the two earlier permits': %s", buf);
	CHECK_ST(lock_release(w, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l[1], &err), LOCK_OK, &err);
	lock_free(l[0]), lock_free(l[1]), lock_free(w);
	CHECK_ST(lock_inspect_ex(a, "pool", "{\"permits\":2}", &js, &err), LOCK_OK, &err);
	if (js) {
		CHECK(strstr(js, "\"in_use\":0") && strstr(js, "\"holders\":[]"), "after release: %s", js);
		lock_string_free(js);
	}
	/* no slot key left (the releases returned at a quorum: the third
	 * node's may come a moment later) */
	for (int k = 0; k < 2; k++) {
		char key[64];
		snprintf(key, sizeof key, "ts:pool\xffsem2:%d", k);
		CHECK(rw_settled(key, 0) == 0, "%s left on a node", key);
	}
	CHECK(lock_free(a) == LOCK_OK, "free");
	CHECK(lock_free(b) == LOCK_OK, "free");
}

/* ---------- read-write locks ("mode") ---------- */

/* rw_nodes_with counts the live nodes where key exists (any type). */
static int rw_nodes_with(const char *key) {
	int n = 0;
	char out[256];
	for (int i = 0; i < nnodes; i++) {
		if (node_frozen[i] || node_dead[i])
			continue;
		const char *argv[] = {"EXISTS", key};
		if (rcmd(i, out, sizeof out, 2, argv) == 0 && strncmp(out, ":1", 2) == 0)
			n++;
	}
	return n;
}

/* rw_settled polls rw_nodes_with until it is want, for up to settle_ms(). */
static int rw_settled(const char *key, int want) {
	int n;
	POLL_UNTIL((n = rw_nodes_with(key)) == want, settle_ms());
	return n;
}

/* err_names reports whether an error message names arg ("...: mode: ..."). */
static int err_names(const char *err, const char *arg) {
	char pat[64];
	snprintf(pat, sizeof pat, "%s: ", arg);
	return err != NULL && strstr(err, pat) != NULL;
}

static void test_rwlock(void) {
	uint64_t c = new_client("rw:"), r1 = 0, r2 = 0, w = 0, x = 0, h = 0;
	char *err = NULL, buf[512];
	const char *wkey = "rw:doc\xffrw:w", *rkey = "rw:doc\xffrw:r";
	/* two readers together; the writer is refused meanwhile */
	CHECK_ST(lock_acquire(c, "doc", 10000, "{\"mode\":\"read\"}", &r1, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "doc", 10000, "{\"mode\":\"read\",\"auto_extend\":true}", &r2, &err), LOCK_OK, &err);
	info_field(r1, "mode", buf, sizeof buf);
	CHECK(strcmp(buf, "read") == 0, "mode %s", buf);
	CHECK(rw_settled(rkey, nnodes) == nnodes, "the readers' set is on every node");
	/* lock_inspect_ex with "mode": the readers (no writer) */
	char *js = NULL;
	CHECK_ST(lock_inspect_ex(c, "doc", "{\"mode\":\"read\"}", &js, &err), LOCK_OK, &err);
	if (js) {
		CHECK(strstr(js, "\"held\":false") && count_of(js, "\"validity_ms\":") >= 3 && strstr(js, "\"readers\":[{"),
		      "read-write inspection: %s", js);
		lock_string_free(js);
		js = NULL;
	}
	CHECK_ST(lock_inspect_ex(c, "doc", "{\"mode\":\"read\",\"permits\":2}", &js, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK(js == NULL, "no inspection on bad options");
	CHECK_ST(lock_acquire(c, "doc", 10000, "{\"mode\":\"write\"}", &x, &err), LOCK_NOT_ACQUIRED, &err);
	CHECK(rw_nodes_with(wkey) == 0, "the refused writer left no key");
	/* the mutex of the same name is another lock */
	CHECK_ST(lock_acquire(c, "doc", 10000, NULL, &x, &err), LOCK_OK, &err);
	info_field(x, "mode", buf, sizeof buf);
	CHECK(strcmp(buf, "exclusive") == 0, "mutex mode %s", buf);
	CHECK(lock_free(x) == LOCK_OK, "free");
	/* a waiting writer gets it once both readers are gone */
	done_t d;
	done_init(&d);
	CHECK_ST(lock_acquire_async(c, "doc", 10000, "{\"mode\":\"write\",\"wait_ms\":5000,\"fence\":true}", on_done, &d, &h, &err), LOCK_OK, &err);
	CHECK_ST(lock_extend(r1, 10000, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(r1, &err), LOCK_OK, &err);
	CHECK(calls_of(&d) == 0, "the writer waits for the second reader");
	CHECK_ST(lock_release(r2, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, 5000 + (int)bound_ms()) == 1 && d.status == LOCK_OK, "the writer: status %d %s", d.status, d.err);
	w = d.handle;
	info_field(w, "mode", buf, sizeof buf);
	CHECK(strcmp(buf, "write") == 0, "mode %s", buf);
	info_field(w, "fence", buf, sizeof buf);
	CHECK(atol(buf) >= 1, "fence %s", buf);
	CHECK_ST(lock_acquire(c, "doc", 10000, "{\"mode\":\"read\"}", &x, &err), LOCK_NOT_ACQUIRED, &err);
	CHECK_ST(lock_acquire(c, "doc", 10000, "{\"mode\":\"write\"}", &x, &err), LOCK_NOT_ACQUIRED, &err);
	CHECK_ST(lock_release(w, &err), LOCK_OK, &err);
	CHECK(rw_settled(wkey, 0) == 0 && rw_settled(rkey, 0) == 0 && rw_settled("rw:doc\xffrw:i", 0) == 0, "no key left");
	CHECK(lock_free(r1) == LOCK_OK && lock_free(r2) == LOCK_OK && lock_free(w) == LOCK_OK, "free");
	done_destroy(&d);

	/* bad input: each names mode, nothing is left */
	static const char *bad[] = {
	    "{\"mode\":\"bogus\"}", "{\"mode\":\"READ\"}", "{\"mode\":1}", "{\"mode\":null}", "{\"mode\":[\"read\"]}",
	    "{\"mode\":\"read\",\"token\":\"0123456789abcdef\"}", "{\"token\":\"0123456789abcdef\",\"mode\":\"write\"}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int32_t st = lock_acquire(c, "bad", 1000, bad[i], &x, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT && err_names(err, "mode"), "%s: status %d err %s", bad[i], st, err ? err : "(null)");
		lock_string_free(err);
		err = NULL;
		done_t d2;
		done_init(&d2);
		st = lock_acquire_async(c, "bad", 1000, bad[i], on_done, &d2, &h, &err);
		CHECK(st == LOCK_INVALID_ARGUMENT && err_names(err, "mode") && calls_of(&d2) == 0, "async %s: status %d err %s", bad[i], st, err ? err : "(null)");
		lock_string_free(err);
		err = NULL;
		done_destroy(&d2);
	}
	CHECK(rw_nodes_with("rw:bad\xffrw:w") == 0 && rw_nodes_with("rw:bad\xffrw:r") == 0 && rw_nodes_with("rw:bad") == 0, "bad input left nothing");
	CHECK(lock_free(c) == LOCK_OK, "free client");
}

/* ----- multi-resource locks: options "resources" ----- */

static void test_multi(void) {
	uint64_t a = new_client("tm:"), b = new_client("tm:"), l = 0, m = 0;
	char *err = NULL, buf[512], tok[512];
	/* the set {x, y}: both keys hold the token on every node */
	CHECK_ST(lock_acquire(a, "x", 5000, "{\"resources\":[\"y\"]}", &l, &err), LOCK_OK, &err);
	info_field(l, "token", tok, sizeof tok);
	CHECK(settled_nodes_with("tm:x", tok, nnodes) == nnodes && settled_nodes_with("tm:y", tok, nnodes) == nnodes,
	      "both keys hold the set's token");
	char *js = NULL;
	CHECK_ST(lock_info(l, &js, &err), LOCK_OK, &err);
	CHECK(js && strstr(js, "\"resources\":[\"x\",\"y\"]"), "lock_info resources: %s", js ? js : "(null)");
	lock_string_free(js);
	/* a mutex on a member, and an overlapping set in another order: refused,
	 * naming the held resource; the refused set leaves nothing behind */
	int32_t st = lock_acquire(b, "y", 1000, NULL, &m, &err);
	CHECK(st == LOCK_NOT_ACQUIRED, "mutex on a member: %d %s", st, err ? err : "");
	lock_string_free(err);
	err = NULL;
	st = lock_acquire(b, "z", 1000, "{\"resources\":[\"y\"]}", &m, &err);
	CHECK(st == LOCK_NOT_ACQUIRED && err && strstr(err, "\"y\" is held"), "overlapping set: %d %s", st, err ? err : "");
	lock_string_free(err);
	err = NULL;
	CHECK(settled_nodes_with("tm:z", NULL, 0) == 0, "the refused set left no key");
	/* async: a waiting set wakes when the holder's release frees y */
	done_t d;
	done_init(&d);
	CHECK_ST(lock_acquire_async(b, "y", 5000, "{\"resources\":[\"z\"],\"wait_ms\":5000}", on_done, &d, NULL, &err), LOCK_OK, &err);
	sleep_ms(50);
	CHECK(calls_of(&d) == 0, "the set waits while y is held");
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	lock_free(l);
	CHECK(wait_done(&d, 5000 + (int)bound_ms()) == 1 && d.status == LOCK_OK, "async set after the release: %d %s", d.status, d.err);
	if (d.status == LOCK_OK) {
		CHECK_ST(lock_release(d.handle, &err), LOCK_OK, &err);
		lock_free(d.handle);
	}
	done_destroy(&d);
	/* one fence for the set, above the member's */
	CHECK_ST(lock_acquire(a, "x", 5000, "{\"fence\":true}", &l, &err), LOCK_OK, &err);
	info_field(l, "fence", buf, sizeof buf);
	long long fx = atoll(buf);
	lock_free(l);
	CHECK_ST(lock_acquire(a, "w", 5000, "{\"fence\":true,\"resources\":[\"x\"]}", &l, &err), LOCK_OK, &err);
	info_field(l, "fence", buf, sizeof buf);
	CHECK(atoll(buf) > fx, "set fence %s after x's %lld", buf, fx);
	lock_free(l);
	/* bad input: each an invalid argument naming the element, nothing left */
	struct {
		const char *res, *opts, *name;
	} bad[] = {
	    {"x", "{\"resources\":[]}", "resources"},
	    {"x", "{\"resources\":\"y\"}", "resources"},
	    {"x", "{\"resources\":[\"y\",5]}", "resources[2]"},
	    {"x", "{\"resources\":[\"y\",\"\"]}", "resources[2]"},
	    {"x", "{\"resources\":[\"y\",\"x\"]}", "resources[2]"},
	    {"x", "{\"resources\":[\"y\"],\"token\":\"0123456789abcdef\"}", "token"},
	    {"x", "{\"resources\":[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\",\"8\",\"9\",\"10\",\"11\",\"12\",\"13\",\"14\",\"15\",\"16\"]}", "resources"},
	    {"", "{\"resources\":[\"y\"]}", "resource"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		EXPECT_ARG(lock_acquire(a, bad[i].res, 1000, bad[i].opts, &m, &err), bad[i].name, &err);
		done_init(&d);
		EXPECT_ARG(lock_acquire_async(a, bad[i].res, 1000, bad[i].opts, on_done, &d, NULL, &err), bad[i].name, &err);
		sleep_ms(5);
		CHECK(calls_of(&d) == 0, "no callback after a rejected call");
		done_destroy(&d);
	}
	CHECK(settled_nodes_with("tm:x", NULL, 0) == 0 && settled_nodes_with("tm:y", NULL, 0) == 0 &&
	          settled_nodes_with("tm:z", NULL, 0) == 0 && settled_nodes_with("tm:w", NULL, 0) == 0,
	      "no key left");
	CHECK(lock_free(a) == LOCK_OK && lock_free(b) == LOCK_OK, "free");
}

/* ----- leader election: lock_campaign, lock_leader, lock_observe ----- */

typedef struct {
	pthread_mutex_t mu;
	int n, canceled;
	char last[1024];
} obs_t;

static void on_leader(void *ud, int32_t status, const char *js, const char *err) {
	obs_t *o = ud;
	(void)err;
	pthread_mutex_lock(&o->mu);
	if (status == LOCK_OK && js) {
		o->n++;
		snprintf(o->last, sizeof o->last, "%s", js);
	} else {
		o->canceled++;
	}
	pthread_mutex_unlock(&o->mu);
}

static int obs_has(obs_t *o, const char *needle) {
	pthread_mutex_lock(&o->mu);
	int has = strstr(o->last, needle) != NULL;
	pthread_mutex_unlock(&o->mu);
	return has;
}

static int obs_count(obs_t *o) {
	pthread_mutex_lock(&o->mu);
	int n = o->n;
	pthread_mutex_unlock(&o->mu);
	return n;
}

static void test_elect(void) {
	uint64_t a = new_client("te:"), b = new_client("te:"), la = 0, lb = 0, w = 0;
	char *err = NULL, buf[512];
	const char *ekey = "te:e\xff" "elect";
	obs_t o;
	memset(&o, 0, sizeof o);
	pthread_mutex_init(&o.mu, NULL);
	CHECK_ST(lock_observe(b, "e", "{\"poll_ms\":100}", on_leader, &o, &w, &err), LOCK_OK, &err);
	POLL_UNTIL(obs_count(&o) >= 1, 2000);
	CHECK(obs_has(&o, "\"leader\":false"), "observe first reports no leader: %s", o.last);

	CHECK_ST(lock_campaign(a, "e", "A", 5000, NULL, &la, &err), LOCK_OK, &err);
	info_field(la, "fence", buf, sizeof buf);
	long long t1 = atoll(buf);
	CHECK(t1 > 0, "term %s", buf);
	info_field(la, "value", buf, sizeof buf);
	CHECK(strcmp(buf, "A") == 0, "lock_info value %s", buf);
	info_field(la, "election", buf, sizeof buf);
	CHECK(strcmp(buf, "e") == 0, "lock_info election %s", buf);
	char *js = NULL;
	CHECK_ST(lock_leader(b, "e", &js, &err), LOCK_OK, &err);
	CHECK(js && strstr(js, "\"leader\":true") && strstr(js, "\"value\":\"A\""), "lock_leader: %s", js ? js : "(null)");
	lock_string_free(js);
	POLL_UNTIL(obs_has(&o, "\"value\":\"A\""), 2000);
	CHECK(obs_has(&o, "\"value\":\"A\""), "observe sees A: %s", o.last);
	/* the lock of the same name is another key: free */
	uint64_t m = 0;
	CHECK_ST(lock_acquire(b, "e", 1000, NULL, &m, &err), LOCK_OK, &err);
	lock_free(m);

	/* a bounded campaign is refused while A leads; a waiting one takes over
	 * when A resigns, with a higher term */
	int32_t st = lock_campaign(b, "e", "B", 5000, "{\"wait_ms\":0}", &lb, &err);
	CHECK(st == LOCK_NOT_ACQUIRED, "campaign with wait_ms 0 while A leads: %d %s", st, err ? err : "");
	lock_string_free(err);
	err = NULL;
	done_t d;
	done_init(&d);
	CHECK_ST(lock_campaign_async(b, "e", "B", 5000, NULL, on_done, &d, NULL, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(la, &err), LOCK_OK, &err);
	lock_free(la);
	CHECK(wait_done(&d, 5000 + (int)bound_ms()) == 1 && d.status == LOCK_OK, "B's campaign: %d %s", d.status, d.err);
	if (d.status == LOCK_OK) {
		info_field(d.handle, "fence", buf, sizeof buf);
		CHECK(atoll(buf) > t1, "B's term %s after A's %lld", buf, t1);
		POLL_UNTIL(obs_has(&o, "\"value\":\"B\""), 2000);
		CHECK(obs_has(&o, "\"value\":\"B\""), "observe sees B: %s", o.last);
		CHECK_ST(lock_release(d.handle, &err), LOCK_OK, &err);
		lock_free(d.handle);
	}
	done_destroy(&d);
	POLL_UNTIL(obs_has(&o, "\"leader\":false"), 2000);
	CHECK(obs_has(&o, "\"leader\":false"), "observe sees B resign: %s", o.last);
	CHECK(lock_free(w) == LOCK_OK, "lock_free(watch)");
	int n = obs_count(&o);
	CHECK_ST(lock_campaign(a, "e", "A2", 5000, NULL, &la, &err), LOCK_OK, &err);
	sleep_ms(300); /* deliberate: a callback after lock_free would come within this */
	CHECK(obs_count(&o) == n, "a callback after lock_free(watch)");
	lock_free(la);

	/* bad input: an invalid argument naming it, nothing left */
	char big[4200];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	EXPECT_ARG(lock_campaign(a, "", "v", 1000, NULL, &la, &err), "name", &err);
	EXPECT_ARG(lock_campaign(a, NULL, "v", 1000, NULL, &la, &err), "name", &err);
	EXPECT_ARG(lock_campaign(a, "e", "", 1000, NULL, &la, &err), "value", &err);
	EXPECT_ARG(lock_campaign(a, "e", NULL, 1000, NULL, &la, &err), "value", &err);
	EXPECT_ARG(lock_campaign(a, "e", big, 1000, NULL, &la, &err), "value", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 0, NULL, &la, &err), "ttl_ms", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 1000, "{\"wait_ms\":\"x\"}", &la, &err), "options", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 1000, "{\"bogus\":1}", &la, &err), "options", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 1000, "{\"wait_ms\":-1}", &la, &err), "wait_ms", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 1000, NULL, NULL, &err), "out_lock", &err);
	EXPECT_ARG(lock_campaign_async(a, "e", "v", 1000, NULL, NULL, NULL, NULL, &err), "cb", &err);
	EXPECT_ARG(lock_leader(a, "", &js, &err), "name", &err);
	EXPECT_ARG(lock_leader(a, "e", NULL, &err), "leader_json", &err);
	EXPECT_ARG(lock_observe(a, "e", "{\"poll_ms\":-1}", on_leader, &o, &w, &err), "poll_ms", &err);
	EXPECT_ARG(lock_observe(a, "e", NULL, NULL, &o, &w, &err), "cb", &err);
	EXPECT_ARG(lock_observe(a, "", NULL, on_leader, &o, &w, &err), "name", &err);
	CHECK(settled_nodes_with(ekey, NULL, 0) == 0, "no election key left");
	CHECK(lock_free(a) == LOCK_OK && lock_free(b) == LOCK_OK, "free");
	pthread_mutex_destroy(&o.mu);
}

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_env();
	printf("# %d nodes, node_timeout_ms %d%s\n", nnodes, node_timeout_ms, quick ? ", quick" : "");
	struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
	    {"basics", test_basics}, {"small_user_data", test_small_user_data},       {"client_config", test_client_config}, {"unreachable", test_unreachable},
	    {"basic_lock", test_basic_lock}, {"bad_arguments", test_bad_arguments}, {"bad_handles", test_bad_handles},
	    {"contention", test_contention}, {"races", test_races},              {"async", test_async},  {"reentrant", test_reentrant},
	    {"inspect", test_inspect}, {"reenter", test_reenter}, {"fence", test_fence}, {"multi", test_multi}, {"semaphore", test_semaphore}, {"elect", test_elect}, {"fence_frozen_round", test_fence_frozen_round}, {"new_bad_arguments", test_new_bad_arguments},
	    {"on_lost", test_on_lost}, {"client_on_lost", test_client_on_lost},     {"queue_wakeup", test_queue_wakeup}, {"queue", test_queue},   {"frozen", test_frozen},               {"engine", test_engine},   {"leaks", test_leaks},
	    {"rwlock", test_rwlock},
	};
	const char *only = getenv("LIBLOCK_TEST_ONLY"); /* a comma-separated list of test names */
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (only && *only) {
			char want[256];
			snprintf(want, sizeof want, ",%s,", tests[i].name);
			char list[1024];
			snprintf(list, sizeof list, ",%s,", only);
			if (!strstr(list, want))
				continue;
		}
		int f0 = failed;
		double t0 = now_ms();
		tests[i].fn();
		printf("# %-14s %s (%.0f ms)\n", tests[i].name, failed == f0 ? "ok" : "FAILED", now_ms() - t0);
	}
	if (getenv("LIBLOCK_TEST_KILL") && strcmp(getenv("LIBLOCK_TEST_KILL"), "1") == 0) {
		int f0 = failed;
		test_fence_killed_round();
		printf("# %-14s %s\n", "fence_killed_round", failed == f0 ? "ok" : "FAILED");
		f0 = failed;
		test_killed();
		printf("# %-14s %s\n", "killed", failed == f0 ? "ok" : "FAILED");
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
