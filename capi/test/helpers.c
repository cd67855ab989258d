/* What the C tests share: the bookkeeping, the nodes under test, the
 * helpers around the library (capi_test.h declares them). */
#include "capi_test.h"

/* ---------- test bookkeeping ---------- */

int passed, failed;
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;

int check_(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
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

int check_st_(int32_t got, int32_t want, const char *wname, char **errp, const char *file, int line,
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

double now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* sleep_ms lets time pass. Only for time that must pass (a ttl to run
 * out, a window in which something must NOT happen, a critical section's
 * work), each call saying why; to wait for a condition use POLL_UNTIL. */
void sleep_ms(int ms) {
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
	}
}

/* ---------- the nodes ---------- */

int nnodes;
char *node_urls[MAXN];
int node_ports[MAXN];
pid_t node_pids[MAXN];
int node_frozen[MAXN], node_dead[MAXN];
int node_timeout_ms = 200;
int quick;

void parse_env(void) {
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

void freeze(int i) {
	kill(node_pids[i], SIGSTOP);
	node_frozen[i] = 1;
}
void thaw(int i) {
	kill(node_pids[i], SIGCONT);
	node_frozen[i] = 0;
}

/* rcmd sends one command to node i over plain TCP and reads one reply into
 * out (the raw RESP text). Returns 0 on success. Only for live nodes. */
int rcmd(int i, char *out, size_t outsz, int argc, const char **argv) {
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
int rget(int i, const char *key, char *val, size_t valsz) {
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

int rset(int i, const char *key, const char *val) {
	char out[256];
	const char *argv[] = {"SET", key, val};
	return rcmd(i, out, sizeof out, 3, argv) == 0 && strncmp(out, "+OK", 3) == 0 ? 0 : -1;
}

void rdel(int i, const char *key) {
	char out[256];
	const char *argv[] = {"DEL", key};
	rcmd(i, out, sizeof out, 2, argv);
}

/* nodes_with returns how many live nodes hold key (with value val if not NULL). */
int nodes_with(const char *key, const char *val) {
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

int quorum(void) { return nnodes / 2 + 1; }

/* settled_nodes_with polls nodes_with until it is want, for up to
 * settle_ms(), and returns what it found last: an operation returns as soon
 * as a quorum answered, and its commands to the other nodes are still on
 * their way. */
int settled_nodes_with(const char *key, const char *val, int want) {
	int n;
	POLL_UNTIL((n = nodes_with(key, val)) == want, settle_ms());
	return n;
}

/* nodes_listening returns on how many live nodes some client listens for
 * releases of key (PUBSUB NUMSUB of its channel is want): an acquire does
 * so only once an attempt was refused or it queued behind another, so
 * polling for it is how a test waits until an acquire waits. */
int nodes_listening(const char *key, int want) {
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
int nodes_pttl_above(const char *key, long ms) {
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
int dead_answering(void) {
	char out[64];
	const char *argv[] = {"PING"};
	int n = 0;
	for (int i = 0; i < nnodes; i++)
		if (node_dead[i])
			n += rcmd(i, out, sizeof out, 1, argv) == 0;
	return n;
}

int live_nodes(void) {
	int n = 0;
	for (int i = 0; i < nnodes; i++)
		n += !node_frozen[i] && !node_dead[i];
	return n;
}

/* ---------- helpers around the library ---------- */

/* config_urls_json: a client config over these nnodes node URLs. */
char *config_urls_json(const char *const *urls, const char *prefix, int timeout_ms) {
	static char buf[8192];
	int n = snprintf(buf, sizeof buf, "{\"nodes\":[");
	for (int i = 0; i < nnodes; i++)
		n += snprintf(buf + n, sizeof buf - (size_t)n, "%s\"%s\"", i ? "," : "", urls[i]);
	snprintf(buf + n, sizeof buf - (size_t)n, "],\"node_timeout_ms\":%d,\"key_prefix\":\"%s\"}", timeout_ms, prefix);
	return buf;
}

char *config_json(const char *prefix, int timeout_ms) {
	return config_urls_json((const char *const *)node_urls, prefix, timeout_ms);
}

uint64_t new_client(const char *prefix) {
	uint64_t c = 0;
	char *err = NULL;
	CHECK_ST(lock_client_new(config_json(prefix, node_timeout_ms), &c, &err), LOCK_OK, &err);
	CHECK(c != 0, "client handle");
	return c;
}

/* json_field copies the raw value of "key" in a flat JSON object. */
int json_field(const char *js, const char *key, char *out, size_t outsz) {
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

void info_field(uint64_t lock, const char *key, char *out, size_t outsz) {
	char *js = NULL, *err = NULL;
	out[0] = 0;
	CHECK_ST(lock_info(lock, &js, &err), LOCK_OK, &err);
	if (js) {
		CHECK(json_field(js, key, out, outsz) == 0, "lock_info lacks %s: %s", key, js);
		lock_string_free(js);
	}
}

void done_init(done_t *d) {
	memset(d, 0, sizeof *d);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
}

void done_destroy(done_t *d) {
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cv);
}

void on_done(void *ud, int32_t status, uint64_t handle, const char *err) {
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
int wait_done(done_t *d, int ms) {
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

int calls_of(done_t *d) {
	pthread_mutex_lock(&d->mu);
	int c = d->calls;
	pthread_mutex_unlock(&d->mu);
	return c;
}

/* The bound for one operation that may hit a node timeout: a few node
 * timeouts plus 1.5 s of slack, since a loaded 2-core CI machine can stall
 * a process for most of a second (it stays below the 3 s read timeout an
 * unbounded client would show). */
double bound_ms(void) { return node_timeout_ms * 4 + 1500 + (quick ? 2000 : 0); }

/* settle_ms bounds a wait for the nodes outside a quorum to run their
 * commands: generous (a loaded 2-core machine, valgrind), since it costs
 * nothing unless the state never comes. */
double settle_ms(void) { return 5000 + bound_ms(); }

/* config_owner_json is config_json with "owner" (raw JSON text for the value). */
char *config_owner_json(const char *prefix, const char *owner_value) {
	static char buf[9000];
	char *base = config_json(prefix, node_timeout_ms);
	size_t n = strlen(base);
	snprintf(buf, sizeof buf, "%.*s,\"owner\":%s}", (int)(n - 1), base, owner_value);
	return buf;
}

/* count_of counts the occurrences of pat in s. */
int count_of(const char *s, const char *pat) {
	int n = 0;
	for (const char *p = s; (p = strstr(p, pat)) != NULL; p += strlen(pat))
		n++;
	return n;
}

/* inspect_js runs lock_inspect and returns its JSON (the caller frees it), or NULL. */
char *inspect_js(uint64_t c, const char *res, int32_t want) {
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

void on_inspected(void *ud, int32_t status, const char *js, const char *err) {
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

/* rw_nodes_with counts the live nodes where key exists (any type). */
int rw_nodes_with(const char *key) {
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
int rw_settled(const char *key, int want) {
	int n;
	POLL_UNTIL((n = rw_nodes_with(key)) == want, settle_ms());
	return n;
}

void expect_arg_(int32_t st, const char *name, char **errp, const char *file, int line, const char *expr) {
	char pat[128];
	snprintf(pat, sizeof pat, "invalid argument: %s:", name);
	check_(st == LOCK_INVALID_ARGUMENT && *errp && strstr(*errp, pat), file, line, expr,
	       "status %d err=%s, want LOCK_INVALID_ARGUMENT naming %s", st, *errp ? *errp : "(null)", name);
	lock_string_free(*errp);
	*errp = NULL;
}
