/* Inspect, re-entry by token, fencing tokens. */
#include "capi_test.h"

/* ----- inspect, re-entry by token, fences (ABI v1 additions) ----- */

void test_inspect(void) {
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

void test_reenter(void) {
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

void test_fence(void) {
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
