/* Counting semaphores: "permits" in options_json, lock_inspect_ex. */
#include "capi_test.h"

/* Counting semaphores: "permits" in options_json, lock_inspect_ex. */
void test_semaphore(void) {
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
