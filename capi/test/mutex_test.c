/* The mutex: acquire, extend, release, contention between clients, racing calls on one handle. */
#include "capi_test.h"

void test_basic_lock(void) {
	uint64_t c = new_client("t1:");
	uint64_t l = 0;
	char *err = NULL, buf[512], tok[512];
	CHECK_ST(lock_acquire(c, "basic", 10000, NULL, &l, &err), LOCK_OK, &err);
	CHECK(l != 0 && l < (1ULL << 53), "lock handle %" PRIu64, l);
	info_field(l, "resource", buf, sizeof buf);
	CHECK(strcmp(buf, "basic") == 0, "resource %s", buf);
	info_field(l, "key", buf, sizeof buf);
	CHECK(strcmp(buf, "t1:basic") == 0, "key %s", buf);
	info_field(l, "token", tok, sizeof tok);
	CHECK(strlen(tok) >= 21, "token %s", tok);
	/* the validity first: it runs down while the test waits for the nodes */
	info_field(l, "validity_ms", buf, sizeof buf);
	CHECK(atol(buf) > 9000 && atol(buf) <= 10000, "validity %s", buf);
	CHECK(settled_nodes_with("t1:basic", tok, nnodes) == nnodes, "the key holds the token on every node");
	info_field(l, "auto_extend", buf, sizeof buf);
	CHECK(strcmp(buf, "false") == 0, "auto_extend %s", buf);
	info_field(l, "lost", buf, sizeof buf);
	CHECK(strcmp(buf, "false") == 0, "lost %s", buf);

	/* a plain SET NX by another program on the same key is excluded */
	{
		char out[256];
		const char *argv[] = {"SET", "t1:basic", "intruder", "NX", "PX", "10000"};
		CHECK(rcmd(0, out, sizeof out, 6, argv) == 0 && out[0] == '$' && out[1] == '-', "SET NX must fail: %s", out);
	}
	/* another owner: NOT_ACQUIRED */
	uint64_t l2 = 0;
	CHECK_ST(lock_acquire(c, "basic", 10000, "{\"wait_ms\":0}", &l2, &err), LOCK_NOT_ACQUIRED, &err);
	double t0 = now_ms();
	CHECK_ST(lock_acquire(c, "basic", 10000, "{\"wait_ms\":150}", &l2, &err), LOCK_NOT_ACQUIRED, &err);
	double el = now_ms() - t0;
	CHECK(el >= 140 && el < 150 + bound_ms(), "wait_ms 150 took %.0f ms", el);

	CHECK_ST(lock_extend(l, 20000, &err), LOCK_OK, &err);
	info_field(l, "validity_ms", buf, sizeof buf);
	CHECK(atol(buf) > 19000, "validity after extend %s", buf);
	info_field(l, "ttl_ms", buf, sizeof buf);
	CHECK(strcmp(buf, "20000") == 0, "ttl after extend %s", buf);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	CHECK(settled_nodes_with("t1:basic", NULL, 0) == 0, "released: no key left");
	CHECK_ST(lock_release(l, &err), LOCK_LOST, &err);
	CHECK_ST(lock_extend(l, 1000, &err), LOCK_LOST, &err);
	info_field(l, "released", buf, sizeof buf);
	CHECK(strcmp(buf, "true") == 0, "released %s", buf);
	info_field(l, "validity_ms", buf, sizeof buf);
	CHECK(strcmp(buf, "0") == 0, "validity after release %s", buf);
	CHECK(lock_free(l) == LOCK_OK, "free released lock");
	CHECK(lock_free(l) == LOCK_INVALID_HANDLE, "double free lock");

	/* free of a held lock releases it */
	CHECK_ST(lock_acquire(c, "basic", 10000, "{\"auto_extend\":true,\"wait_ms\":1000}", &l, &err), LOCK_OK, &err);
	info_field(l, "auto_extend", buf, sizeof buf);
	CHECK(strcmp(buf, "true") == 0, "auto_extend %s", buf);
	CHECK(nodes_with("t1:basic", NULL) >= quorum(), "held");
	CHECK(lock_free(l) == LOCK_OK, "free held lock");
	CHECK(settled_nodes_with("t1:basic", NULL, 0) == 0, "free released the key");

	/* NULL err everywhere */
	CHECK(lock_acquire(c, "basic", 1000, NULL, &l, NULL) == LOCK_OK, "acquire, NULL err");
	CHECK(lock_extend(l, 1000, NULL) == LOCK_OK, "extend, NULL err");
	CHECK(lock_release(l, NULL) == LOCK_OK, "release, NULL err");
	CHECK(lock_release(l, NULL) == LOCK_LOST, "release twice, NULL err");
	CHECK(lock_free(l) == LOCK_OK, "free");

	/* drift_factor 0 and a short ttl: validity is ttl - elapsed - 2 ms */
	{
		uint64_t c0 = 0;
		char js[8192];
		snprintf(js, sizeof js, "%s", config_json("t1:", node_timeout_ms));
		js[strlen(js) - 1] = 0;
		strcat(js, ",\"drift_factor\":0}");
		CHECK_ST(lock_client_new(js, &c0, &err), LOCK_OK, &err);
		CHECK_ST(lock_acquire(c0, "drift", 100000, NULL, &l, &err), LOCK_OK, &err);
		info_field(l, "validity_ms", buf, sizeof buf);
		/* with the default 0.01 the drift would be 1 s */
		CHECK(atol(buf) > 99000, "validity with drift 0: %s", buf);
		CHECK(lock_free(l) == LOCK_OK, "free");
		CHECK(lock_free(c0) == LOCK_OK, "free");
	}
	CHECK(lock_free(c) == LOCK_OK, "free client");
}

