/* The engine interface (lock_engine_*): a host with plain blocking sockets and poll(). */
#include "capi_test.h"

/* ---- The engine interface: a host with plain blocking sockets and poll() ---- */

typedef struct {
	uint8_t b[2048];
	size_t n;
} ev_t;
static void ev_u8(ev_t *e, uint8_t v) { e->b[e->n++] = v; }
static void ev_u32(ev_t *e, uint32_t v) {
	for (int i = 0; i < 4; i++)
		ev_u8(e, (uint8_t)(v >> (8 * i)));
}
static void ev_u64(ev_t *e, uint64_t v) {
	for (int i = 0; i < 8; i++)
		ev_u8(e, (uint8_t)(v >> (8 * i)));
}
static void ev_bytes(ev_t *e, const void *p, size_t n) {
	ev_u32(e, (uint32_t)n);
	memcpy(e->b + e->n, p, n);
	e->n += n;
}

#define ENG_CONNS 64
typedef struct {
	uint64_t eng;
	int fd[ENG_CONNS + 1]; /* by conn id (the engine counts them from 1) */
	uint8_t *out;
	double timer_at; /* ms, 0: none */
	uint64_t started, done_op, done_lock, lock_seen;
	int32_t done_status, rejected, closed, info_ok;
	char token[128];
	uint32_t opened[ENG_CONNS];
	int nopened;
	int failures; /* unexpected decode or step errors */
	/* the order of actions: FENCE must come right before its DONE */
	int seq, fence_seq, done_seq, fences;
	uint64_t fence_lock;
	int64_t fence;
	int fence_reentered;
	/* the last INSPECTED */
	uint64_t inspected_op;
	int inspected_held, inspected_nodes, inspected_locked, inspected_failed, inspected_readers;
	int64_t inspected_validity;
	char inspected_owner[128];
} ehost;

typedef struct {
	const uint8_t *p;
	size_t n, i;
	int bad;
} rd_t;
static uint64_t rd_n(rd_t *r, int w) {
	if (r->i + (size_t)w > r->n) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (int k = 0; k < w; k++)
		v |= (uint64_t)r->p[r->i + (size_t)k] << (8 * k);
	r->i += (size_t)w;
	return v;
}
/* rd_str returns the bytes of a str/bytes field (not NUL-terminated). */
static const uint8_t *rd_str(rd_t *r, uint32_t *len) {
	*len = (uint32_t)rd_n(r, 4);
	if (r->bad || r->i + *len > r->n) {
		r->bad = 1;
		*len = 0;
		return NULL;
	}
	const uint8_t *p = r->p + r->i;
	r->i += *len;
	return p;
}
/* The last error record with a status: its argument and, for a value out of
 * its range (engine protocol 4), the bound crossed, its value, unit and the
 * value given. */
static struct {
	char arg[64], bound[8], unit[16];
	int64_t limit, got;
} last_err;

/* rd_cpy copies a str field into dst (NUL-terminated, cut to fit). */
static void rd_cpy(rd_t *r, char *dst, size_t cap) {
	uint32_t l;
	const uint8_t *p = rd_str(r, &l);
	size_t n = p && l < cap ? l : 0;
	if (n)
		memcpy(dst, p, n);
	dst[n] = 0;
}

/* rd_err reads an error record: i32 status, str message, str a, str b,
 * u16 n, n x (u16 node, str addr, str cause), str bound, i64 limit,
 * str unit, i64 got. */
static int32_t rd_err(rd_t *r) {
	uint32_t l;
	char arg[64], bound[8], unit[16];
	int32_t st = (int32_t)rd_n(r, 4);
	rd_str(r, &l);
	rd_cpy(r, arg, sizeof arg);
	rd_str(r, &l);
	int nn = (int)rd_n(r, 2);
	for (int k = 0; k < nn && !r->bad; k++)
		rd_n(r, 2), rd_str(r, &l), rd_str(r, &l);
	rd_cpy(r, bound, sizeof bound);
	int64_t limit = (int64_t)rd_n(r, 8);
	rd_cpy(r, unit, sizeof unit);
	int64_t got = (int64_t)rd_n(r, 8);
	if (st != 0 && !r->bad) {
		memcpy(last_err.arg, arg, sizeof arg);
		memcpy(last_err.bound, bound, sizeof bound);
		memcpy(last_err.unit, unit, sizeof unit);
		last_err.limit = limit, last_err.got = got;
	}
	return st;
}

