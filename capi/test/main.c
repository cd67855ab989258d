/*
 * main.c -- the C test of liblock.so, run by capi/test/run.sh under
 * build/redisnodes, which provides real redis-servers through
 * LIBLOCK_NODES (comma-separated redis:// URLs) and LIBLOCK_NODE_PIDS.
 * The tests live one topic a file (*_test.c), their helpers in helpers.c
 * (capi_test.h); main runs them in the order of its table.
 *
 * It exercises every exported function and every status code, talks to the
 * nodes directly over plain TCP (RESP) to check and overwrite keys, and
 * freezes (SIGSTOP/SIGCONT) and kills (SIGKILL) nodes.
 *
 * Environment:
 *   LIBLOCK_TEST_QUICK=1   skip the 20,000-cycle leak test and use fewer
 *                          iterations (for valgrind).
 *   LIBLOCK_TEST_TIMEOUT   node_timeout_ms for the clients (default 200: large
 *                          enough for a loaded 2-core machine, small enough
 *                          for the frozen-node bounds to mean something).
 *   LIBLOCK_TEST_KILL=1    end with the SIGKILL tests (a node killed in a
 *                          fenced acquire's second round, then a minority).
 *   LIBLOCK_FAULTPROXY     the faultproxy binary (default build/faultproxy).
 *   LIBLOCK_TEST_ONLY      run only these tests (comma-separated names).
 *
 * Timing assertions are upper bounds only, generous on purpose.
 *
 * Prints "N passed, M failed" last; exits non-zero on any failure.
 */
#include "capi_test.h"

int main(void) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_env();
	printf("# %d nodes, node_timeout_ms %d%s\n", nnodes, node_timeout_ms, quick ? ", quick" : "");
	struct {
		const char *name;
		void (*fn)(void);
	} tests[] = {
	    {"basics", test_basics}, {"small_user_data", test_small_user_data},       {"client_config", test_client_config}, {"unreachable", test_unreachable},
	    {"basic_lock", test_basic_lock}, {"bad_arguments", test_bad_arguments}, {"bad_handles", test_bad_handles},
	    {"contention", test_contention}, {"races", test_races},              {"async", test_async},  {"reentrant", test_reentrant},
	    {"inspect", test_inspect}, {"reenter", test_reenter}, {"fence", test_fence}, {"multi", test_multi}, {"semaphore", test_semaphore}, {"elect", test_elect}, {"fence_frozen_round", test_fence_frozen_round}, {"new_bad_arguments", test_new_bad_arguments},
	    {"on_lost", test_on_lost}, {"client_on_lost", test_client_on_lost},     {"queue_wakeup", test_queue_wakeup}, {"queue", test_queue},   {"frozen", test_frozen},               {"engine", test_engine},   {"leaks", test_leaks},
	    {"rwlock", test_rwlock},
	};
	const char *only = getenv("LIBLOCK_TEST_ONLY"); /* a comma-separated list of test names */
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (only && *only) {
			char want[256];
			snprintf(want, sizeof want, ",%s,", tests[i].name);
			char list[1024];
			snprintf(list, sizeof list, ",%s,", only);
			if (!strstr(list, want))
				continue;
		}
		int f0 = failed;
		double t0 = now_ms();
		tests[i].fn();
		printf("# %-14s %s (%.0f ms)\n", tests[i].name, failed == f0 ? "ok" : "FAILED", now_ms() - t0);
	}
	if (getenv("LIBLOCK_TEST_KILL") && strcmp(getenv("LIBLOCK_TEST_KILL"), "1") == 0) {
		int f0 = failed;
		test_fence_killed_round();
		printf("# %-14s %s\n", "fence_killed_round", failed == f0 ? "ok" : "FAILED");
		f0 = failed;
		test_killed();
		printf("# %-14s %s\n", "killed", failed == f0 ? "ok" : "FAILED");
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
