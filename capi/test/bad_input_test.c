/* Bad input: every refused argument named by the error, bad handles, the ABI v1 additions' arguments. */
#include "capi_test.h"

void test_bad_arguments(void) {
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

void test_bad_handles(void) {
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

void test_new_bad_arguments(void) {
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
