package engine

// The simulation's world: one event queue ordered by true time, clocks that
// drift, and the network between the clients' engines and the model nodes:
// per-connection FIFO byte streams with random delays (so replies on
// different connections overtake each other), resets, partitions, spikes.

import (
	"fmt"
	"io"
	mrand "math/rand/v2"
	"time"
)

// simClock is a clock that runs at rate × true time from base: a client's
// monotonic clock or a node's wall clock.
type simClock struct {
	base time.Duration
	rate float64
}

func (c simClock) at(t time.Duration) time.Duration {
	return c.base + time.Duration(float64(t)*c.rate)
}

// trueAt is the earliest true time at which the clock reads v or more.
func (c simClock) trueAt(v time.Duration) time.Duration {
	t := time.Duration(float64(v-c.base) / c.rate)
	for c.at(t) < v {
		t++
	}
	for c.at(t-1) >= v {
		t--
	}
	return t
}

// evKind says what an event does; the frequent ones are typed rather than
// closures, which would cost an allocation each.
type evKind uint8

const (
	evFunc     evKind = iota // fn()
	evSyn                    // conn's SYN reaches its node
	evToNode                 // data (nil: the client's FIN) reaches conn's node
	evOpened                 // conn's client learns it is open
	evToClient               // data (n whole replies) reaches conn's client
	evRefused                // conn's client learns the node refused it
	evReset                  // conn's client learns the node reset it
	evTimer                  // client cl's timer of generation gen fires
)

type simEvent struct {
	at   time.Duration
	seq  uint64
	kind evKind
	n    int
	gen  uint64
	conn *simConn
	cl   *simClient
	data []byte
	fn   func()
}

// eventQueue is a min-heap by (at, seq): events due at the same time run in
// the order they were scheduled. The heap holds small pointer-free entries;
// the events themselves sit in a slab, so sifting moves no pointers.
type eventQueue struct {
	h    []qEntry
	slab []simEvent
	free []int32
}

type qEntry struct {
	at  time.Duration
	seq uint64
	idx int32
}

func (q *eventQueue) len() int { return len(q.h) }

