/* The smallest real use of a liblock.so build, for the platforms this machine
 * can only emulate (make test-dist runs it under qemu-user): over the nodes in
 * LIBLOCK_NODES (comma-separated redis:// URLs), one client takes a lock, a
 * second client is refused it while it is held, the first releases it, and
 * the second then takes and releases it. Prints one line per step; exits 0
 * only when every step did what it should. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "liblock.h"

static int fail(const char *what, int32_t st, char *err) {
	fprintf(stderr, "smoke: %s: status %d: %s\n", what, (int)st, err ? err : "");
	lock_string_free(err);
	return 1;
}

int main(void) {
	const char *nodes = getenv("LIBLOCK_NODES");
	if (!nodes || !*nodes) { fprintf(stderr, "smoke: LIBLOCK_NODES is not set\n"); return 2; }
	char config[4096] = "{\"node_timeout_ms\":2000,\"nodes\":[";
	size_t n = strlen(config);
	for (const char *p = nodes; *p && n < sizeof config - 16;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		n += (size_t)snprintf(config + n, sizeof config - n, "%s\"%.*s\"", config[n - 1] == '[' ? "" : ",", (int)len, p);
		p += len + (end ? 1 : 0);
	}
	snprintf(config + n, sizeof config - n, "]}");

	printf("abi %d, version %s\n", (int)lock_abi_version(), lock_version());
	uint64_t a = 0, b = 0, la = 0, lb = 0;
	char *err = NULL;
	int32_t st;
	if ((st = lock_client_new(config, &a, &err)) != LOCK_OK) return fail("lock_client_new", st, err);
	if ((st = lock_client_new(config, &b, &err)) != LOCK_OK) return fail("lock_client_new", st, err);
	if ((st = lock_acquire(a, "dist-smoke", 10000, NULL, &la, &err)) != LOCK_OK) return fail("acquire", st, err);
	printf("acquired\n");
	st = lock_acquire(b, "dist-smoke", 10000, NULL, &lb, &err);
	if (st != LOCK_NOT_ACQUIRED) return fail("a second client's acquire while held (want NOT_ACQUIRED)", st, err);
	lock_string_free(err);
	err = NULL;
	printf("refused to a second client while held\n");
	if ((st = lock_release(la, &err)) != LOCK_OK) return fail("release", st, err);
	printf("released\n");
	if ((st = lock_acquire(b, "dist-smoke", 10000, NULL, &lb, &err)) != LOCK_OK) return fail("acquire after release", st, err);
	if ((st = lock_release(lb, &err)) != LOCK_OK) return fail("release", st, err);
	printf("taken and released by the second client\n");
	lock_free(la);
	lock_free(lb);
	lock_free(a);
	lock_free(b);
	printf("smoke: ok\n");
	return 0;
}
