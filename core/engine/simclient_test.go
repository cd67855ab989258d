package engine

// The simulation's clients: each runs one Engine with its own drifting
// clock and its own random source, carries out the engine's actions over
// the simulated network, and runs a random workload on a few resources.
// A client can pause (a GC-like stall): it gets no events while its clock
// runs on, then handles everything that piled up.

import (
	"errors"
	mrand "math/rand/v2"
	"time"
)

type simEnv struct{ c *simClient }

func (e simEnv) Now() time.Duration { return e.c.clock.at(e.c.s.now) }

func (e simEnv) Random(p []byte) {
	r := e.c.rand
	for i := 0; i < len(p); i += 8 {
		v := r.Uint64()
		for j := i; j < len(p) && j < i+8; j++ {
			p[j] = byte(v)
			v >>= 8
		}
	}
}

type opKind uint8

const (
	opAcquire opKind = iota + 1
	opExtend
	opRelease
	opInspect
)

func (k opKind) String() string {
	return [...]string{"?", "acquire", "extend", "release", "inspect"}[k]
}

// simOp is one operation in flight.
type simOp struct {
	id     OpID
	kind   opKind
	task   *simTask
	lock   LockID
	startC time.Duration // client clock when requested
	pauseC time.Duration // the client's paused time then
	bound  time.Duration // it must end within this (client clock, pauses excluded)
	// An acquire's token (a caller's, or "") and whether it asked for a
	// fence; an inspection's key, start (true time) and the locks valid
	// then.
	token  string
	fence  bool
	key    string
	startT time.Duration
	snaps  []inspSnap
	mode   LockMode // an acquire's (sim_rwlock_test.go)
}

type simClient struct {
	s      *sim
	id     int
	eng    *Engine
	clock  simClock
	rand   *mrand.Rand
	cfg    Config
	conns  map[ConnID]*simConn
	ops    map[OpID]*simOp
	held   map[LockID]*heldLock
	heldL  []*heldLock // held, in acquisition order (deterministic iteration)
	tasks  []*simTask
	nodeTO time.Duration

	paused       bool
	pauseStart   time.Duration // client clock
	pausedC      time.Duration // total client-clock time paused
	deferred     []func()
	timerGen     uint64
	closing      bool
	closeC       time.Duration
	closePausedC time.Duration
	closed       bool
	trouble      []time.Duration    // per node: last time an exchange failed (true time)
	forgotten    map[string]bool    // tokens of forgotten locks
	watches      map[OpID]*simWatch // elections watched (sim_election_test.go)
	reports      *reportCheck       // Config.Report's checker (sim_report_test.go)
}

// deliver runs an event of this client now, or after its pause.
func (c *simClient) deliver(fn func()) {
	if c.paused {
		c.deferred = append(c.deferred, fn)
		return
	}
	fn()
}

func (c *simClient) pause(d time.Duration) {
	if c.paused || c.closed {
		return
	}
	c.s.stats.pauses++
	c.paused = true
	c.pauseStart = c.clock.at(c.s.now)
	c.s.tracef("c%d pauses for %v", c.id, d)
	c.s.after(d, c.resume)
}

func (c *simClient) resume() {
	if !c.paused {
		return
	}
	c.paused = false
	c.pausedC += c.clock.at(c.s.now) - c.pauseStart
	c.s.tracef("c%d resumes with %d events", c.id, len(c.deferred))
	d := c.deferred
	c.deferred = nil
	for i, fn := range d {
		if c.paused { // cannot happen (pauses are scheduled events), but keep order if it did
			c.deferred = append(c.deferred, d[i:]...)
			return
		}
		fn()
	}
}

// drain carries out the engine's actions after an input.
func (c *simClient) drain() {
	for {
		a, ok := c.eng.Next()
		if !ok {
			break
		}
		if c.closed {
			c.s.violate("protocol", "c%d: action %d after ActClosed", c.id, a.Kind)
		}
		switch a.Kind {
		case ActOpen:
			c.actOpen(a)
		case ActWrite:
			c.actWrite(a)
		case ActClose:
			c.actClose(a.Conn)
		case ActDone:
			c.checkDoneReport(a)
			c.actDone(a)
		case ActLost:
			c.checkLostReport(a)
			c.actLost(a)
		case ActReport:
			c.actReport(a)
		case ActTimer:
			c.actTimer(a.Delay)
		case ActClosed:
			c.actClosed()
		case ActLeader:
			c.actLeader(a) // sim_election_test.go
		default:
			c.s.violate("protocol", "c%d: unknown action %d", c.id, a.Kind)
		}
	}
	c.syncHeld()
}

