package hostabi

import (
	"errors"
	"strconv"

	"github.com/liblock/liblock/core/engine"
)

// maxHandle keeps handles exact in a JavaScript number (below 2^53).
const maxHandle = 1<<53 - 1

// errHandlesExhausted: 2^53 − 1 engines were made in this process.
var errHandlesExhausted = errors.New("liblock: no engine handles left in this process")

// entry is one engine and the actions it emitted that the host has not
// received yet.
type entry struct {
	mu      mutex // one Step at a time, whatever the host does
	e       *engine.Engine
	pending []Action
	head    int // pending[head:] are undelivered
	// extended: acquires that asked for a fence or gave a token, whose
	// DONE FENCE precedes.
	extended map[engine.OpID]bool
	// watch: the host asked for ActAwaiting (EvReportAwaiting); conns are
	// the open connections with what was last reported of each.
	watch bool
	conns []connAwaiting
}

type connAwaiting struct {
	id       engine.ConnID
	awaiting bool
}

// table holds the engines by handle. Handles are given out in order from
// 1, so the first smallHandles are an index into small: every step looks
// its engine up (twice in liblock.wasm), and a map lookup hashes the
// handle and makes several calls, costly there (a map insert and delete
// measured ≈ 0.2 µs in wazero). The rest (a process that made thousands
// of engines) are in m.
var table struct {
	mu    mutex
	next  uint64
	small []*entry // by handle; nil for a freed one
	m     map[uint64]*entry
	count int
}

const smallHandles = 1024

func lookup(h uint64) *entry {
	table.mu.Lock()
	var en *entry
	if h < uint64(len(table.small)) {
		en = table.small[h]
	} else {
		en = table.m[h]
	}
	table.mu.Unlock()
	return en
}

// New makes an engine from a configuration JSON (lock_client_new's) and
// returns its handle.
func New(configJSON string) (uint64, error) {
	cfg, err := ParseConfig(configJSON)
	if err != nil {
		return 0, err
	}
	return NewWithEnv(cfg, engine.SystemEnv())
}

// NewWithEnv makes an engine of cfg over env (a simulated clock in tests).
func NewWithEnv(cfg Config, env engine.Env) (uint64, error) {
	ecfg, err := cfg.Engine()
	if err != nil {
		return 0, err
	}
	e, err := engine.New(ecfg, env)
	if err != nil {
		return 0, err
	}
	table.mu.Lock()
	defer table.mu.Unlock()
	if table.next >= maxHandle {
		return 0, errHandlesExhausted
	}
	table.next++
	en := &entry{e: e, extended: map[engine.OpID]bool{}}
	switch h := table.next; {
	case h < smallHandles:
		for uint64(len(table.small)) <= h {
			table.small = append(table.small, nil)
		}
		table.small[h] = en
	default:
		if table.m == nil {
			table.m = map[uint64]*entry{}
		}
		table.m[h] = en
	}
	table.count++
	return table.next, nil
}

// Free drops engine h at once (no I/O).
func Free(h uint64) error {
	table.mu.Lock()
	var en *entry
	if h < uint64(len(table.small)) {
		en, table.small[h] = table.small[h], nil
	} else {
		en = table.m[h]
		delete(table.m, h)
	}
	if en != nil {
		table.count--
	}
	table.mu.Unlock()
	if en == nil {
		return ErrInvalidHandle
	}
	en.mu.Lock()
	en.e, en.pending, en.head = nil, nil, 0
	en.mu.Unlock()
	return nil
}

// Count returns how many engines exist (for leak checks in tests).
func Count() int {
	table.mu.Lock()
	defer table.mu.Unlock()
	return table.count
}

// Step hands engine h the event in (none when in is empty) and writes the
// pending actions that fit into out. It returns the number of bytes
// written. A malformed event, or an out shorter than MinOut, is an
// *engine.ArgumentError naming "in" or "out_cap"; an unknown handle is
// ErrInvalidHandle. Then nothing was done.
func Step(h uint64, in, out []byte) (int, error) {
	en := lookup(h)
	if en == nil {
		return 0, ErrInvalidHandle
	}
	if len(out) < MinOut {
		return 0, argErr("out_cap", "must be at least "+strconv.Itoa(MinOut)+" bytes, got "+strconv.Itoa(len(out)))
	}
	var ev Event
	if len(in) > 0 {
		var err error
		if ev, err = DecodeEvent(in); err != nil {
			return 0, argErr("in", "malformed event: "+err.Error())
		}
	}
	en.mu.Lock()
	defer en.mu.Unlock()
	if en.e == nil { // freed while this call waited
		return 0, ErrInvalidHandle
	}
	if len(in) > 0 {
		en.apply(&ev)
	}
	return en.fill(out), nil
}

