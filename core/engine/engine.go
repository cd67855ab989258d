package engine

import (
	mrand "math/rand/v2"
	"strconv"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// ConnID names one connection the engine asked its host to open.
type ConnID uint32

// OpID names one operation (acquire, extend, release) requested of an
// Engine; its outcome comes back as one ActDone action.
type OpID uint64

// LockID names one lock an Engine holds or held.
type LockID uint64

// ActionKind says what an Action asks of the host, or reports to it.
type ActionKind uint8

// The actions an Engine emits. Hosts must handle each.
const (
	// ActOpen: open connection Conn to node Node as Dial says, then call
	// Opened (or ConnFailed).
	ActOpen ActionKind = 1
	// ActWrite: write Data to connection Conn, in order.
	ActWrite ActionKind = 2
	// ActClose: close connection Conn (or abandon its opening); the engine
	// has forgotten it and expects no more events about it.
	ActClose ActionKind = 3
	// ActDone: operation Op ended: Err nil on success (Lock names the new
	// lock of a successful acquire), else why it failed.
	ActDone ActionKind = 4
	// ActLost: lock Lock is no longer held (Err says why). Never after the
	// lock was released.
	ActLost ActionKind = 5
	// ActTimer: call Tick after Delay (from now). Each ActTimer replaces the
	// previous one. A Tick that finds nothing due is harmless; once the
	// timer has fired and Tick was called, no timer is set until the next
	// ActTimer.
	ActTimer ActionKind = 6
	// ActClosed: Close finished; every connection has been closed. The
	// engine accepts no more operations.
	ActClosed ActionKind = 7
)

// Dial is how to open a connection: the resolved node, without the
// handshake (which the engine writes itself once the host reports the
// connection open).
type Dial struct {
	Network    string // "tcp" or "unix"
	Addr       string // host:port or a socket path
	TLS        bool
	ServerName string
	SkipVerify bool
}

// Action is one thing an Engine asks of its host, or tells it.
type Action struct {
	Kind ActionKind
	Conn ConnID // ActOpen, ActWrite, ActClose
	Node int    // ActOpen
	Dial *Dial  // ActOpen
	Data []byte // ActWrite: valid until the end of the next input call
	Op   OpID   // ActDone
	Lock LockID // ActDone of an acquire (0 on failure), ActLost
	// Inspection is the outcome of a successful Inspect (ActDone).
	Inspection *Inspection
	Err        error         // ActDone (nil on success), ActLost
	Delay      time.Duration // ActTimer
	Rep        Report        // ActReport (report.go)
}

// Engine is liblock's Redlock client with no I/O of its own: the host feeds
// it operation requests and I/O events, and carries out the actions it
// returns (Next). It owns every decision — tokens, quorum, validity,
// cleanup, waiting and backoff, local waiter queues, extension, loss — and
// the Redis wire: command encoding, reply parsing, the connection
// handshake, per-node deadlines and when to drop a connection.
//
// An Engine is not safe for concurrent use: a host calls it from one thread
// (or under one mutex) at a time.
type Engine struct {
	env     Env
	nodes   []*node
	timeout time.Duration
	drift   float64
	prefix  string
	owner   string
	quorum  int
	rng     *mrand.Rand

	actions  []Action
	rd       int
	nextConn ConnID
	nextID   uint64
	ops      map[OpID]*acquireOp
	locks    map[LockID]*lockState
	waiters  map[string][]*acquireOp
	// spareQueue is the memory of the last key queue that emptied, for the
	// next key that gets one: an acquire with a wait budget then allocates
	// no more than one without.
	spareQueue []*acquireOp
	subs       map[string]*subscription // keys local acquires wait for
	subNodes   []*node                  // each node's pub/sub connection (nil until needed)
	timers     timerHeap
	reqs       []*request    // recycled requests
	reported   time.Duration // the deadline last reported in an ActTimer
	hasRep     bool
	closing    bool
	closed     bool
	// inspecting counts inspections in flight (Close waits for them).
	inspecting int
	now        time.Duration // Env.Now at the start of the current input
	// rand receives the random bytes of a token or a release id: a local
	// array would escape (Env.Random is an interface call), one allocation
	// each.
	rand [16]byte
	// tokenSrc is what tokenUUID draws from (natively the Env as an
	// io.Reader for google/uuid, made once: boxing it per token allocated).
	tokenSrc tokenSource
	strs     strArena // tokens and release ids
	// The simulation's negative controls of the semaphore (never set
	// otherwise): semAnySlot admits a permit granted by a quorum on any
	// slots (the capped-set design), semOffByOne lets nodes admit
	// permits+semOffByOne holders.
	semAnySlot  bool
	semOffByOne int
	// noConnectDeadline: the simulation's negative control of the
	// operations' time bounds (never set otherwise): a connection that has
	// not opened and answered its handshake within the node timeout is
	// waited for, so that a request queued on it waits for its node to
	// answer again (a frozen node thawed, a black hole healed).
	noConnectDeadline bool
	// semHint: the slot a semaphore's next first attempt prefers, by
	// SemKey, when it is not 0 (semaphore.go, semHintSet).
	semHint map[string]int

	// multiWaiting: the multi-resource acquires with a wait budget, oldest
	// first (multi.go).
	multiWaiting []*acquireOp

	// tagKeys: a node is a Redis Cluster, so that every resource's keys
	// share a hash tag (keyOf, cluster.go).
	tagKeys bool

	// report: emit ActReport actions (Config.Report, report.go); warn:
	// only those a host logs as warnings (SetReports(ReportWarnings)).
	report, warn bool
	// reportable: Config.Report, without which SetReports changes nothing.
	reportable bool
	// watches: the elections watched (election.go), nil until one is;
	// watchRepeats: a test's negative control (election.go).
	watches      map[OpID]*watchOp
	watchRepeats bool

	// misconfig: a configuration error found at connect (identity.go):
	// every acquire fails with it.
	misconfig error
}

// New returns an Engine for cfg, with env as its clock and randomness.
func New(cfg Config, env Env) (*Engine, error) {
	if env == nil {
		return nil, invalidArg("env", "must not be nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var seed [16]byte
	env.Random(seed[:])
	e := &Engine{
		env:     env,
		timeout: cfg.nodeTimeout(),
		drift:   cfg.driftFactor(),
		prefix:  cfg.KeyPrefix,
		owner:   cfg.Owner,
		quorum:  len(cfg.Nodes)/2 + 1,
		rng:     mrand.New(mrand.NewPCG(le64(seed[:8]), le64(seed[8:]))),
		ops:     map[OpID]*acquireOp{},
		locks:   map[LockID]*lockState{},
		waiters: map[string][]*acquireOp{},
		subs:    map[string]*subscription{},
		report:  cfg.Report,
		// Config.Report: SetReports may change what is reported
		reportable: cfg.Report,
	}
	for i, n := range cfg.Nodes {
		nd := &node{idx: i, spec: n, name: n.Addr, wait: cfg.waitFor(n), waitDefault: cfg.WaitReplicas == nil}
		if n.MasterName != "" {
			nd.name = sentinelName(n)
		}
		if n.Cluster {
			nd.name, nd.cl, e.tagKeys = clusterName(n), newClusterState(nd), true
		}
		e.nodes = append(e.nodes, nd)
	}
	e.subNodes = make([]*node, len(e.nodes))
	return e, nil
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// Quorum returns how many nodes must agree: N/2+1.
func (e *Engine) Quorum() int { return e.quorum }

// NodeCount returns the number of nodes.
func (e *Engine) NodeCount() int { return len(e.nodes) }

// NodeAddr returns node i's address, without credentials.
func (e *Engine) NodeAddr(i int) string { return e.nodes[i].name }

// NodeTimeout returns the bound on every node exchange.
func (e *Engine) NodeTimeout() time.Duration { return e.timeout }

// Next returns the next action for the host, or false when there is none.
// Hosts drain it after every input call.
func (e *Engine) Next() (Action, bool) {
	if e.rd >= len(e.actions) {
		return Action{}, false
	}
	a := e.actions[e.rd]
	e.actions[e.rd] = Action{}
	e.rd++
	return a, true
}

// begin starts an input: it reads the clock. Deadlines fire only in Tick,
// never in another input: a host that was held up (a blocked event loop, a
// paused process) hands over the replies that arrived meanwhile before its
// timer's Tick, and they count.
func (e *Engine) begin() {
	if e.rd >= len(e.actions) {
		e.actions, e.rd = e.actions[:0], 0
	}
	e.now = e.env.Now()
}

// end finishes an input: the writes, the timer, the end of a Close.
func (e *Engine) end() {
	for _, n := range e.nodes {
		n.flush(e)
	}
	if e.tagKeys {
		e.clusterShards(func(s *node) bool { s.flush(e); return true })
	}
	e.eachSub(func(s *node) { s.flush(e) })
	if e.closing && !e.closed && e.idle() {
		e.closed = true
		for _, n := range e.nodes {
			n.drop(e)
		}
		e.clusterShards(func(s *node) bool { s.drop(e); return true })
		e.eachSub(func(s *node) { s.fail(e, ErrClosed) })
		e.emit(Action{Kind: ActClosed})
	}
	// The host's one timer is re-armed only when something is due sooner
	// than it is set for: a timer that fires early costs one Tick, which
	// reports the real next deadline, while re-arming on every reply would
	// cost a timer call per reply.
	if at, ok := e.timers.peek(); ok && !e.closed && (!e.hasRep || at < e.reported) {
		e.reported, e.hasRep = at, true
		e.emit(Action{Kind: ActTimer, Delay: max(at-e.now, 0)})
	}
}

func (e *Engine) emit(a Action) { e.actions = append(e.actions, a) }

// advance fires every timer that is due.
func (e *Engine) advance() {
	for {
		t, ok := e.timers.popDue(e.now)
		if !ok {
			return
		}
		t.target.fire(e, t.gen)
	}
}

func (e *Engine) newID() uint64 { e.nextID++; return e.nextID }

// Tick runs what is due; hosts call it when the ActTimer delay has passed
// (calling it early or often is harmless).
func (e *Engine) Tick() {
	e.begin()
	e.advance()
	e.hasRep = false // the host's timer has fired
	e.end()
}

// AcquireRequest describes one acquire.
type AcquireRequest struct {
	Resource string
	TTL      time.Duration
	// Wait is how long to keep retrying while another owner holds the
	// resource or too few nodes answer; 0 makes a single attempt.
	Wait time.Duration
	// AutoExtend keeps extending the lock until it is released.
	AutoExtend bool
	// Token, when set, is the caller's token instead of a random one: if it
	// already holds the resource on a quorum, the acquire re-enters (hands
	// over) that lock, its ttl raised to at least TTL; otherwise it is an
	// ordinary acquire with that token. MinToken to MaxToken bytes.
	Token string
	// Fence asks for a fencing token: an integer strictly greater than the
	// fence of every lock on the resource acquired before this one, also
	// across nodes that restart without their data after staying down
	// longer than the longest ttl, as long as the servers' clocks agree
	// within that time (the clock floor, fence.go). Not with Token.
	Fence bool
	// Permits, when not 0, asks for one of that many permits of the
	// semaphore Resource instead of the mutex (1 to MaxPermits; see
	// semaphore.go).
	Permits int
	// Mode: the mutex (ModeExclusive), or a reader or the writer of the
	// read-write lock Resource.
	Mode LockMode
	// Resources, when not empty, are the further resources of a
	// multi-resource lock: all of Resource and these, or none (multi.go).
	// At most MaxResources in all, no duplicates, not with Token.
	Resources []string
	// Election makes the acquire a campaign in the election Resource (its
	// name): fenced (the term) and auto-extended whatever Fence and
	// AutoExtend say, publishing Value (election.go).
	Election bool
	Value    string
}

// LockMode says which lock of a name an acquire or an inspect is about.
type LockMode uint8

// The lock modes.
const (
	// ModeExclusive: the mutex (or one permit of a semaphore).
	ModeExclusive LockMode = iota
	// ModeRead: a reader of the read-write lock.
	ModeRead
	// ModeWrite: the writer of the read-write lock.
	ModeWrite
)

// InspectRequest describes one inspect.
type InspectRequest struct {
	Resource string
	// Permits, when not 0: the semaphore of that many permits.
	Permits int
	// Mode: ModeRead or ModeWrite inspect the read-write lock Resource.
	Mode LockMode
	// Election: inspect the election Resource (its leader; election.go).
	Election bool
}

// Validate checks the request as InspectWith does.
func (r InspectRequest) Validate() error {
	if r.Election {
		if err := CheckElectionName(r.Resource); err != nil {
			return err
		}
		switch {
		case r.Permits != 0:
			return invalidArg("permits", "not with an election")
		case r.Mode != ModeExclusive:
			return invalidArg("mode", "not with an election")
		}
		return nil
	}
	if err := CheckResource(r.Resource); err != nil {
		return err
	}
	return checkKind(r.Permits, r.Mode, nil)
}

// checkKind checks the lock kind of a request: permits in range, and no
// combination the engine refuses (a read-write mode with permits or a set,
// permits with a set).
func checkKind(permits int, mode LockMode, resources []string) error {
	if permits != 0 {
		// A semaphore (semaphore.go): 0 stands for the mutex.
		if err := CheckPermits(permits); err != nil {
			return err
		}
		if len(resources) > 0 {
			return invalidArg("permits", "a semaphore's permit is of one resource, not of a multi-resource lock's set")
		}
	}
	switch {
	case mode > ModeWrite:
		return invalidArg("mode", "must be read, write or the mutex (exclusive), got "+mode.String())
	case mode != ModeExclusive && permits != 0:
		return invalidArg("mode", "a read-write lock has no permits: not with permits")
	case mode != ModeExclusive && len(resources) > 0:
		return invalidArg("mode", "a read-write lock is of one resource, not of a multi-resource lock's set")
	}
	return nil
}

// Validate checks the request as Acquire does.
func (r AcquireRequest) Validate() error {
	if r.Election {
		return r.validateElection()
	}
	if len(r.Resources) > 0 {
		if err := r.validateMulti(); err != nil {
			return err
		}
	} else if err := CheckResource(r.Resource); err != nil {
		return err
	}
	if r.Token != "" || r.Fence {
		switch {
		case r.Token != "" && (len(r.Token) < MinToken || len(r.Token) > MaxToken):
			return outOfRange("token", "must be "+strconv.Itoa(MinToken)+" to "+strconv.Itoa(MaxToken)+" bytes, got "+strconv.Itoa(len(r.Token)),
				len(r.Token) < MinToken, int64(len(r.Token)), MinToken, MaxToken, "bytes")
		case r.Token != "" && r.Fence:
			return invalidArg("fence", "not with a caller's token")
		}
	}
	if err := checkMode(r); err != nil {
		return err
	}
	if err := CheckTTL(r.TTL); err != nil {
		return err
	}
	if err := CheckWait(r.Wait); err != nil {
		return err
	}
	return checkKind(r.Permits, r.Mode, r.Resources)
}

// Acquire starts an acquire. A bad request is refused at once, with nothing
// sent; otherwise its outcome comes as an ActDone for the returned OpID.
func (e *Engine) Acquire(r AcquireRequest) (OpID, error) {
	if err := r.Validate(); err != nil {
		return 0, err
	}
	if err := e.checkOneSlot(r); err != nil {
		return 0, err // cluster.go
	}
	if e.closing {
		return 0, ErrClosed
	}
	if e.misconfig != nil {
		return 0, e.misconfig
	}
	e.begin()
	op := &acquireOp{
		id: OpID(e.newID()), resource: r.Resource, key: e.keyOf(r.Resource),
		ttl: r.TTL, wait: r.Wait > 0, waitUntil: e.now + r.Wait, autoExtend: r.AutoExtend,
		delay: minRetryDelay, token: r.Token, fence: r.Fence,
	}
	if r.Permits > 0 {
		op.permits, op.key = r.Permits, SemKey(op.key, r.Permits)
	}
	if r.Mode != ModeExclusive {
		e.rwInit(op, r.Mode)
	}
	e.ops[op.id] = op
	if e.report {
		op.start = e.now
		e.rep(RepAcquireStart, op.id, 0, 0, 0)
	}
	if r.Election {
		e.initElection(op, r)
	}
	if len(r.Resources) > 0 {
		// A set spans several keys' queues: it joins none (multi.go).
		e.initMulti(op, r)
	} else if op.wait {
		// Queue before the first attempt, so that a release by this engine
		// during it is not missed. Nothing goes on the wire for waiting
		// until a wait happens: the key's channel is subscribed only once
		// an attempt was refused or the acquire queues behind another (see
		// subscribe), so an acquire whose first attempt wins costs what a
		// single attempt costs.
		q := e.waiters[op.key]
		if q == nil {
			q, e.spareQueue = e.spareQueue, nil
		}
		ahead := len(q)
		e.waiters[op.key] = append(q, op)
		op.queued = true
		if ahead > 0 {
			e.repWaitStart(op)
			e.subscribe(op.key)
			// Behind this client's own waiters: no barging. It sleeps
			// until a release wakes it in turn (or its wait ends), as a
			// release would otherwise go to whoever asks again first —
			// the releaser itself, in a loop.
			op.timerGen++
			e.timers.push(op.waitUntil, op, op.timerGen)
			e.end()
			return op.id, nil
		}
	}
	e.startAttempt(op)
	e.end()
	return op.id, nil
}

// Cancel ends a pending acquire with ErrCanceled, leaving no key behind (the
// attempt in flight is cleaned up in the background). It reports whether op
// was a pending acquire.
func (e *Engine) Cancel(op OpID) bool {
	o := e.ops[op]
	if o == nil {
		return false
	}
	e.begin()
	e.finishAcquire(o, 0, ErrCanceled)
	e.end()
	return true
}

// ErrUnknownLock: the LockID names no lock of this engine (never one, or
// already released or forgotten).
var ErrUnknownLock = errorString("liblock: unknown lock")

type errorString string

func (e errorString) Error() string { return string(e) }

// Extend starts an extension of lock to ttl from now; it succeeds only if a
// quorum extended it within its validity, and never re-acquires.
func (e *Engine) Extend(lock LockID, ttl time.Duration) (OpID, error) {
	l := e.locks[lock]
	if l == nil {
		return 0, ErrUnknownLock
	}
	if err := CheckTTL(ttl); err != nil {
		return 0, err
	}
	e.begin()
	op := l.newOp(lockOp{id: OpID(e.newID()), lock: l, extend: true, ttl: ttl})
	e.queueLockOp(op)
	e.end()
	return op.id, nil
}

// Release starts a release of lock: its key is deleted on every node where
// the lock's token still holds it.
func (e *Engine) Release(lock LockID) (OpID, error) {
	l := e.locks[lock]
	if l == nil {
		return 0, ErrUnknownLock
	}
	e.begin()
	op := l.newOp(lockOp{id: OpID(e.newID()), lock: l})
	e.queueLockOp(op)
	e.end()
	return op.id, nil
}

// Forget drops what the engine keeps of a lock without releasing it (its
// key then stays until its ttl runs out); a host calls it when the handle
// it gave out for the lock is freed.
func (e *Engine) Forget(lock LockID) {
	l := e.locks[lock]
	if l == nil {
		return
	}
	e.begin()
	if e.report && !l.released && l.lostErr == nil {
		// Its holding ends here for the host (outcome canceled), which
		// may keep per-lock state until then.
		e.repHold(l, StatusCanceled)
	}
	l.released = true
	l.stopTimer()
	if l.cur == nil && len(l.queue) == 0 {
		delete(e.locks, lock)
	}
	e.end()
}

// LockInfo is what an Engine knows of one lock.
type LockInfo struct {
	Resource, Key, Token string
	TTL                  time.Duration // of the last successful acquire or extend
	Validity             time.Duration // how long it is still certainly held; 0 once lost or released
	AutoExtend           bool
	Released             bool
	Lost                 error // why it was lost, or nil
	Fence                int64 // the fencing token (0 unless asked for)
	Reentered            bool  // the caller's token already held the resource on a quorum
	Permits              int   // a semaphore's permit count (0: a mutex)
	Slot                 int   // a permit's slot (Key is then its semaphore's SemKey)
	Mode                 LockMode

	// Resources is a multi-resource lock's set (Resource is its first), or
	// nil.
	Resources []string

	// Election: a campaign's leadership (Resource is the election's name,
	// Fence its term, Value what it published; Token is without it).
	Election bool
	Value    string
}

// Lock returns what the engine knows of lock; false for an unknown lock.
func (e *Engine) Lock(lock LockID) (LockInfo, bool) {
	l := e.locks[lock]
	if l == nil {
		return LockInfo{}, false
	}
	info := LockInfo{
		Resource: l.resource, Key: l.key, Token: l.token, TTL: l.ttl,
		AutoExtend: l.autoExtend, Released: l.released, Lost: l.lostErr,
		Fence: l.fence, Reentered: l.reentered, Permits: l.permits, Slot: l.slot, Mode: l.mode,
	}
	if l.elect {
		tok, val, _, _ := splitElected(l.token)
		info.Token, info.Election, info.Value = tok, true, val
	}
	if l.resources != nil {
		info.Resource, info.Resources = l.resources[0], append([]string(nil), l.resources...)
	}
	if !l.released && l.lostErr == nil {
		info.Validity = max(0, l.validUntil-e.env.Now())
	}
	return info, true
}

// Close ends the engine: pending acquires end with ErrClosed, every held
// lock is released (each bounded by the node timeout), and once nothing is
// in flight every connection is closed and ActClosed is emitted.
func (e *Engine) Close() {
	if e.closing {
		return
	}
	e.begin()
	e.closing = true
	e.closeWatches()
	for _, o := range sortedOps(e.ops) {
		e.finishAcquire(o, 0, ErrClosed)
	}
	for _, l := range sortedLocks(e.locks) {
		if !l.released {
			e.queueLockOp(l.newOp(lockOp{lock: l, internal: true}))
		}
	}
	e.end()
}

// Closed reports whether Close has finished.
func (e *Engine) Closed() bool { return e.closed }

// idle reports whether nothing is in flight: no attempt, lock operation or
// node request.
func (e *Engine) idle() bool {
	if len(e.ops) > 0 || e.inspecting > 0 {
		return false
	}
	for _, l := range e.locks {
		if l.cur != nil {
			return false
		}
	}
	for _, n := range e.nodes {
		if n.inflight.len() > 0 || len(n.queue) > 0 {
			return false
		}
	}
	return e.clusterShards(func(s *node) bool { return s.inflight.len() == 0 && len(s.queue) == 0 })
}

// Opened reports that connection c is open (TLS included).
func (e *Engine) Opened(c ConnID) {
	e.begin()
	// A connection the engine gave up on was already closed by an ActClose
	// (the host abandons its connect): nothing more to say about it.
	if n := e.nodeOf(c); n != nil {
		switch n.state {
		case stConnecting:
			n.opened(e)
		case stResolving:
			n.sentinelOpened(e) // sentinel.go
		}
	}
	e.end()
}

// Received hands the engine bytes that arrived on connection c.
func (e *Engine) Received(c ConnID, p []byte) {
	e.begin()
	if n := e.nodeOf(c); n != nil {
		n.received(e, p)
	}
	e.end()
}

// ConnFailed reports that connection c could not be opened, failed, or was
// closed by the node; err says why.
func (e *Engine) ConnFailed(c ConnID, err error) {
	e.begin()
	if n := e.nodeOf(c); n != nil {
		if err == nil {
			err = errorString("connection closed by the node")
		}
		n.connFailed(e, err)
	}
	e.end()
}

func (e *Engine) nodeOf(c ConnID) *node {
	if c == 0 {
		return nil
	}
	for _, n := range e.nodes {
		if n.conn == c {
			return n
		}
	}
	var found *node
	e.eachSub(func(s *node) {
		if s.conn == c {
			found = s
		}
	})
	if found != nil {
		return found
	}
	if e.tagKeys {
		e.clusterShards(func(s *node) bool {
			if s.conn == c {
				found = s
			}
			return found == nil
		})
	}
	return found
}

// validUntil is when a lock set (or extended) by a round that started at
// start certainly ends: the key was set no earlier than start, so it lives
// at least until start + ttl by the node's clock, less the drift.
func (e *Engine) validUntil(start, ttl time.Duration) time.Duration {
	return start + ttl - (time.Duration(float64(ttl)*e.drift) + ClockPrecision)
}

// tooLate is the reason of a round a quorum answered only after the
// validity it could give had run out: the ttl is too short for the round
// trip. No value of the ttl is refused in advance (a grant's validity is
// what decides); this says, in the caller's terms, what to change.
func (e *Engine) tooLate(what string, start, ttl time.Duration) string {
	allowance := time.Duration(float64(ttl)*e.drift) + ClockPrecision
	return what + " by a quorum but too slowly for the ttl: the round took " + (e.now - start).String() +
		" and a " + ttl.String() + " ttl, less its clock-drift allowance (" + allowance.String() +
		"), left no validity; a ttl must outlast the round trip to the nodes, which may take up to the node timeout (" +
		e.timeout.String() + "): give a longer ttl"
}

func (e *Engine) quorumText() string { return "quorum is " + strconv.Itoa(e.quorum) }