/* bound_is reports whether the last rejection named arg and its bound. */
static int bound_is(const char *arg, const char *bound, int64_t limit, const char *unit, int64_t got) {
	return strcmp(last_err.arg, arg) == 0 && strcmp(last_err.bound, bound) == 0 && last_err.limit == limit &&
	       strcmp(last_err.unit, unit) == 0 && last_err.got == got;
}

static void eh_step(ehost *h, const ev_t *e);

/* eh_act carries out the actions in out[0..n). Opens are connected at once
 * (blocking) and reported after the whole buffer. */
static void eh_act(ehost *h, size_t n) {
	rd_t r = {h->out, n, 0, 0};
	while (r.i < r.n && !r.bad) {
		uint32_t l, conn;
		const uint8_t *p;
		switch ((int)rd_n(&r, 1)) {
		case 1: { /* OPEN */
			conn = (uint32_t)rd_n(&r, 4);
			rd_n(&r, 4), rd_n(&r, 1);
			rd_str(&r, &l);
			p = rd_str(&r, &l);
			char addr[256] = {0};
			memcpy(addr, p, l < 255 ? l : 255);
			rd_str(&r, &l);
			char *colon = strrchr(addr, ':');
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in sa = {0};
			sa.sin_family = AF_INET;
			sa.sin_port = htons((uint16_t)atoi(colon ? colon + 1 : "0"));
			sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			if (conn <= ENG_CONNS && fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
				h->fd[conn] = fd;
				h->opened[h->nopened++] = conn;
			} else {
				if (fd >= 0)
					close(fd);
				h->failures++;
			}
			break;
		}
		case 2: /* WRITE */
			conn = (uint32_t)rd_n(&r, 4);
			p = rd_str(&r, &l);
			if (conn <= ENG_CONNS && h->fd[conn] >= 0 && p)
				for (size_t off = 0; off < l;) {
					ssize_t w = write(h->fd[conn], p + off, l - off);
					if (w <= 0)
						break;
					off += (size_t)w;
				}
			break;
		case 3: /* CLOSE */
			conn = (uint32_t)rd_n(&r, 4);
			if (conn <= ENG_CONNS && h->fd[conn] >= 0) {
				close(h->fd[conn]);
				h->fd[conn] = -1;
			}
			break;
		case 4: { /* DONE: u64 op, u64 lock, i64 fence, u8 reentered, error (engine protocol 2) */
			h->done_seq = ++h->seq;
			h->done_op = rd_n(&r, 8);
			h->done_lock = rd_n(&r, 8);
			int64_t fence = (int64_t)rd_n(&r, 8);
			int reentered = (int)rd_n(&r, 1);
			if (h->done_lock != 0 && (fence != 0 || reentered)) {
				h->fence_seq = h->done_seq;
				h->fences++;
				h->fence_lock = h->done_lock;
				h->fence = fence;
				h->fence_reentered = reentered;
			}
			h->done_status = rd_err(&r);
			break;
		}
		case 5: /* LOST */
			rd_n(&r, 8), rd_err(&r);
			break;
		case 6: /* TIMER */
			h->timer_at = now_ms() + (double)(int64_t)rd_n(&r, 8) / 1000.0;
			break;
		case 7:
			h->closed = 1;
			break;
		case 8:
			h->started = rd_n(&r, 8);
			break;
		case 9:
			h->rejected = rd_err(&r);
			break;
		case 10:
			rd_n(&r, 1);
			break;
		case 11: /* INFO */
			rd_str(&r, &l), rd_str(&r, &l);
			p = rd_str(&r, &l);
			if (p && l < sizeof h->token) {
				memcpy(h->token, p, l);
				h->token[l] = 0;
			}
			rd_n(&r, 8), rd_n(&r, 8), rd_n(&r, 1), rd_err(&r);
			h->info_ok = 1;
			break;
		case 12: { /* INSPECTED: u64 op, u8 held, i64 validity_ms, str owner, u16 n, n x node, u32 permits, u16 h, h x holder, i64 term, str value */
			h->seq++;
			uint64_t iop = rd_n(&r, 8);
			int held = (int)rd_n(&r, 1);
			int64_t validity = (int64_t)rd_n(&r, 8);
			p = rd_str(&r, &l);
			if (p && l < sizeof h->inspected_owner) {
				memcpy(h->inspected_owner, p, l);
				h->inspected_owner[l] = 0;
			}
			int nn = (int)rd_n(&r, 2), locked = 0, failed_nodes = 0;
			for (int k = 0; k < nn && !r.bad; k++) {
				rd_n(&r, 2), rd_str(&r, &l); /* node, addr */
				locked += (int)(rd_n(&r, 1) & 1);
				rd_str(&r, &l), rd_n(&r, 8); /* owner, ttl_ms */
				rd_str(&r, &l);              /* cause */
				failed_nodes += l > 0;
			}
			rd_n(&r, 4); /* permits (protocol 3) */
			int nh = (int)rd_n(&r, 2), readers = 0;
			for (int k = 0; k < nh && !r.bad; k++) {
				rd_n(&r, 4), rd_str(&r, &l), rd_n(&r, 8); /* slot, owner, validity_ms */
				readers += rd_n(&r, 1) == 1;              /* mode (protocol 4): 1, a reader */
			}
			h->inspected_readers = readers;
			rd_n(&r, 8), rd_str(&r, &l); /* an election's term and value (protocol 3) */
			h->inspected_held = held, h->inspected_validity = validity, h->inspected_nodes = nn;
			h->inspected_locked = locked, h->inspected_failed = failed_nodes;
			h->inspected_op = iop; /* last: eh_run waits for it */
			break;
		}
		default:
			r.bad = 1;
		}
	}
	if (r.bad)
		h->failures++;
}