func (c *simClient) actOpen(a Action) {
	if a.Node < 0 || a.Node >= len(c.s.nodes) || a.Dial == nil || a.Dial.Addr != c.s.nodes[a.Node].spec.Addr {
		c.s.violate("protocol", "c%d: bad ActOpen %+v", c.id, a)
		return
	}
	if c.conns[a.Conn] != nil || a.Conn == 0 {
		c.s.violate("protocol", "c%d: ActOpen reuses conn %d", c.id, a.Conn)
		return
	}
	n := c.s.nodes[a.Node]
	conn := &simConn{id: a.Conn, client: c, node: n, lat: c.s.linkLat[c.id][n.idx]}
	conn.lat += time.Duration(c.s.rng.Int64N(int64(conn.lat)/4 + 1))
	c.conns[a.Conn] = conn
	c.s.tracef("c%d open conn %d to n%d", c.id, a.Conn, a.Node)
	c.s.dial(conn)
}

func (c *simClient) actWrite(a Action) {
	conn := c.conns[a.Conn]
	if conn == nil || conn.clientClosed {
		c.s.violate("protocol", "c%d: write on unknown or closed conn %d", c.id, a.Conn)
		return
	}
	if !conn.opened {
		c.s.violate("protocol", "c%d: write on conn %d before it opened", c.id, a.Conn)
	}
	n, rest := countCommands(a.Data)
	if rest != 0 {
		c.s.violate("protocol", "c%d: write on conn %d ends inside a command: %q", c.id, a.Conn, a.Data)
	}
	conn.written += n
	data := append(c.s.getBuf(), a.Data...) // valid only until the next input
	if c.s.trace != nil {
		c.s.tracef("c%d write conn %d (n%d): %q", c.id, a.Conn, conn.node.idx, traceCmd(data))
	}
	c.s.toNode(conn, data)
}

func (c *simClient) actClose(id ConnID) {
	conn := c.conns[id]
	if conn == nil {
		c.s.violate("protocol", "c%d: close of unknown conn %d", c.id, id)
		return
	}
	if conn.clientClosed {
		// The engine once closed again a connection that had timed out in
		// the same input (TestSimBugDoubleClose).
		c.s.violate("protocol", "c%d: ActClose for conn %d, already closed", c.id, id)
		return
	}
	conn.clientClosed = true
	if !conn.failed && (!conn.opened || conn.outstanding() > 0) {
		// The engine gave up on this connection with something in flight:
		// what it asked there may or may not have run.
		c.trouble[conn.node.idx] = c.s.now
	}
	c.s.tracef("c%d close conn %d (outstanding %d)", c.id, id, conn.outstanding())
	if !conn.failed {
		c.s.fin(conn)
	}
}

func (c *simClient) actTimer(d time.Duration) {
	if d < 0 {
		c.s.violate("protocol", "c%d: negative timer %v", c.id, d)
		d = 0
	}
	c.timerGen++
	now := c.clock.at(c.s.now)
	c.s.push(simEvent{at: c.clock.trueAt(now + d), kind: evTimer, cl: c, gen: c.timerGen})
}

// timer: the host's one timer fired.
func (c *simClient) timer(gen uint64) {
	if c.paused {
		c.deferred = append(c.deferred, func() { c.timer(gen) })
		return
	}
	if gen != c.timerGen || c.closed {
		return
	}
	c.eng.Tick()
	c.drain()
}

func (c *simClient) actClosed() {
	if !c.closing {
		c.s.violate("protocol", "c%d: ActClosed without Close", c.id)
	}
	if c.closed {
		c.s.violate("protocol", "c%d: ActClosed twice", c.id)
	}
	c.closed = true
	c.s.tracef("c%d closed", c.id)
	if d := c.clock.at(c.s.now) - c.closeC - (c.pausedC - c.closePausedC); d > 8*c.nodeTO+time.Millisecond {
		c.s.violate("hang", "c%d: Close took %v (node timeout %v)", c.id, d, c.nodeTO)
	}
	if len(c.ops) > 0 {
		c.s.violate("hang", "c%d: closed with %d operations never completed", c.id, len(c.ops))
	}
	for id, conn := range c.conns {
		if !conn.clientClosed {
			c.s.violate("protocol", "c%d: closed with conn %d still open", c.id, id)
		}
	}
}

