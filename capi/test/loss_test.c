/* Loss: lock_on_lost and lock_client_on_lost. */
#include "capi_test.h"

/* ----- loss ----- */

void test_on_lost(void) {
	uint64_t c = new_client("t7:");
	char *err = NULL, tok[512], buf[64];
	uint64_t l = 0;
	done_t d;

	/* auto-extended lock whose keys are overwritten by someone else */
	done_init(&d);
	/* 1.5 s, not less: an extension is due every third of the ttl, and a
	 * loaded machine can stall the process for a few hundred ms */
	CHECK_ST(lock_acquire(c, "lost", 1500, "{\"auto_extend\":true}", &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l, on_done, &d, &err), LOCK_OK, &err);
	info_field(l, "token", tok, sizeof tok);
	/* Deliberate: the lock must outlive its ttl (1.5 s) thanks to the
	 * auto-extension; the checks below say it did. */
	sleep_ms(1700);
	CHECK(calls_of(&d) == 0, "auto-extended lock not lost");
	CHECK(nodes_with("t7:lost", tok) >= quorum(), "still held after its ttl");
	for (int i = 0; i < nnodes; i++)
		CHECK(rset(i, "t7:lost", "other") == 0, "overwrite node %d", i);
	CHECK(wait_done(&d, 1500 + (int)bound_ms()) == 1 && d.status == LOCK_LOST && d.handle == l, "on_lost: %d",
	      d.status);
	CHECK(!pthread_equal(d.thread, pthread_self()), "on_lost on a library thread");
	info_field(l, "lost", buf, sizeof buf);
	CHECK(strcmp(buf, "true") == 0, "lost %s", buf);
	CHECK_ST(lock_extend(l, 1000, &err), LOCK_LOST, &err);
	CHECK_ST(lock_release(l, &err), LOCK_LOST, &err);
	CHECK(settled_nodes_with("t7:lost", "other", nnodes) == nnodes, "another owner's key is never touched");
	sleep_ms(50); /* deliberate: a window in which a second on_lost would come */
	CHECK(calls_of(&d) == 1, "on_lost called once");
	CHECK(lock_free(l) == LOCK_OK, "free");
	for (int i = 0; i < nnodes; i++)
		rdel(i, "t7:lost");
	done_destroy(&d);

	/* a plain lock whose validity runs out; registering after the loss calls at once */
	done_init(&d);
	CHECK_ST(lock_acquire(c, "expire", 100, NULL, &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l, on_done, &d, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, 100 + (int)bound_ms()) == 1 && d.status == LOCK_LOST, "expired: %d", d.status);
	done_destroy(&d);
	done_init(&d);
	CHECK_ST(lock_on_lost(l, on_done, &d, &err), LOCK_OK, &err);
	CHECK(wait_done(&d, (int)bound_ms()) == 1 && d.status == LOCK_LOST, "late registration: %d", d.status);
	done_destroy(&d);
	CHECK(lock_free(l) == LOCK_OK, "free");

	/* replaced, removed, and never after a release or a free */
	done_t d1, d2, d3;
	done_init(&d1);
	done_init(&d2);
	done_init(&d3);
	uint64_t l2 = 0, l3 = 0;
	CHECK_ST(lock_acquire(c, "quiet", 150, NULL, &l, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l, on_done, &d1, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l, on_done, &d2, &err), LOCK_OK, &err); /* replaces d1 */
	CHECK_ST(lock_acquire(c, "quiet2", 150, NULL, &l2, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l2, on_done, &d3, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l2, NULL, NULL, &err), LOCK_OK, &err); /* removed */
	CHECK_ST(lock_acquire(c, "quiet3", 150, NULL, &l3, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l3, on_done, &d3, &err), LOCK_OK, &err);
	CHECK(lock_free(l3) == LOCK_OK, "free"); /* freed: never called */
	CHECK(wait_done(&d2, 150 + (int)bound_ms()) == 1, "the replacement is called");
	/* Deliberate: proves callbacks do NOT come, so lets twice the locks'
	 * 150 ms ttl pass, by which they would have been called. */
	sleep_ms(300);
	CHECK(calls_of(&d1) == 0, "the replaced callback is not called");
	CHECK(calls_of(&d3) == 0, "removed / freed: not called");
	lock_free(l);
	lock_free(l2);
	/* 500 ms: the release must come before the lock expires, on a loaded
	 * machine too (with 150 ms a stall could make it LOCK_LOST) */
	CHECK_ST(lock_acquire(c, "quiet", 500, NULL, &l, &err), LOCK_OK, &err);
	done_init(&d);
	CHECK_ST(lock_on_lost(l, on_done, &d, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l, &err), LOCK_OK, &err);
	sleep_ms(1000); /* deliberate: twice the ttl, by which an expiry would have called it */
	CHECK(calls_of(&d) == 0, "not called after a release");
	lock_free(l);
	done_destroy(&d);
	done_destroy(&d1);
	done_destroy(&d2);
	done_destroy(&d3);
	lock_free(c);
}