/* eh_step hands in one event (NULL: none) and carries out every action. */
static void eh_step(ehost *h, const ev_t *e) {
	int64_t n = lock_engine_step(h->eng, e ? e->b : NULL, e ? e->n : 0, h->out, LOCK_ENGINE_MIN_OUT);
	while (n > 0) {
		ENGINE_OUT_DEFINED(h->out, (size_t)n);
		eh_act(h, (size_t)n);
		n = lock_engine_step(h->eng, NULL, 0, h->out, LOCK_ENGINE_MIN_OUT);
	}
	if (n < 0)
		h->failures++;
	while (h->nopened > 0) {
		ev_t o = {.n = 0};
		ev_u8(&o, 7);
		ev_u32(&o, h->opened[--h->nopened]);
		eh_step(h, &o);
	}
}

/* eh_run runs the loop until *flag is set or ms pass; returns *flag. */
static int eh_run(ehost *h, volatile int32_t *flag, int ms) {
	double end = now_ms() + ms;
	while (!*flag && now_ms() < end) {
		struct pollfd pfd[ENG_CONNS];
		uint32_t ids[ENG_CONNS];
		int np = 0;
		for (uint32_t c = 1; c <= ENG_CONNS; c++)
			if (h->fd[c] >= 0) {
				pfd[np].fd = h->fd[c], pfd[np].events = POLLIN, pfd[np].revents = 0;
				ids[np++] = c;
			}
		int wait = 10;
		if (h->timer_at > 0 && h->timer_at - now_ms() < wait)
			wait = h->timer_at > now_ms() ? (int)(h->timer_at - now_ms()) + 1 : 0;
		poll(pfd, (nfds_t)np, wait);
		for (int k = 0; k < np; k++) {
			if (!pfd[k].revents || h->fd[ids[k]] < 0)
				continue;
			/* At most what one event holds beside its kind, id and length
			 * (an INFO reply in the handshake is larger: it comes in pieces). */
			uint8_t buf[sizeof(((ev_t *)0)->b) - 16];
			ssize_t got = read(pfd[k].fd, buf, sizeof buf);
			ev_t e = {.n = 0};
			if (got > 0) {
				ev_u8(&e, 8);
				ev_u32(&e, ids[k]);
				ev_bytes(&e, buf, (size_t)got);
			} else {
				close(h->fd[ids[k]]);
				h->fd[ids[k]] = -1;
				ev_u8(&e, 9);
				ev_u32(&e, ids[k]);
				ev_bytes(&e, "EOF", 3);
			}
			eh_step(h, &e);
		}
		if (h->timer_at > 0 && now_ms() >= h->timer_at) {
			h->timer_at = 0;
			ev_t t = {.n = 0};
			ev_u8(&t, 10);
			eh_step(h, &t);
		}
	}
	return *flag != 0;
}

