/* Failed nodes: frozen and killed minorities and majorities; a node frozen or killed in a fenced acquire's second round (build/faultproxy). */
#include "capi_test.h"

/* ----- frozen and killed nodes ----- */

void test_frozen(void) {
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

void test_killed(void) {
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

void test_fence_frozen_round(void) {
	fence_fault("STOP", 1);
	fence_fault("STOP", 2);
}

void test_fence_killed_round(void) { fence_fault("KILL", 1); }
