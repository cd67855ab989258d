/* Multi-resource locks: "resources" in options_json. */
#include "capi_test.h"

/* ----- multi-resource locks: options "resources" ----- */

void test_multi(void) {
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