static void eh_request(ehost *h, ev_t *e) {
	h->started = 0, h->rejected = 0, h->done_op = 0, h->done_status = -1, h->info_ok = 0;
	eh_step(h, e);
}

/* eh_wait_done runs the loop until the DONE of op (or the bound). */
static int eh_wait_done(ehost *h, uint64_t op) {
	double t0 = now_ms();
	while (now_ms() - t0 < bound_ms()) {
		if (h->done_op == op)
			return 1;
		h->done_op = 0;
		eh_run(h, (volatile int32_t *)&h->done_op, (int)bound_ms());
	}
	return h->done_op == op;
}

static void ev_acquire(ev_t *e, const char *res, int64_t ttl, uint8_t flags, const char *token) {
	e->n = 0;
	ev_u8(e, 1);
	ev_bytes(e, res, strlen(res));
	ev_u64(e, (uint64_t)ttl);
	ev_u64(e, 0);
	ev_u8(e, flags);
	if (token)
		ev_bytes(e, token, strlen(token));
}

/* The engine's additions: ACQUIRE with the fence flag (FENCE right before
 * DONE, fences increasing), with a token (re-entry: its DONE says so), both
 * (REJECTED), unknown flags (malformed); INSPECT (INSPECTED; REJECTED for
 * a bad resource). */
