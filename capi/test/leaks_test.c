/* Leaks: memory, goroutines and handles over many cycles. */
#include "capi_test.h"

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

void test_leaks(void) {
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
