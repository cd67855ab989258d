/* The client: lock_version and the handle basics, lock_client_new's configuration, unreachable nodes. */
#include "capi_test.h"

void test_basics(void) {
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

void test_client_config(void) {
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

void test_unreachable(void) {
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