/* lock_client_on_lost: one callback for every lock of a client */
typedef struct {
	pthread_mutex_t mu;
	int calls;
	uint64_t handles[8];
	int32_t status[8];
} lost_all_t;

static void on_lost_all(void *ud, int32_t status, uint64_t handle, const char *err) {
	(void)err;
	lost_all_t *a = ud;
	pthread_mutex_lock(&a->mu);
	if (a->calls < 8) {
		a->handles[a->calls] = handle;
		a->status[a->calls] = status;
	}
	a->calls++;
	pthread_mutex_unlock(&a->mu);
}

static int lost_all_calls(lost_all_t *a) {
	pthread_mutex_lock(&a->mu);
	int c = a->calls;
	pthread_mutex_unlock(&a->mu);
	return c;
}

void test_client_on_lost(void) {
	uint64_t c = new_client("t7b:"), l1 = 0, l2 = 0, l3 = 0, l4 = 0;
	char *err = NULL;
	lost_all_t a, none;
	memset(&a, 0, sizeof a);
	memset(&none, 0, sizeof none);
	pthread_mutex_init(&a.mu, NULL);
	pthread_mutex_init(&none.mu, NULL);
	done_t own, late;
	done_init(&own);
	done_init(&late);

	/* The client's first acquire dials and greets every node: under valgrind
	 * that alone can take longer than the short ttls below, so it goes first. */
	CHECK_ST(lock_acquire(c, "warm", 30000, NULL, &l1, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l1, &err), LOCK_OK, &err);
	lock_free(l1);
	CHECK_ST(lock_client_on_lost(c, on_lost_all, &none, &err), LOCK_OK, &err);
	CHECK_ST(lock_client_on_lost(c, on_lost_all, &a, &err), LOCK_OK, &err); /* replaces */
	/* two plain locks whose validity runs out (one with its own callback too),
	 * one released and one freed: the client's callback is told of the two lost */
	CHECK_ST(lock_acquire(c, "e1", 300, NULL, &l1, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "e2", 300, NULL, &l2, &err), LOCK_OK, &err);
	CHECK_ST(lock_on_lost(l2, on_done, &own, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "r", 600, NULL, &l3, &err), LOCK_OK, &err);
	CHECK_ST(lock_release(l3, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "f", 300, NULL, &l4, &err), LOCK_OK, &err);
	CHECK(lock_free(l4) == LOCK_OK, "free");
	POLL_UNTIL(lost_all_calls(&a) >= 2, 300 + bound_ms());
	CHECK(wait_done(&own, (int)bound_ms()) == 1 && own.status == LOCK_LOST && own.handle == l2, "own: %d",
	      own.status);
	/* Deliberate: proves no further call comes (the released and freed
	 * locks' ttl, 600 ms, passes). */
	sleep_ms(700);
	pthread_mutex_lock(&a.mu);
	CHECK(a.calls == 2, "client callback: %d calls, want 2", a.calls);
	CHECK(a.calls >= 2 && a.status[0] == LOCK_LOST && a.status[1] == LOCK_LOST, "statuses");
	CHECK(a.calls >= 2 && ((a.handles[0] == l1 && a.handles[1] == l2) || (a.handles[0] == l2 && a.handles[1] == l1)),
	      "handles %" PRIu64 " %" PRIu64, a.handles[0], a.handles[1]);
	pthread_mutex_unlock(&a.mu);
	CHECK(lost_all_calls(&none) == 0, "the replaced client callback is not called");
	/* a lock's own callback registered after the loss runs; the client's is not told twice */
	CHECK_ST(lock_on_lost(l1, on_done, &late, &err), LOCK_OK, &err);
	CHECK(wait_done(&late, (int)bound_ms()) == 1 && late.handle == l1, "late own callback");
	CHECK(lost_all_calls(&a) == 2, "told once per lock");
	/* removed: not called */
	CHECK_ST(lock_client_on_lost(c, NULL, NULL, &err), LOCK_OK, &err);
	CHECK_ST(lock_acquire(c, "e3", 300, NULL, &l4, &err), LOCK_OK, &err);
	sleep_ms(900); /* deliberate: three times its ttl, by which it would have been called */
	CHECK(lost_all_calls(&a) == 2, "removed: not called");
	/* not a client handle */
	CHECK_ST(lock_client_on_lost(l1, on_lost_all, &a, &err), LOCK_INVALID_HANDLE, &err);
	CHECK_ST(lock_client_on_lost(0, on_lost_all, &a, &err), LOCK_INVALID_HANDLE, &err);
	lock_free(l1);
	lock_free(l2);
	lock_free(l3);
	lock_free(l4);
	lock_free(c);
	CHECK_ST(lock_client_on_lost(c, on_lost_all, &a, &err), LOCK_INVALID_HANDLE, &err);
	done_destroy(&own);
	done_destroy(&late);
	pthread_mutex_destroy(&a.mu);
	pthread_mutex_destroy(&none.mu);
}