// apply hands ev to the engine and queues the answer and the actions.
func (en *entry) apply(ev *Event) {
	e := en.e
	switch ev.Kind {
	case EvAcquire:
		op, err := en.acquire(ev)
		en.answer(op, err)
	case EvExtend:
		op, err := e.Extend(engine.LockID(ev.Lock), durationOf(ev.TTLms)) // the handle first, then the ttl
		en.answer(op, cArg(err, ev.TTLms))
	case EvRelease:
		op, err := e.Release(engine.LockID(ev.Lock))
		en.answer(op, err)
	case EvCancel:
		was := e.Cancel(engine.OpID(ev.Op))
		en.pending = append(en.pending, Action{Action: engine.Action{Kind: ActCanceled}, WasPending: was})
	case EvForget:
		e.Forget(engine.LockID(ev.Lock))
	case EvClose:
		e.Close()
	case EvOpened:
		e.Opened(engine.ConnID(ev.Conn))
	case EvReceived:
		e.Received(engine.ConnID(ev.Conn), ev.Data)
	case EvConnFailed:
		var err error
		if ev.Message != "" {
			err = errors.New(ev.Message)
		}
		e.ConnFailed(engine.ConnID(ev.Conn), err)
	case EvTick:
		e.Tick()
	case EvInspect:
		op, err := e.InspectWith(engine.InspectRequest{Resource: ev.Resource, Permits: int(ev.Permits), Mode: ev.Mode, Election: ev.Election})
		en.answer(op, err)
	case EvWatch:
		op, err := e.Watch(engine.WatchRequest{Name: ev.Resource, Poll: durationOf(ev.PollMS)})
		en.answer(op, cArg(err, ev.PollMS))
	case EvUnwatch:
		was := e.Unwatch(engine.OpID(ev.Op))
		en.pending = append(en.pending, Action{Action: engine.Action{Kind: ActCanceled}, WasPending: was})
	case EvReportAwaiting:
		en.watch = true
	case EvReports:
		e.SetReports(engine.ReportLevel(ev.Level))
	case EvLockInfo:
		if info, ok := e.Lock(engine.LockID(ev.Lock)); ok {
			en.pending = append(en.pending, Action{Action: engine.Action{Kind: ActInfo}, Info: info})
		} else {
			en.answer(0, engine.ErrUnknownLock)
		}
	}
	for {
		a, ok := e.Next()
		if !ok {
			break
		}
		switch {
		case a.Kind == engine.ActDone && a.Inspection != nil:
			a.Kind = ActInspected
		}
		act := Action{Action: a}
		if a.Kind == engine.ActDone && a.Lock != 0 && en.extended[a.Op] {
			// Protocol 2: the fence and the re-entry ride on the DONE.
			info, _ := e.Lock(a.Lock)
			act.Info.Fence, act.Info.Reentered = info.Fence, info.Reentered
		}
		if a.Kind == engine.ActDone || a.Kind == ActInspected {
			delete(en.extended, a.Op)
		}
		if en.watch {
			en.track(a)
		}
		en.pending = append(en.pending, act)
	}
	if en.watch {
		en.reportAwaiting()
	}
}

// track follows the connections the host has open (ActOpen to ActClose:
// the engine closes every connection it gives up, failed ones too).
func (en *entry) track(a engine.Action) {
	switch a.Kind {
	case engine.ActOpen:
		en.conns = append(en.conns, connAwaiting{id: a.Conn})
	case engine.ActClose:
		for i, c := range en.conns {
			if c.id == a.Conn {
				en.conns = append(en.conns[:i], en.conns[i+1:]...)
				break
			}
		}
	}
}

// reportAwaiting queues ActAwaiting for each connection whose state changed
// in this call; a new one starts as not awaited.
func (en *entry) reportAwaiting() {
	for i := range en.conns {
		c := &en.conns[i]
		if now := en.e.Awaiting(c.id); now != c.awaiting {
			c.awaiting = now
			en.pending = append(en.pending, Action{Action: engine.Action{Kind: ActAwaiting, Conn: c.id}, Awaiting: now})
		}
	}
}

func (en *entry) acquire(ev *Event) (engine.OpID, error) {
	// Every value is checked by the engine (AcquireRequest.Validate), once;
	// an error names the argument as the C ABI does (cArg).
	op, err := en.e.Acquire(engine.AcquireRequest{Resource: ev.Resource, TTL: durationOf(ev.TTLms), Wait: durationOf(ev.WaitMS), AutoExtend: ev.AutoExtend, Token: ev.Token, Fence: ev.Fence,
		Permits: int(ev.Permits), Mode: ev.Mode, Resources: ev.Resources, Election: ev.Election, Value: ev.Value})
	if ae, ok := err.(*engine.ArgumentError); ok {
		given := ev.TTLms
		if ae.Arg == "wait" {
			given = ev.WaitMS
		}
		return 0, cArg(err, given)
	}
	if err == nil && (ev.Fence || ev.Token != "" || ev.Election) {
		// Its DONE carries the fence and whether it re-entered (0 and 0
		// for every other DONE).
		en.extended[op] = true
	}
	return op, err
}

// answer queues STARTED or REJECTED. It runs before the engine's actions of
// the same call are queued, so a host learns an operation's id before its
// DONE.
func (en *entry) answer(op engine.OpID, err error) {
	if err != nil {
		en.pending = append(en.pending, Action{Action: engine.Action{Kind: ActRejected, Err: err}})
		return
	}
	en.pending = append(en.pending, Action{Action: engine.Action{Kind: ActStarted, Op: op}})
}

// fill encodes the pending actions that fit into out.
func (en *entry) fill(out []byte) int {
	b := out[:0:len(out)]
	for en.head < len(en.pending) {
		a := &en.pending[en.head]
		nb, whole := appendAction(b, a, len(out)-len(b))
		b = out[:len(nb):len(out)] // nb is b's array whenever it fit
		if !whole {
			break
		}
		en.pending[en.head] = Action{}
		en.head++
	}
	if en.head == len(en.pending) {
		en.pending, en.head = en.pending[:0], 0
	} else {
		// The engine reuses a WRITE's buffer at its next input: keep a copy
		// of what the host has not received.
		for i := en.head; i < len(en.pending); i++ {
			if a := &en.pending[i]; a.Kind == engine.ActWrite {
				a.Data = append([]byte(nil), a.Data...)
			}
		}
	}
	return len(b)
}

// Exists reports whether h names an engine.
func Exists(h uint64) bool { return lookup(h) != nil }