func (q *eventQueue) less(i, j int) bool {
	a, b := &q.h[i], &q.h[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q *eventQueue) push(ev simEvent) {
	var idx int32
	if k := len(q.free); k > 0 {
		idx = q.free[k-1]
		q.free = q.free[:k-1]
		q.slab[idx] = ev
	} else {
		idx = int32(len(q.slab))
		q.slab = append(q.slab, ev)
	}
	q.h = append(q.h, qEntry{at: ev.at, seq: ev.seq, idx: idx})
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

// pop removes the earliest event and returns it.
func (q *eventQueue) pop() simEvent {
	top := q.h[0]
	last := len(q.h) - 1
	q.h[0] = q.h[last]
	q.h = q.h[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(q.h) && q.less(l, m) {
			m = l
		}
		if r < len(q.h) && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	ev := q.slab[top.idx]
	q.slab[top.idx] = simEvent{}
	q.free = append(q.free, top.idx)
	return ev
}

// sim is one run: everything in it derives from seed.
type sim struct {
	seed    int64
	profile string
	cfg     simConfig
	rng     *mrand.Rand
	now     time.Duration
	q       eventQueue
	seq     uint64
	nodes   []*simNode
	clients []*simClient
	// partUntil[client][node]: the link is cut until then (true time).
	partUntil [][]time.Duration
	// linkLat[client][node]: the base one-way delay of that link.
	linkLat [][]time.Duration
	chk     *checker
	trace   io.Writer
	stats   simStats

	stopping bool // no new acquires, no new faults
	healed   bool // the faults have ended
	events   int
	bufs     [][]byte // free message buffers
	inFlight int      // network events queued
	// callerTokens: tokens whose keys may stay until their ttl: a failed
	// acquire with a caller's token deletes nothing, and a forgotten
	// lock's token may have been re-entered by another client.
	callerTokens map[string]bool
	// shared: tokens handed on (re-entered) while held.
	shared map[string]bool
	// termValues: the value each reported term came with (elections).
	termValues map[string]string // by election name + "/" + term
}

type simStats struct {
	ops, acquires, acquired, extends, extended, releases, released, cancels, forgets  int
	lost, failedUnavailable, failedNotAcquired                                        int
	faults, freezes, crashes, partitions, resets, pauses                              int
	conns, leftoverLate, leftoverTrouble, leftoverForgotten                           int
	fenced, tokenAcquires, reentered, inspects, inspected, inspectHeld, leftoverToken int
	leftoverNoscript                                                                  int
	rw                                                                                rwStats

	// multi-resource acquires (and fenced ones) and successes
	multiAcquires, multiAcquired, multiFenced int
	// campaigns, and those that led
	campaigns, leaders                    int
	watches, leaderReports, leaderChecked int
}

func (st *simStats) add(o simStats) {
	st.ops += o.ops
	st.rw.add(o.rw)
	st.acquires += o.acquires
	st.acquired += o.acquired
	st.extends += o.extends
	st.extended += o.extended
	st.releases += o.releases
	st.released += o.released
	st.cancels += o.cancels
	st.forgets += o.forgets
	st.lost += o.lost
	st.failedUnavailable += o.failedUnavailable
	st.failedNotAcquired += o.failedNotAcquired
	st.faults += o.faults
	st.freezes += o.freezes
	st.crashes += o.crashes
	st.partitions += o.partitions
	st.resets += o.resets
	st.pauses += o.pauses
	st.conns += o.conns
	st.leftoverLate += o.leftoverLate
	st.leftoverTrouble += o.leftoverTrouble
	st.leftoverForgotten += o.leftoverForgotten
	st.fenced += o.fenced
	st.multiAcquires += o.multiAcquires
	st.multiAcquired += o.multiAcquired
	st.multiFenced += o.multiFenced
	st.campaigns += o.campaigns
	st.leaders += o.leaders
	st.watches += o.watches
	st.leaderReports += o.leaderReports
	st.leaderChecked += o.leaderChecked
	st.tokenAcquires += o.tokenAcquires
	st.reentered += o.reentered
	st.inspects += o.inspects
	st.inspected += o.inspected
	st.inspectHeld += o.inspectHeld
	st.leftoverToken += o.leftoverToken
	st.leftoverNoscript += o.leftoverNoscript
}

// at schedules fn at true time t (not before now).
func (s *sim) at(t time.Duration, fn func()) { s.push(simEvent{at: t, fn: fn}) }

func (s *sim) push(ev simEvent) {
	ev.at = max(ev.at, s.now)
	if ev.kind != evFunc && ev.kind != evTimer {
		s.inFlight++
	}
	s.seq++
	ev.seq = s.seq
	s.q.push(ev)
}

// dispatch runs one event.
func (s *sim) dispatch(ev *simEvent) {
	if ev.kind != evFunc && ev.kind != evTimer {
		s.inFlight--
	}
	switch ev.kind {
	case evFunc:
		ev.fn()
	case evSyn:
		s.syn(ev.conn)
	case evToNode:
		ev.conn.node.arrive(ev.conn, ev.data)
	case evOpened:
		ev.conn.client.opened(ev.conn)
	case evToClient:
		ev.conn.client.received(ev.conn, ev.data, ev.n)
	case evRefused:
		ev.conn.client.connFailed(ev.conn, "connection refused")
	case evReset:
		ev.conn.client.connFailed(ev.conn, "connection reset by peer")
	case evTimer:
		ev.cl.timer(ev.gen)
	}
}

// getBuf returns an empty buffer, recycled when one is free: messages are
// copied once (an engine write) or built once (a node's replies) and
// returned when consumed.
func (s *sim) getBuf() []byte {
	if k := len(s.bufs); k > 0 {
		b := s.bufs[k-1]
		s.bufs = s.bufs[:k-1]
		return b[:0]
	}
	return make([]byte, 0, 256)
}

func (s *sim) putBuf(b []byte) {
	if cap(b) > 0 && cap(b) <= 4096 && len(s.bufs) < 1024 {
		s.bufs = append(s.bufs, b)
	}
}

func (s *sim) after(d time.Duration, fn func()) { s.at(s.now+d, fn) }

func (s *sim) tracef(format string, args ...any) {
	if s.trace != nil {
		fmt.Fprintf(s.trace, "%12.6fms ", float64(s.now)/1e6)
		fmt.Fprintf(s.trace, format, args...)
		fmt.Fprintln(s.trace)
	}
}

func (s *sim) violate(kind, format string, args ...any) {
	s.chk.violate(kind, fmt.Sprintf("t=%v: ", s.now)+fmt.Sprintf(format, args...))
	s.tracef("VIOLATION %s: "+format, append([]any{kind}, args...)...)
}

// dur returns a random duration in [lo, hi].
func (s *sim) dur(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)+1))
}

func (s *sim) chance(p float64) bool { return s.rng.Float64() < p }