// opened: the node accepted the connection.
func (c *simClient) opened(conn *simConn) {
	if c.paused {
		c.deferred = append(c.deferred, func() { c.opened(conn) })
		return
	}
	if conn.clientClosed || c.closed {
		return
	}
	conn.opened = true
	c.eng.Opened(conn.id)
	c.drain()
}

func (c *simClient) received(conn *simConn, data []byte, replies int) {
	if c.paused {
		c.deferred = append(c.deferred, func() { c.received(conn, data, replies) })
		return
	}
	if conn.clientClosed || c.closed {
		c.s.putBuf(data)
		return
	}
	conn.replied += replies
	c.eng.Received(conn.id, data)
	c.s.putBuf(data) // the engine keeps a copy of what it needs
	c.drain()
}

func (c *simClient) connFailed(conn *simConn, why string) {
	c.deliver(func() {
		if conn.clientClosed || c.closed || conn.failed {
			return
		}
		conn.failed = true
		if !conn.opened || conn.outstanding() > 0 {
			c.trouble[conn.node.idx] = c.s.now
		}
		c.s.tracef("c%d conn %d failed: %s", c.id, conn.id, why)
		c.eng.ConnFailed(conn.id, errors.New(why))
		c.drain()
	})
}

// begin records an operation the engine accepted.
func (c *simClient) begin(id OpID, kind opKind, t *simTask, lock LockID, bound time.Duration) *simOp {
	if c.ops[id] != nil {
		c.s.violate("protocol", "c%d: op id %d reused", c.id, id)
	}
	op := &simOp{id: id, kind: kind, task: t, lock: lock, startC: c.clock.at(c.s.now), pauseC: c.pausedC, bound: bound}
	c.ops[id] = op
	c.s.stats.ops++
	c.s.chk.ops++
	if c.s.stats.ops >= c.s.cfg.ops && !c.s.stopping {
		c.s.stop()
	}
	return op
}

func (c *simClient) actDone(a Action) {
	if c.watchDone(a) { // sim_election_test.go
		return
	}
	op := c.ops[a.Op]
	if op == nil {
		c.s.violate("twice", "c%d: ActDone for op %d, which is unknown or already done", c.id, a.Op)
		return
	}
	delete(c.ops, a.Op)
	took := c.clock.at(c.s.now) - op.startC - (c.pausedC - op.pauseC)
	if took > op.bound {
		c.s.violate("hang", "c%d: %v op %d took %v, bound %v", c.id, op.kind, op.id, took, op.bound)
	}
	c.s.tracef("c%d done op %d (%v) lock %d err %v", c.id, a.Op, op.kind, a.Lock, a.Err)
	switch op.kind {
	case opAcquire:
		c.rwAcquireDone(op, a)
		if a.Err != nil && op.token != "" {
			// A failed attempt with a caller's token deletes nothing.
			c.s.callerTokens[op.token] = true
		}
		switch {
		case a.Err == nil:
			c.s.stats.acquired++
			c.acquired(a.Lock, op)
		case a.Lock != 0:
			c.s.violate("protocol", "c%d: failed acquire names lock %d", c.id, a.Lock)
		case errors.Is(a.Err, ErrUnavailable):
			c.s.stats.failedUnavailable++
		case errors.Is(a.Err, ErrNotAcquired):
			c.s.stats.failedNotAcquired++
		case errors.Is(a.Err, ErrCanceled), errors.Is(a.Err, ErrClosed):
		default:
			c.s.violate("protocol", "c%d: acquire failed with an unexpected error: %v", c.id, a.Err)
		}
	case opExtend:
		if a.Err == nil {
			c.s.stats.extended++
		}
	case opRelease:
		if h := c.held[op.lock]; h != nil && a.Err == nil {
			h.releaseDone = true
		}
		if a.Err == nil {
			c.s.stats.released++
		}
	case opInspect:
		c.s.stats.inspected++
		if a.Err == nil && a.Inspection != nil && a.Inspection.Held {
			c.s.stats.inspectHeld++
		}
		if a.Lock != 0 {
			c.s.violate("protocol", "c%d: an inspection names lock %d", c.id, a.Lock)
		}
		if isSemKey(op.key) {
			c.s.chk.checkSemInspection(op.key, op.startT, c.s.now, a.Inspection, a.Err, len(c.s.nodes), op.snaps)
		} else {
			c.s.chk.checkInspection(op.key, op.startT, c.s.now, a.Inspection, a.Err, len(c.s.nodes), op.snaps)
		}
	}
	if op.task != nil {
		op.task.done(op, a)
	}
}

