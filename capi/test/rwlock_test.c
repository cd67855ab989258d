/* Read-write locks: "mode" in options_json. */
#include "capi_test.h"

/* ---------- read-write locks ("mode") ---------- */

/* err_names reports whether an error message names arg ("...: mode: ..."). */
static int err_names(const char *err, const char *arg) {
	char pat[64];
	snprintf(pat, sizeof pat, "%s: ", arg);
	return err != NULL && strstr(err, pat) != NULL;
}

void test_rwlock(void) {
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
