/*
 * capi_test.h -- what the C tests of liblock.so share: the includes, the
 * bookkeeping (CHECK, CHECK_ST, EXPECT_ARG, POLL_UNTIL), the nodes under
 * test and the helpers around the library, all in helpers.c; each
 * *_test.c file holds the tests of one topic, main.c runs them.
 */
#ifndef CAPI_TEST_H
#define CAPI_TEST_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/time.h>
/* The engine's output, marked defined for memcheck where lock_engine_step
 * hands it over: memcheck takes a switch between two nearby goroutine
 * stacks for a frame pop and marks the bytes between them undefined, and
 * Go's copy carries those marks into the host's buffer (capi/README, item
 * 5: seen in the decoder, in the checks and in write(2) of a WRITE's
 * bytes, every value right). Only [0, n) is marked: a read past what the
 * engine wrote stays reported. Without valgrind's header, a no-op. */
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define ENGINE_OUT_DEFINED(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#endif
#endif
#ifndef ENGINE_OUT_DEFINED
#define ENGINE_OUT_DEFINED(p, n) ((void)0)
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "liblock.h"

/* ---------- test bookkeeping (helpers.c) ---------- */

extern int passed, failed;

#define CHECK(cond, ...) check_((cond), __FILE__, __LINE__, #cond, __VA_ARGS__)


/* CHECK_ST checks a status and the err out-parameter (NULL on success, a
 * message on failure), then frees the message. */
#define CHECK_ST(got, want, errp) check_st_((got), (want), #want, (errp), __FILE__, __LINE__, #got)

/* POLL_UNTIL(cond, ms): the one way these tests wait for a condition. It
 * checks cond every 2 ms until it holds or ms pass (cond is checked once
 * after the last pause, so a late truth is seen); the caller then CHECKs
 * cond, or what it computed, naming what it waited for. */
#define POLL_UNTIL(cond, ms) \
	for (double poll_end_ = now_ms() + (ms); !(cond) && now_ms() < poll_end_;) sleep_ms(2)

/* expect_arg checks LOCK_INVALID_ARGUMENT with a message naming name. */
#define EXPECT_ARG(call, name, errp) expect_arg_((call), (name), (errp), __FILE__, __LINE__, #call)

/* ---------- the nodes (LIBLOCK_NODES, LIBLOCK_NODE_PIDS: parse_env) ---------- */

#define MAXN 16
extern int nnodes;
extern char *node_urls[MAXN];
extern int node_ports[MAXN];
extern pid_t node_pids[MAXN];
extern int node_frozen[MAXN], node_dead[MAXN];
extern int node_timeout_ms;
extern int quick;

/* A completion record for callbacks. */
typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int calls;
	int32_t status;
	uint64_t handle;
	char err[512];
	pthread_t thread;
} done_t;

/* A completion record for lock_inspect_callback. */
typedef struct {
	done_t d;
	char js[8192];
	int js_null;
} idone_t;

/* helpers.c */
int check_(int ok, const char *file, int line, const char *expr, const char *fmt, ...);
int check_st_(int32_t got, int32_t want, const char *wname, char **errp, const char *file, int line, const char *expr);
double now_ms(void);
void sleep_ms(int ms);
void parse_env(void);
void freeze(int i);
void thaw(int i);
int rcmd(int i, char *out, size_t outsz, int argc, const char **argv);
int rget(int i, const char *key, char *val, size_t valsz);
int rset(int i, const char *key, const char *val);
void rdel(int i, const char *key);
int nodes_with(const char *key, const char *val);
int quorum(void);
int settled_nodes_with(const char *key, const char *val, int want);
int nodes_listening(const char *key, int want);
int nodes_pttl_above(const char *key, long ms);
int dead_answering(void);
int live_nodes(void);
char *config_urls_json(const char *const *urls, const char *prefix, int timeout_ms);
char *config_json(const char *prefix, int timeout_ms);
uint64_t new_client(const char *prefix);
int json_field(const char *js, const char *key, char *out, size_t outsz);
void info_field(uint64_t lock, const char *key, char *out, size_t outsz);
void done_init(done_t *d);
void done_destroy(done_t *d);
void on_done(void *ud, int32_t status, uint64_t handle, const char *err);
int wait_done(done_t *d, int ms);
int calls_of(done_t *d);
double bound_ms(void);
double settle_ms(void);
char *config_owner_json(const char *prefix, const char *owner_value);
int count_of(const char *s, const char *pat);
char *inspect_js(uint64_t c, const char *res, int32_t want);
void on_inspected(void *ud, int32_t status, const char *js, const char *err);
int rw_nodes_with(const char *key);
int rw_settled(const char *key, int want);
void expect_arg_(int32_t st, const char *name, char **errp, const char *file, int line, const char *expr);

/* the tests, one topic a file */
void test_basics(void);
void test_client_config(void);
void test_unreachable(void);
void test_basic_lock(void);
void test_contention(void);
void test_races(void);
void test_bad_arguments(void);
void test_bad_handles(void);
void test_new_bad_arguments(void);
void test_reentrant(void);
void test_async(void);
void test_small_user_data(void);
void test_queue_wakeup(void);
void test_queue(void);
void test_on_lost(void);
void test_client_on_lost(void);
void test_frozen(void);
void test_killed(void);
void test_fence_frozen_round(void);
void test_fence_killed_round(void);
void test_leaks(void);
void test_inspect(void);
void test_reenter(void);
void test_fence(void);
void test_engine(void);
void test_semaphore(void);
void test_rwlock(void);
void test_multi(void);
void test_elect(void);

#endif