func (c *simClient) acquired(id LockID, op *simOp) {
	l := c.eng.locks[id]
	if l == nil || id == 0 {
		c.s.violate("protocol", "c%d: acquire succeeded with unknown lock %d", c.id, id)
		return
	}
	if c.held[id] != nil {
		c.s.violate("protocol", "c%d: lock id %d reused", c.id, id)
		return
	}
	h := &heldLock{c: c, id: id, key: l.key, token: l.token, validC: l.validUntil, fenced: op.fence, fence: l.fence, keys: l.keys,
		slot: l.slot, opStart: c.clock.trueAt(op.startC), mode: l.mode}
	start := c.s.now
	end := c.clock.trueAt(l.validUntil)
	if end <= start {
		c.s.violate("validity", "c%d: lock %d acquired with no validity left", c.id, id)
	}
	switch {
	case op.fence && l.fence < 1:
		c.s.violate("fence", "c%d: fenced lock %d acquired with fence %d", c.id, id, l.fence)
	case !op.fence && l.fence != 0:
		c.s.violate("fence", "c%d: lock %d acquired without Fence has fence %d", c.id, id, l.fence)
	case op.token != "" && l.token != op.token, op.token == "" && l.reentered:
		c.s.violate("protocol", "c%d: lock %d: token %q (asked %q), re-entered %v", c.id, id, l.token, op.token, l.reentered)
	}
	if op.fence {
		c.s.stats.fenced++
	}
	if l.keys != nil {
		c.s.stats.multiAcquired++
	}
	if l.elect {
		c.s.stats.leaders++
	}
	if l.reentered {
		c.s.stats.reentered++
	}
	h.segs = append(h.segs, segment{start: start, end: end})
	c.held[id] = h
	c.heldL = append(c.heldL, h)
	c.s.chk.add(h)
	if c.s.chk.retired[l.token] {
		// Another holder of the token released it while this acquire was
		// in flight: the release may delete what it set; it holds nothing.
		c.endHeld(id)
		h.segs[0].end = start
	}
}

// syncHeld follows the validity of the locks the client holds: an
// extension (the user's or automatic) moves it.
func (c *simClient) syncHeld() {
	keep := c.heldL[:0]
	for _, h := range c.heldL {
		l := c.eng.locks[h.id]
		if l == nil && !h.ended {
			c.s.violate("protocol", "c%d: lock %d (%s) vanished from the engine without a release", c.id, h.id, h.key)
			c.endHeld(h.id)
		}
		if h.ended || l == nil {
			continue
		}
		keep = append(keep, h)
		if l.validUntil == h.validC || l.lostErr != nil || l.released {
			continue
		}
		h.validC = l.validUntil
		seg := &h.segs[len(h.segs)-1]
		end := c.clock.trueAt(l.validUntil)
		if c.s.now >= seg.end {
			c.s.violate("validity", "c%d: lock %d (%s) renewed at %v after its validity had ended at %v", c.id, h.id, h.key, c.s.now, seg.end)
			h.segs = append(h.segs, segment{start: c.s.now, end: end})
			continue
		}
		seg.end = end
	}
	for i := len(keep); i < len(c.heldL); i++ {
		c.heldL[i] = nil
	}
	c.heldL = keep
}

// endHeld ends a lock's interval now: released, forgotten or lost.
func (c *simClient) endHeld(id LockID) {
	h := c.held[id]
	if h == nil || h.ended {
		return
	}
	h.ended = true
	seg := &h.segs[len(h.segs)-1]
	seg.end = min(seg.end, c.s.now)
	seg.end = max(seg.end, seg.start)
}