static void eng_fence_and_inspect(ehost *h) {
	ev_t e = {.n = 0};
	int64_t last = 0;
	for (int i = 0; i < 3; i++) {
		ev_acquire(&e, "eng-fence", 10000, 2, NULL);
		eh_request(h, &e);
		uint64_t op = h->started;
		CHECK(op != 0, "fenced acquire not started (rejected %d)", h->rejected);
		int fences0 = h->fences;
		CHECK(eh_wait_done(h, op) && h->done_status == LOCK_OK && h->done_lock != 0, "fenced acquire: %d", h->done_status);
		CHECK(h->fences == fences0 + 1 && h->fence_lock == h->done_lock && h->fence_seq == h->done_seq,
		      "the fence in the DONE: fences %d->%d, lock %" PRIu64 "/%" PRIu64 ", seq %d/%d", fences0, h->fences,
		      h->fence_lock, h->done_lock, h->fence_seq, h->done_seq);
		CHECK(h->fence > last && !h->fence_reentered, "fence %" PRId64 " after %" PRId64, h->fence, last);
		last = h->fence;
		uint64_t lock = h->done_lock;
		if (i == 2) { /* keep the last one, and look at it */
			ev_t in = {.n = 0};
			ev_u8(&in, 12);
			ev_bytes(&in, "eng-fence", 9);
			ev_u8(&in, 0); /* flags: the mutex */
			h->inspected_op = 0;
			eh_request(h, &in);
			CHECK(h->started != 0, "inspect not started (rejected %d)", h->rejected);
			uint64_t iop = h->started;
			eh_run(h, (volatile int32_t *)&h->inspected_op, (int)bound_ms());
			CHECK(h->inspected_op == iop && h->inspected_held && h->inspected_validity > 9000 &&
			          h->inspected_nodes == nnodes && h->inspected_locked == nnodes && h->inspected_failed == 0,
			      "INSPECTED: op %" PRIu64 "/%" PRIu64 " held %d validity %" PRId64 " nodes %d locked %d failed %d",
			      h->inspected_op, iop, h->inspected_held, h->inspected_validity, h->inspected_nodes, h->inspected_locked,
			      h->inspected_failed);
			CHECK(h->inspected_owner[0] == 0, "no owner configured: %s", h->inspected_owner);
			/* re-enter it with its token: FENCE says reentered */
			ev_t info = {.n = 0};
			ev_u8(&info, 11);
			ev_u64(&info, lock);
			eh_request(h, &info);
			char tok[128];
			snprintf(tok, sizeof tok, "%s", h->token);
			ev_acquire(&e, "eng-fence", 20000, 4, tok);
			eh_request(h, &e);
			op = h->started;
			CHECK(op != 0 && eh_wait_done(h, op) && h->done_status == LOCK_OK, "token acquire: %d", h->done_status);
			CHECK(h->fence_seq == h->done_seq && h->fence_reentered == 1 && h->fence == 0 && h->fence_lock == h->done_lock,
			      "the DONE of a re-entry: reentered %d fence %" PRId64, h->fence_reentered, h->fence);
			ev_t forget = {.n = 0};
			ev_u8(&forget, 5);
			ev_u64(&forget, h->done_lock);
			eh_request(h, &forget);
		}
		ev_t rel = {.n = 0};
		ev_u8(&rel, 3);
		ev_u64(&rel, lock);
		eh_request(h, &rel);
		CHECK(h->started != 0 && eh_wait_done(h, h->started) && h->done_status == LOCK_OK, "release: %d", h->done_status);
	}
	/* two readers of a read-write lock (ACQUIRE flag bit 4): an INSPECT of
	 * it (flag bit 4) lists both as holders of mode 1 (engine protocol 4) */
	uint64_t readers[2] = {0, 0};
	for (int i = 0; i < 2; i++) {
		ev_acquire(&e, "eng-rw", 10000, 16, NULL);
		eh_request(h, &e);
		uint64_t op = h->started;
		CHECK(op != 0 && eh_wait_done(h, op) && h->done_status == LOCK_OK && h->done_lock != 0, "reader %d: %d", i,
		      h->done_status);
		readers[i] = h->done_lock;
	}
	ev_t rin = {.n = 0};
	ev_u8(&rin, 12);
	ev_bytes(&rin, "eng-rw", 6);
	ev_u8(&rin, 16); /* flags: the read-write lock */
	h->inspected_op = 0, h->inspected_readers = -1;
	eh_request(h, &rin);
	uint64_t riop = h->started;
	CHECK(riop != 0, "rw inspect not started (rejected %d)", h->rejected);
	eh_run(h, (volatile int32_t *)&h->inspected_op, (int)bound_ms());
	CHECK(h->inspected_op == riop && h->inspected_readers == 2 && !h->inspected_held, "rw INSPECTED: %d readers, held %d",
	      h->inspected_readers, h->inspected_held);
	for (int i = 0; i < 2; i++) {
		ev_t rel = {.n = 0};
		ev_u8(&rel, 3);
		ev_u64(&rel, readers[i]);
		eh_request(h, &rel);
		CHECK(h->started != 0 && eh_wait_done(h, h->started) && h->done_status == LOCK_OK, "reader release: %d", h->done_status);
	}
	/* fence with a token: REJECTED; an empty token or an unknown flag: malformed */
	ev_acquire(&e, "eng-fence", 10000, 2 | 4, "0123456789abcdef");
	eh_request(h, &e);
	CHECK(h->rejected == LOCK_INVALID_ARGUMENT && h->started == 0, "fence+token: rejected %d", h->rejected);
	ev_acquire(&e, "eng-fence", 10000, 4, "short");
	eh_request(h, &e);
	CHECK(h->rejected == LOCK_INVALID_ARGUMENT && h->started == 0, "short token: rejected %d", h->rejected);
	CHECK(bound_is("token", "min", 16, "bytes", 5), "short token: the bound in the rejection: %s %s %lld %s %lld", last_err.arg,
	      last_err.bound, (long long)last_err.limit, last_err.unit, (long long)last_err.got);
	ev_acquire(&e, "eng-fence", 86400001, 0, NULL);
	eh_request(h, &e);
	CHECK(h->rejected == LOCK_INVALID_ARGUMENT && h->started == 0, "ttl above its max: rejected %d", h->rejected);
	CHECK(bound_is("ttl_ms", "max", 86400000, "ms", 86400001), "ttl above its max: the bound in the rejection: %s %s %lld %s %lld",
	      last_err.arg, last_err.bound, (long long)last_err.limit, last_err.unit, (long long)last_err.got);
	ev_acquire(&e, "eng-fence", 10000, 4, "");
	CHECK(lock_engine_step(h->eng, e.b, e.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "empty token");
	ev_acquire(&e, "eng-fence", 10000, 128, NULL);
	CHECK(lock_engine_step(h->eng, e.b, e.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "flag bit 7");
	ev_acquire(&e, "eng-fence", 10000, 8, NULL); /* the permits flag without permits */
	CHECK(lock_engine_step(h->eng, e.b, e.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "missing permits");
	ev_acquire(&e, "eng-fence", 10000, 4, NULL); /* the token flag without a token */
	CHECK(lock_engine_step(h->eng, e.b, e.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "missing token");
	ev_t in = {.n = 0};
	ev_u8(&in, 12);
	ev_bytes(&in, "", 0);
	ev_u8(&in, 0);
	eh_request(h, &in);
	CHECK(h->rejected == LOCK_INVALID_ARGUMENT && h->started == 0, "inspect of \"\": rejected %d", h->rejected);
	CHECK(bound_is("resource", "min", 1, "bytes", 0), "inspect of \"\": the bound in the rejection: %s %s", last_err.arg, last_err.bound);
	in.n = 0;
	ev_u8(&in, 12);
	ev_u32(&in, 5); /* a length past the end */
	CHECK(lock_engine_step(h->eng, in.b, in.n, h->out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "truncated INSPECT");
	CHECK(lock_engine_step(h->eng, NULL, 0, h->out, LOCK_ENGINE_MIN_OUT) == 0, "a malformed event left actions");
}

void test_engine(void) {
	char *err = NULL;
	uint64_t eng = 0;
	/* lock_engine_new: bad input */
	CHECK_ST(lock_engine_new(NULL, &eng, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK_ST(lock_engine_new(config_json("ceng:", node_timeout_ms), NULL, &err), LOCK_INVALID_ARGUMENT, &err);
	CHECK(lock_engine_new("{\"nodes\":[\"redis://h:1\"],\"bogus\":1}", &eng, &err) == LOCK_INVALID_ARGUMENT && err &&
	          strstr(err, "bogus"),
	      "unknown key: %s", err ? err : "(null)");
	lock_string_free(err);
	err = NULL;
	CHECK(lock_engine_new("{\"nodes\":[\"redis://h:1\"],\"node_timeout_ms\":1.5}", &eng, NULL) == LOCK_INVALID_ARGUMENT,
	      "float timeout accepted");

	CHECK_ST(lock_engine_new(config_json("ceng:", node_timeout_ms), &eng, &err), LOCK_OK, &err);
	CHECK(err == NULL, "err set on success");
	ehost h = {.eng = eng, .out = malloc(LOCK_ENGINE_MIN_OUT)};
	for (int c = 0; c <= ENG_CONNS; c++)
		h.fd[c] = -1;

	/* lock_engine_step: bad input, nothing done */
	ev_t acq = {.n = 0};
	const char *res = "eng-res";
	ev_u8(&acq, 1);
	ev_bytes(&acq, res, strlen(res));
	ev_u64(&acq, 10000);
	ev_u64(&acq, 0);
	ev_u8(&acq, 0);
	CHECK(lock_engine_step(0, acq.b, acq.n, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_HANDLE, "handle 0");
	CHECK(lock_engine_step(eng + 1000000, acq.b, acq.n, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_HANDLE, "unknown handle");
	CHECK(lock_engine_step(eng, acq.b, acq.n - 1, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "truncated event");
	CHECK(lock_engine_step(eng, acq.b, acq.n, h.out, 100) == -LOCK_INVALID_ARGUMENT, "tiny out_cap");
	CHECK(lock_engine_step(eng, acq.b, acq.n, NULL, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "NULL out");
	CHECK(lock_engine_step(eng, NULL, 5, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "NULL in");
	uint8_t unknown[] = {200};
	CHECK(lock_engine_step(eng, unknown, 1, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_ARGUMENT, "unknown kind");
	CHECK(lock_engine_step(eng, NULL, 0, h.out, LOCK_ENGINE_MIN_OUT) == 0, "a rejected event left actions");

	/* acquire, check the nodes, release */
	eh_request(&h, &acq);
	CHECK(h.started != 0 && h.failures == 0, "acquire not started (failures %d)", h.failures);
	uint64_t op = h.started;
	int32_t have = 0;
	double t0 = now_ms();
	while (!have && now_ms() - t0 < bound_ms()) {
		eh_run(&h, (volatile int32_t *)&h.done_op, (int)bound_ms());
		have = h.done_op == op;
		if (!have)
			h.done_op = 0;
	}
	CHECK(have && h.done_status == LOCK_OK && h.done_lock != 0, "acquire: op %" PRIu64 " status %d", h.done_op, h.done_status);
	uint64_t lock = h.done_lock;
	ev_t info = {.n = 0};
	ev_u8(&info, 11);
	ev_u64(&info, lock);
	eh_request(&h, &info);
	CHECK(h.info_ok && strlen(h.token) > 0, "lock info");
	CHECK(nodes_with("ceng:eng-res", h.token) >= quorum(), "the token is on %d nodes", nodes_with("ceng:eng-res", h.token));

	ev_t rel = {.n = 0};
	ev_u8(&rel, 3);
	ev_u64(&rel, lock);
	eh_request(&h, &rel);
	CHECK(h.started != 0, "release not started");
	eh_run(&h, (volatile int32_t *)&h.done_op, (int)bound_ms());
	CHECK(h.done_op == h.started && h.done_status == LOCK_OK, "release: status %d", h.done_status);
	t0 = now_ms();
	int32_t gone = 0;
	while (!gone && now_ms() - t0 < bound_ms()) {
		int32_t never = 0;
		eh_run(&h, &never, 5); /* deliver the other nodes' replies */
		gone = settled_nodes_with("ceng:eng-res", NULL, 0) == 0;
	}
	CHECK(gone, "the key is left on %d nodes", nodes_with("ceng:eng-res", NULL));
	eh_request(&h, &rel);
	CHECK(h.rejected == LOCK_INVALID_HANDLE, "release of a released lock: %d", h.rejected);
	CHECK(h.fences == 0, "FENCE after an acquire that asked for neither fence nor token");
	eng_fence_and_inspect(&h);

	/* an orderly end */
	ev_t cl = {.n = 0};
	ev_u8(&cl, 6);
	eh_request(&h, &cl);
	CHECK(eh_run(&h, &h.closed, (int)bound_ms()), "no CLOSED");
	CHECK(h.failures == 0, "%d decode or step failures", h.failures);
	for (int c = 0; c <= ENG_CONNS; c++)
		if (h.fd[c] >= 0) {
			CHECK(0, "connection %d left open after CLOSED", c);
			close(h.fd[c]);
		}
	CHECK(lock_engine_free(eng) == LOCK_OK, "free");
	CHECK(lock_engine_free(eng) == LOCK_INVALID_HANDLE, "double free");
	CHECK(lock_engine_free(0) == LOCK_INVALID_HANDLE, "free 0");
	CHECK(lock_engine_step(eng, NULL, 0, h.out, LOCK_ENGINE_MIN_OUT) == -LOCK_INVALID_HANDLE, "step after free");
	free(h.out);
}