/* ----- contention ----- */

typedef struct {
	uint64_t client;
	int iterations;
	int acquired;
} worker_t;

static volatile int holders;
static volatile int overlaps;

static void *contender(void *arg) {
	worker_t *w = arg;
	for (int i = 0; i < w->iterations; i++) {
		uint64_t l = 0;
		char *err = NULL;
		int32_t st = lock_acquire(w->client, "contended", 5000, "{\"wait_ms\":20000}", &l, &err);
		if (!CHECK(st == LOCK_OK, "contended acquire: %d %s", st, err ? err : "")) {
			lock_string_free(err);
			continue;
		}
		if (__atomic_add_fetch(&holders, 1, __ATOMIC_SEQ_CST) != 1)
			__atomic_add_fetch(&overlaps, 1, __ATOMIC_SEQ_CST);
		usleep(200); /* deliberate: the section's work, so an overlapping holder would be seen */
		__atomic_sub_fetch(&holders, 1, __ATOMIC_SEQ_CST);
		st = lock_release(l, &err);
		CHECK(st == LOCK_OK, "contended release: %d %s", st, err ? err : "");
		lock_string_free(err);
		lock_free(l);
		w->acquired++;
	}
	return NULL;
}

void test_contention(void) {
	/* two clients (two "processes"), four threads each */
	uint64_t c1 = new_client("t4:"), c2 = new_client("t4:");
	enum { NT = 8 };
	pthread_t th[NT];
	worker_t w[NT];
	int iters = quick ? 5 : 25;
	for (int i = 0; i < NT; i++) {
		w[i] = (worker_t){i % 2 ? c1 : c2, iters, 0};
		pthread_create(&th[i], NULL, contender, &w[i]);
	}
	int total = 0;
	for (int i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		total += w[i].acquired;
	}
	CHECK(total == NT * iters, "all acquired: %d of %d", total, NT * iters);
	CHECK(overlaps == 0, "at most one holder at a time: %d overlaps", overlaps);
	CHECK(settled_nodes_with("t4:contended", NULL, 0) == 0, "no key left");
	lock_free(c1);
	lock_free(c2);
}

/* ----- racing calls on one handle ----- */

static uint64_t race_handle;
static int race_status[2];
static void *race_free(void *arg) {
	race_status[(intptr_t)arg] = lock_free(race_handle);
	return NULL;
}
static void *race_release(void *arg) {
	race_status[(intptr_t)arg] = lock_release(race_handle, NULL);
	return NULL;
}
static void *race_extend(void *arg) {
	race_status[(intptr_t)arg] = lock_extend(race_handle, 5000, NULL);
	return NULL;
}

void test_races(void) {
	uint64_t c = new_client("t5:");
	char *err = NULL;
	for (int i = 0; i < (quick ? 5 : 50); i++) {
		pthread_t a, b;
		/* two frees */
		CHECK_ST(lock_acquire(c, "race", 5000, NULL, &race_handle, &err), LOCK_OK, &err);
		pthread_create(&a, NULL, race_free, (void *)0);
		pthread_create(&b, NULL, race_free, (void *)1);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		CHECK((race_status[0] == LOCK_OK) + (race_status[1] == LOCK_OK) == 1 &&
		          (race_status[0] == LOCK_INVALID_HANDLE) + (race_status[1] == LOCK_INVALID_HANDLE) == 1,
		      "two frees: %d %d", race_status[0], race_status[1]);
		CHECK(settled_nodes_with("t5:race", NULL, 0) == 0, "freed");
		/* an extend racing a release */
		CHECK_ST(lock_acquire(c, "race", 5000, NULL, &race_handle, &err), LOCK_OK, &err);
		pthread_create(&a, NULL, race_extend, (void *)0);
		pthread_create(&b, NULL, race_release, (void *)1);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		CHECK((race_status[0] == LOCK_OK || race_status[0] == LOCK_LOST) && race_status[1] == LOCK_OK,
		      "extend/release race: %d %d", race_status[0], race_status[1]);
		CHECK(settled_nodes_with("t5:race", NULL, 0) == 0, "released, not re-acquired by the extend");
		/* a free racing a client free */
		CHECK_ST(lock_acquire(c, "race", 5000, NULL, &race_handle, &err), LOCK_OK, &err);
		if (i == 0) {
			uint64_t keep = race_handle, c2 = new_client("t5:");
			CHECK_ST(lock_acquire(c2, "race2", 5000, NULL, &race_handle, &err), LOCK_OK, &err);
			pthread_create(&a, NULL, race_free, (void *)0);
			CHECK(lock_free(c2) == LOCK_OK, "client free");
			pthread_join(a, NULL);
			CHECK(race_status[0] == LOCK_OK || race_status[0] == LOCK_INVALID_HANDLE, "free vs client free: %d",
			      race_status[0]);
			CHECK(settled_nodes_with("t5:race2", NULL, 0) == 0, "released by one of the frees");
			race_handle = keep;
		}
		CHECK(lock_free(race_handle) == LOCK_OK, "free");
	}
	lock_free(c);
}