func (c *simClient) actLost(a Action) {
	h := c.held[a.Lock]
	if h == nil {
		c.s.violate("protocol", "c%d: ActLost for unknown lock %d", c.id, a.Lock)
		return
	}
	if h.releaseDone {
		c.s.violate("protocol", "c%d: ActLost for lock %d after its release", c.id, a.Lock)
	}
	if h.lost {
		c.s.violate("twice", "c%d: ActLost twice for lock %d", c.id, a.Lock)
	}
	h.lost = true
	c.s.stats.lost++
	c.s.tracef("c%d lost lock %d: %v", c.id, a.Lock, a.Err)
	c.endHeld(a.Lock)
}

// close asks the engine to close.
func (c *simClient) close() {
	c.deliver(func() {
		if c.closing {
			return
		}
		c.closing = true
		c.closeC = c.clock.at(c.s.now)
		c.closePausedC = c.pausedC
		c.s.tracef("c%d Close", c.id)
		for _, h := range c.heldL {
			if !h.ended {
				// Close releases every lock: the user gave them up, and
				// with them every other holder of their tokens.
				c.s.chk.retire(h.token)
			}
		}
		c.eng.Close()
		c.drain()
	})
}

// ---- workload ----

// simTask is one user of a client: it acquires, holds, maybe extends, and
// releases, again and again.
type simTask struct {
	c        *simClient
	id       int
	lock     LockID
	acq      *simOp
	holdEnd  bool // the hold ended: release when the lock is ours
	retries  int
	stopping bool
}

func (t *simTask) s() *sim { return t.c.s }

func (t *simTask) think() {
	s := t.s()
	if s.stopping || t.c.closing {
		return
	}
	s.after(s.dur(0, s.cfg.thinkMax), func() { t.c.deliver(t.acquire) })
}

func (t *simTask) acquire() {
	c, s := t.c, t.s()
	if s.stopping || c.closing {
		return
	}
	cfg := &s.cfg
	// (The new features draw only when enabled, so that the profiles
	// without them replay as before.)
	if cfg.inspectP > 0 && s.chance(cfg.inspectP) {
		t.inspect()
		return
	}
	req := AcquireRequest{
		Resource:   cfg.resources[s.rng.IntN(len(cfg.resources))],
		TTL:        s.dur(cfg.minTTL, cfg.maxTTL),
		AutoExtend: s.chance(cfg.autoExtendP),
	}
	if cfg.semP > 0 && s.chance(cfg.semP) {
		req.Permits = cfg.permits
	}
	if s.chance(cfg.waitP) {
		req.Wait = s.dur(0, cfg.maxWait)
	}
	switch {
	case t.rwMode(&req):
	case cfg.fenceP > 0 && s.chance(cfg.fenceP):
		req.Fence = true
	case cfg.tokenP > 0 && s.chance(cfg.tokenP):
		if h := t.shareable(simLockKey(c.cfg.KeyPrefix+req.Resource, req.Permits)); h != nil && s.chance(cfg.shareP) {
			// Re-enter a held lock (this client's or another's: a
			// hand-over) with its token. Its holders stop extending,
			// unless the profile lets them (see simbugs_test.go).
			req.Token = h.token
			s.shared[h.token] = true
			if !cfg.sharedExtend {
				req.AutoExtend = false
			}
		} else {
			req.Token = s.callerToken(c)
		}
		s.stats.tokenAcquires++
	}
	if cfg.multiP > 0 && req.Token == "" && s.chance(cfg.multiP) {
		t.multi(&req) // sim_multi_test.go
	}
	if cfg.electP > 0 && s.chance(cfg.electP) {
		t.campaign(&req) // sim_election_test.go
		t.maybeWatch(req.Resource)
	}
	id, err := c.eng.Acquire(req)
	if err != nil {
		c.s.violate("protocol", "c%d: Acquire refused: %v", c.id, err)
		return
	}
	s.stats.acquires++
	bound := req.Wait + 2*c.nodeTO + time.Millisecond
	if req.Fence {
		bound += c.nodeTO // the second round, which writes the fence
	}
	op := c.begin(id, opAcquire, t, 0, bound)
	op.token, op.fence, op.mode = req.Token, req.Fence, req.Mode
	t.acq = op
	s.tracef("c%d t%d Acquire %s ttl %v wait %v auto %v fence %v token %q -> op %d", c.id, t.id, req.Resource, req.TTL, req.Wait, req.AutoExtend, req.Fence, req.Token, id)
	c.drain()
	if req.Wait > 0 && s.chance(cfg.cancelP) {
		s.after(s.dur(0, req.Wait), func() {
			c.deliver(func() {
				if t.acq != op || c.closed {
					return
				}
				if c.eng.Cancel(id) {
					s.stats.cancels++
					s.tracef("c%d t%d Cancel op %d", c.id, t.id, id)
				}
				c.drain()
			})
		})
	}
}

