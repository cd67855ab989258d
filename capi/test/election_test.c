/* Leader election: lock_campaign, lock_leader, lock_observe. */
#include "capi_test.h"

/* ----- leader election: lock_campaign, lock_leader, lock_observe ----- */

typedef struct {
	pthread_mutex_t mu;
	int n, canceled;
	char last[1024];
} obs_t;

static void on_leader(void *ud, int32_t status, const char *js, const char *err) {
	obs_t *o = ud;
	(void)err;
	pthread_mutex_lock(&o->mu);
	if (status == LOCK_OK && js) {
		o->n++;
		snprintf(o->last, sizeof o->last, "%s", js);
	} else {
		o->canceled++;
	}
	pthread_mutex_unlock(&o->mu);
}

static int obs_has(obs_t *o, const char *needle) {
	pthread_mutex_lock(&o->mu);
	int has = strstr(o->last, needle) != NULL;
	pthread_mutex_unlock(&o->mu);
	return has;
}

static int obs_count(obs_t *o) {
	pthread_mutex_lock(&o->mu);
	int n = o->n;
	pthread_mutex_unlock(&o->mu);
	return n;
}

void test_elect(void) {
	uint64_t a = new_client("te:"), b = new_client("te:"), la = 0, lb = 0, w = 0;
	char *err = NULL, buf[512];
	const char *ekey = "te:e\xff" "elect";
	obs_t o;
	memset(&o, 0, sizeof o);
	pthread_mutex_init(&o.mu, NULL);
	CHECK_ST(lock_observe(b, "e", "{\"poll_ms\":100}", on_leader, &o, &w, &err), LOCK_OK, &err);
	POLL_UNTIL(obs_count(&o) >= 1, 2000);
	CHECK(obs_has(&o, "\"leader\":false"), "observe first reports no leader: %s", o.last);

	CHECK_ST(lock_campaign(a, "e", "A", 5000, NULL, &la, &err), LOCK_OK, &err);
	info_field(la, "fence", buf, sizeof buf);
	long long t1 = atoll(buf);
	CHECK(t1 > 0, "term %s", buf);
	info_field(la, "value", buf, sizeof buf);
	CHECK(strcmp(buf, "A") == 0, "lock_info value %s", buf);
	info_field(la, "election", buf, sizeof buf);
	CHECK(strcmp(buf, "e") == 0, "lock_info election %s", buf);
	char *js = NULL;
	CHECK_ST(lock_leader(b, "e", &js, &err), LOCK_OK, &err);
	CHECK(js && strstr(js, "\"leader\":true") && strstr(js, "\"value\":\"A\""), "lock_leader: %s", js ? js : "(null)");
	lock_string_free(js);
	POLL_UNTIL(obs_has(&o, "\"value\":\"A\""), 2000);
	CHECK(obs_has(&o, "\"value\":\"A\""), "observe sees A: %s", o.last);
	/* the lock of the same name is another key: free */
	uint64_t m = 0;
	CHECK_ST(lock_acquire(b, "e", 1000, NULL, &m, &err), LOCK_OK, &err);
	lock_free(m);

	/* a bounded campaign is refused while A leads; a waiting one takes over
	 * when A resigns, with a higher term */
	int32_t st = lock_campaign(b, "e", "B", 5000, "{\"wait_ms\":0}", &lb, &err);
	CHECK(st == LOCK_NOT_ACQUIRED, "campaign with wait_ms 0 while A leads: %d %s", st, err ? err : "");
	lock_string_free(err);
	err = NULL;
	done_t d;
	done_init(&d);
	CHECK_ST(lock_campaign_async(b, "e", "B", 5000, NULL, on_done, &d, NULL, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(la, &err), LOCK_OK, &err);
	lock_free(la);
	CHECK(wait_done(&d, 5000 + (int)bound_ms()) == 1 && d.status == LOCK_OK, "B's campaign: %d %s", d.status, d.err);
	if (d.status == LOCK_OK) {
		info_field(d.handle, "fence", buf, sizeof buf);
		CHECK(atoll(buf) > t1, "B's term %s after A's %lld", buf, t1);
		POLL_UNTIL(obs_has(&o, "\"value\":\"B\""), 2000);
		CHECK(obs_has(&o, "\"value\":\"B\""), "observe sees B: %s", o.last);
		CHECK_ST(lock_release(d.handle, &err), LOCK_OK, &err);
		lock_free(d.handle);
	}
	done_destroy(&d);
	POLL_UNTIL(obs_has(&o, "\"leader\":false"), 2000);
	CHECK(obs_has(&o, "\"leader\":false"), "observe sees B resign: %s", o.last);
	CHECK(lock_free(w) == LOCK_OK, "lock_free(watch)");
	int n = obs_count(&o);
	CHECK_ST(lock_campaign(a, "e", "A2", 5000, NULL, &la, &err), LOCK_OK, &err);
	sleep_ms(300); /* deliberate: a callback after lock_free would come within this */
	CHECK(obs_count(&o) == n, "a callback after lock_free(watch)");
	lock_free(la);

	/* bad input: an invalid argument naming it, nothing left */
	char big[4200];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	EXPECT_ARG(lock_campaign(a, "", "v", 1000, NULL, &la, &err), "name", &err);
	EXPECT_ARG(lock_campaign(a, NULL, "v", 1000, NULL, &la, &err), "name", &err);
	EXPECT_ARG(lock_campaign(a, "e", "", 1000, NULL, &la, &err), "value", &err);
	EXPECT_ARG(lock_campaign(a, "e", NULL, 1000, NULL, &la, &err), "value", &err);
	EXPECT_ARG(lock_campaign(a, "e", big, 1000, NULL, &la, &err), "value", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 0, NULL, &la, &err), "ttl_ms", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 1000, "{\"wait_ms\":\"x\"}", &la, &err), "options", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 1000, "{\"bogus\":1}", &la, &err), "options", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 1000, "{\"wait_ms\":-1}", &la, &err), "wait_ms", &err);
	EXPECT_ARG(lock_campaign(a, "e", "v", 1000, NULL, NULL, &err), "out_lock", &err);
	EXPECT_ARG(lock_campaign_async(a, "e", "v", 1000, NULL, NULL, NULL, NULL, &err), "cb", &err);
	EXPECT_ARG(lock_leader(a, "", &js, &err), "name", &err);
	EXPECT_ARG(lock_leader(a, "e", NULL, &err), "leader_json", &err);
	EXPECT_ARG(lock_observe(a, "e", "{\"poll_ms\":-1}", on_leader, &o, &w, &err), "poll_ms", &err);
	EXPECT_ARG(lock_observe(a, "e", NULL, NULL, &o, &w, &err), "cb", &err);
	EXPECT_ARG(lock_observe(a, "", NULL, on_leader, &o, &w, &err), "name", &err);
	CHECK(settled_nodes_with(ekey, NULL, 0) == 0, "no election key left");
	CHECK(lock_free(a) == LOCK_OK && lock_free(b) == LOCK_OK, "free");
	pthread_mutex_destroy(&o.mu);
}