// simConn is one connection, both ends: the client's engine knows it by
// id, the node by pointer.
type simConn struct {
	id     ConnID
	client *simClient
	node   *simNode
	lat    time.Duration // this connection's base one-way delay
	// FIFO: the arrival time of the last thing sent each way.
	lastUp, lastDown time.Duration

	// client side
	opened       bool // Opened was delivered to the engine
	clientClosed bool // the engine closed it (ActClose)
	failed       bool // ConnFailed was delivered
	written      int  // commands the engine wrote on it
	replied      int  // replies delivered to the engine

	// node side
	atNode bool // the node holds it open
	reset  bool // the node reset it (crash, reset fault)
	inbuf  []byte
	authed bool
	db     int
	name   string
	chans  map[string]bool // pub/sub channels it subscribed to
	// relToks: the tokens of the last releases run on it (a ring), to
	// tell a key set after its own release (simredis_test.go).
	relToks [4]string
	relNext uint8
}

func (c *simConn) outstanding() int { return c.written - c.replied }

// delay is one message's trip on c.
func (s *sim) delay(c *simConn) time.Duration {
	d := c.lat + time.Duration(s.rng.Int64N(int64(c.lat)/2+1))
	if s.cfg.spikeP > 0 && s.chance(s.cfg.spikeP) {
		d += s.dur(0, s.cfg.spikeMax)
	}
	return d
}

// upAt is when something the client sends now on c reaches the node: after
// what it sent before, and after a partition heals (TCP retransmits).
func (s *sim) upAt(c *simConn) time.Duration {
	t := s.now + s.delay(c)
	if p := s.partUntil[c.client.id][c.node.idx]; p > s.now {
		t = max(t, p+c.lat)
	}
	t = max(t, c.lastUp)
	c.lastUp = t
	return t
}

func (s *sim) downAt(c *simConn) time.Duration {
	t := s.now + s.delay(c)
	if p := s.partUntil[c.client.id][c.node.idx]; p > s.now {
		t = max(t, p+c.lat)
	}
	t = max(t, c.lastDown)
	c.lastDown = t
	return t
}

// dial starts connection c: the SYN reaches the node, which refuses it when
// down and accepts it otherwise (frozen included).
func (s *sim) dial(c *simConn) {
	s.stats.conns++
	s.push(simEvent{at: s.upAt(c), kind: evSyn, conn: c})
}

func (s *sim) syn(c *simConn) {
	if c.clientClosed {
		return // abandoned before it was accepted
	}
	if !c.node.up {
		s.push(simEvent{at: s.downAt(c), kind: evRefused, conn: c})
		return
	}
	c.node.accept(c)
	s.push(simEvent{at: s.downAt(c), kind: evOpened, conn: c})
}

// toNode sends an engine write, sometimes split in pieces.
func (s *sim) toNode(c *simConn, data []byte) {
	if len(data) < 2 || !s.chance(s.cfg.splitP) {
		s.push(simEvent{at: s.upAt(c), kind: evToNode, conn: c, data: data})
		return
	}
	for _, p := range s.split(data) {
		s.push(simEvent{at: s.upAt(c), kind: evToNode, conn: c, data: p})
	}
	s.putBuf(data)
}

// fin sends the client's close to the node, after what it sent before.
func (s *sim) fin(c *simConn) {
	s.push(simEvent{at: s.upAt(c), kind: evToNode, conn: c})
}

// toClient sends replies back; replies counts the whole replies in data.
func (s *sim) toClient(c *simConn, data []byte, replies int) {
	if len(data) < 2 || !s.chance(s.cfg.splitP) {
		s.push(simEvent{at: s.downAt(c), kind: evToClient, conn: c, data: data, n: replies})
		return
	}
	parts := s.split(data)
	for i, p := range parts {
		r := 0
		if i == len(parts)-1 {
			r = replies
		}
		s.push(simEvent{at: s.downAt(c), kind: evToClient, conn: c, data: p, n: r})
	}
	s.putBuf(data)
}

// resetToClient delivers a reset after what was already sent to the client.
func (s *sim) resetToClient(c *simConn) {
	s.push(simEvent{at: s.downAt(c), kind: evReset, conn: c})
}

// split cuts a message into pieces (copies: the pieces are recycled one by
// one), to exercise the readers.
func (s *sim) split(b []byte) [][]byte {
	var parts [][]byte
	for len(b) > 1 && len(parts) < 3 {
		k := 1 + s.rng.IntN(len(b)-1)
		parts = append(parts, append(s.getBuf(), b[:k]...))
		b = b[k:]
	}
	return append(parts, append(s.getBuf(), b...))
}