// shareable picks a lock on key that some client holds and whose token
// may be handed on: valid, not retired, and (unless the profile lets the
// holders of a token extend) not extending now or automatically.
func (t *simTask) shareable(key string) *heldLock {
	s := t.s()
	var cands []*heldLock
	for _, c := range s.clients {
		if c.closing || c.closed {
			continue
		}
		for _, h := range c.heldL {
			l := c.eng.locks[h.id]
			if h.ended || h.key != key || h.keys != nil || s.chk.retired[h.token] || l == nil || l.released || l.lostErr != nil {
				continue
			}
			if !s.cfg.sharedExtend && (l.autoExtend || l.cur != nil || len(l.queue) > 0) {
				continue
			}
			if h.segs[len(h.segs)-1].end <= s.now {
				continue
			}
			cands = append(cands, h)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[s.rng.IntN(len(cands))]
}

// callerToken is a new token of the caller's making, with the client's
// owner label: "cN/" and a UUID's text.
func (s *sim) callerToken(c *simClient) string {
	const hex = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i := range 16 {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		v := byte(s.rng.Uint32())
		b[j], b[j+1] = hex[v>>4], hex[v&0xf]
		j += 2
	}
	return c.cfg.Owner + "/" + string(b[:])
}

// inspect runs one Inspect of a random resource, noting the locks valid as
// it starts.
func (t *simTask) inspect() {
	c, s := t.c, t.s()
	res := s.cfg.resources[s.rng.IntN(len(s.cfg.resources))]
	if s.cfg.semInspectP > 0 && s.chance(s.cfg.semInspectP) {
		t.inspectSem(res)
		return
	}
	key := c.cfg.KeyPrefix + res
	var snaps []inspSnap
	for _, oc := range s.clients {
		for _, h := range oc.heldL {
			if !h.ended && h.key == key {
				if seg := h.segs[len(h.segs)-1]; seg.start <= s.now && seg.end > s.now {
					snaps = append(snaps, inspSnap{h: h, seg: len(h.segs) - 1, end: seg.end})
				}
			}
		}
	}
	id, err := c.eng.Inspect(res)
	if err != nil {
		c.s.violate("protocol", "c%d: Inspect refused: %v", c.id, err)
		return
	}
	s.stats.inspects++
	op := c.begin(id, opInspect, t, 0, 2*c.nodeTO+time.Millisecond)
	op.key, op.startT, op.snaps = key, s.now, snaps
	t.acq = op
	s.tracef("c%d t%d Inspect %s -> op %d", c.id, t.id, res, id)
	c.drain()
}

func (t *simTask) done(op *simOp, a Action) {
	s, c := t.s(), t.c
	switch op.kind {
	case opInspect:
		t.acq = nil
		t.think()
	case opAcquire:
		t.acq = nil
		if a.Err != nil {
			t.think()
			return
		}
		t.lock = a.Lock
		t.holdEnd = false
		t.retries = 0
		l := c.eng.locks[a.Lock]
		hold := s.dur(time.Duration(float64(l.ttl)*s.cfg.holdMin), l.ttl)
		if s.chance(s.cfg.overholdP) {
			hold = s.dur(l.ttl, 2*l.ttl)
		}
		if s.chance(s.cfg.extendP) {
			s.after(s.dur(0, hold), func() { c.deliver(t.extend) })
		}
		s.after(hold, func() { c.deliver(t.release) })
	case opRelease:
		if a.Err != nil && errors.Is(a.Err, ErrUnavailable) && t.retries < 3 && !c.closed {
			// "call Release again"
			t.retries++
			s.after(s.dur(0, c.nodeTO), func() { c.deliver(t.releaseAgain) })
			return
		}
		t.lock = 0
		t.think()
	}
}

func (t *simTask) extend() {
	c, s := t.c, t.s()
	if t.lock == 0 || t.holdEnd || c.closed || c.closing && !s.cfg.opsWhileClosing {
		return
	}
	// An extension to a shorter ttl shortens the keys at once; the engine
	// once kept counting on the old validity (simregress_test.go). Seeds
	// with shrinkExtend ask for any ttl, the others for at least the
	// lock's.
	lo := s.cfg.minTTL
	l := c.eng.locks[t.lock]
	if l != nil && !s.cfg.shrinkExtend {
		lo = l.ttl
	}
	if l != nil && s.shared[l.token] && !s.cfg.sharedExtend {
		return // the holders of a handed-over token do not extend
	}
	ttl := s.dur(lo, max(lo, s.cfg.maxTTL))
	id, err := c.eng.Extend(t.lock, ttl)
	if err != nil {
		if !errors.Is(err, ErrUnknownLock) {
			c.s.violate("protocol", "c%d: Extend refused: %v", c.id, err)
		}
		return
	}
	s.stats.extends++
	c.begin(id, opExtend, t, t.lock, 4*c.nodeTO+time.Millisecond)
	s.tracef("c%d t%d Extend lock %d ttl %v -> op %d", c.id, t.id, t.lock, ttl, id)
	c.drain()
}

func (t *simTask) release() {
	c, s := t.c, t.s()
	if t.lock == 0 || c.closed || c.closing && !s.cfg.opsWhileClosing {
		// Close releases what the client holds. (A user's Release while
		// the client closes makes the engine emit a timer after ActClosed:
		// see simbugs_test.go.)
		return
	}
	t.holdEnd = true
	c.endHeld(t.lock)
	if s.chance(s.cfg.forgetP) {
		if l := c.eng.locks[t.lock]; l != nil {
			s.callerTokens[l.token] = true // its keys may outlive the run's end
		}
		if l := c.eng.locks[t.lock]; l != nil {
			c.forgotten[l.token] = true
		}
		s.stats.forgets++
		s.tracef("c%d t%d Forget lock %d", c.id, t.id, t.lock)
		c.eng.Forget(t.lock)
		c.drain()
		t.lock = 0
		t.think()
		return
	}
	if l := c.eng.locks[t.lock]; l != nil {
		s.chk.retire(l.token)
	}
	t.releaseAgain()
}

func (t *simTask) releaseAgain() {
	c, s := t.c, t.s()
	if t.lock == 0 || c.closed || c.closing && !s.cfg.opsWhileClosing {
		return
	}
	id, err := c.eng.Release(t.lock)
	if err != nil {
		if !errors.Is(err, ErrUnknownLock) {
			c.s.violate("protocol", "c%d: Release refused: %v", c.id, err)
		}
		t.lock = 0
		t.think()
		return
	}
	s.stats.releases++
	c.begin(id, opRelease, t, t.lock, 6*c.nodeTO+time.Millisecond)
	s.tracef("c%d t%d Release lock %d -> op %d", c.id, t.id, t.lock, id)
	c.drain()
}

// traceCmd shortens a write for the trace: scripts by name.
func traceCmd(b []byte) string {
	var out []byte
	for len(b) > 0 {
		args, k, ok := parseCommand(b, nil)
		if !ok || k == 0 {
			return string(out) + string(b)
		}
		for i, ab := range args {
			a := string(ab)
			switch a {
			case releaseSrc:
				a = "<release.lua>"
			case extendSrc:
				a = "<extend.lua>"
			case acquireTokenSrc:
				a = "<acquire_token.lua>"
			case acquireFenceSrc:
				a = "<acquire_fence.lua>"
			case fenceSrc:
				a = "<fence.lua>"
			case inspectSrc:
				a = "<inspect.lua>"
			}
			if i > 0 {
				out = append(out, ' ')
			}
			out = append(out, a...)
		}
		out = append(out, "; "...)
		b = b[k:]
	}
	return string(out)
}
