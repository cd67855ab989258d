package hostabi

import (
	"errors"

	"github.com/liblock/liblock/core/engine"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// Stepper is one engine behind the byte protocol: Step is lock_engine_step
// of some engine (liblock.wasm's, liblock.so's, or this package's).
type Stepper interface {
	// Step hands in one event (none when in is empty) and writes actions
	// into out, returning how many bytes it wrote.
	Step(in, out []byte) (int, error)
}

// StepperFunc adapts a function to Stepper.
type StepperFunc func(in, out []byte) (int, error)

// Step calls f.
func (f StepperFunc) Step(in, out []byte) (int, error) { return f(in, out) }

// Handle is a Stepper over an engine of this package's table.
type Handle uint64

// Step is Step(h, in, out).
func (h Handle) Step(in, out []byte) (int, error) { return Step(uint64(h), in, out) }

// Adapter is an engine behind the byte protocol with the methods of
// *engine.Engine (the core.Engine interface): each call encodes one event,
// steps until nothing is pending, and decodes the actions. Like an engine,
// it is not safe for concurrent use.
//
// The protocol carries durations in milliseconds: requests are validated
// here first (as the engine would, with its messages), then rounded down
// to whole milliseconds.
type Adapter struct {
	s      Stepper
	quorum int
	in     []byte
	out    []byte
	acc    []byte   // every byte of actions of the current input call
	acts   []Action // decoded from acc
	rd     int      // acts[rd:] are still to be returned by Next
	// fences holds the FENCE answers (fence, re-entered) by lock; INFO
	// does not carry them.
	fences map[engine.LockID]engine.LockInfo
	// ending: the releases in flight of locks with an entry in fences, so
	// that the entry goes once the release has ended the lock.
	ending map[engine.OpID]engine.LockID
	// modes: the acquires of a read-write lock in flight, by op (rwlock.go);
	// their locks' modes go into fences, as INFO does not carry them.
	modes map[engine.OpID]engine.LockMode
	// awaited: the connections the engine expects bytes on, from its
	// ActAwaiting (after ReportAwaiting).
	awaited []engine.ConnID

	// sets: the multi-resource acquires in flight and locks held, with
	// their sets (multi.go); INFO does not carry them.
	sets map[uint64][]string
}

// NewAdapter returns an Adapter over s, an engine of nodes nodes.
func NewAdapter(s Stepper, nodes int) *Adapter {
	// Twice MinOut: a Stepper that can tell from a step that left MinOut
	// unwritten that nothing is pending answers the next one itself
	// (wasm/host's, without a call into the module).
	return &Adapter{s: s, quorum: nodes/2 + 1, out: make([]byte, 2*MinOut)}
}

// Quorum returns N/2+1.
func (a *Adapter) Quorum() int { return a.quorum }

// input steps ev (none for Kind 0) and everything pending; it returns the
// answer to a request (the first STARTED, REJECTED, CANCELED or INFO) and
// queues the rest for Next. A WRITE's data stays valid until the next
// input, as the engine's does.
func (a *Adapter) input(ev Event) Action {
	// Actions not yet taken by Next stay queued; their WRITE data must
	// survive the reuse of acc.
	rest := a.acts[a.rd:]
	for i := range rest {
		if rest[i].Kind == engine.ActWrite {
			rest[i].Data = append([]byte(nil), rest[i].Data...)
		}
	}
	a.acts = append(a.acts[:0], rest...)
	a.rd = 0
	a.acc = a.acc[:0]
	in := a.in[:0]
	if ev.Kind != 0 {
		in = AppendEvent(in, ev)
	}
	a.in = in
	for {
		n, err := a.s.Step(in, a.out)
		if err != nil {
			panic("liblock: engine step: " + err.Error())
		}
		if n == 0 {
			break
		}
		a.acc = append(a.acc, a.out[:n]...)
		in = nil
	}
	start := len(a.acts)
	acts, err := Decode(a.acts, a.acc)
	if err != nil {
		panic("liblock: engine actions: " + err.Error())
	}
	a.acts = acts
	for i := start; i < len(a.acts); i++ {
		switch act := &a.acts[i]; act.Kind {
		case ActInspected:
			act.Kind = engine.ActDone // with its Inspection
		case ActAwaiting:
			a.setAwaited(act.Conn, act.Awaiting)
			a.acts = append(a.acts[:i], a.acts[i+1:]...)
			i--
		case engine.ActClose:
			a.setAwaited(act.Conn, false)
		case engine.ActDone:
			a.noteMode(act)
			if l, ok := a.ending[act.Op]; ok {
				delete(a.ending, act.Op)
				if act.Err == nil || errors.Is(act.Err, engine.ErrLost) {
					delete(a.fences, l)
				}
			}
			if a.sets != nil {
				a.setDone(act)
			}
			if act.Lock != 0 && (act.Info.Fence != 0 || act.Info.Reentered) {
				if a.fences == nil {
					a.fences = map[engine.LockID]engine.LockInfo{}
				}
				act.Info.Mode = a.fences[act.Lock].Mode
				a.fences[act.Lock] = act.Info
			}
		}
	}
	for i := start; i < len(a.acts); i++ {
		switch k := a.acts[i].Kind; k {
		case ActStarted, ActRejected, ActCanceled, ActInfo:
			ans := a.acts[i]
			a.acts = append(a.acts[:i], a.acts[i+1:]...)
			return ans
		}
	}
	return Action{}
}

// setAwaited records ActAwaiting (a connection or two: a slice, and no
// package slices, which liblock.wasm does not link).
func (a *Adapter) setAwaited(c engine.ConnID, on bool) {
	i := a.awaitedAt(c)
	switch {
	case on && i < 0:
		a.awaited = append(a.awaited, c)
	case !on && i >= 0:
		a.awaited = append(a.awaited[:i], a.awaited[i+1:]...)
	}
}

func (a *Adapter) awaitedAt(c engine.ConnID) int {
	for i, x := range a.awaited {
		if x == c {
			return i
		}
	}
	return -1
}

// ReportAwaiting asks the engine to say which connections it expects
// bytes on (EvReportAwaiting), so that Awaiting answers.
func (a *Adapter) ReportAwaiting() { a.input(Event{Kind: EvReportAwaiting}) }

// SetReports sets which reports the engine makes from now on (EvReports),
// as engine.Engine.SetReports does.
func (a *Adapter) SetReports(level engine.ReportLevel) {
	a.input(Event{Kind: EvReports, Level: uint8(level)})
}

// Awaiting reports whether the engine expects bytes on connection c
// (engine.Engine.Awaiting); false for every connection until
// ReportAwaiting.
func (a *Adapter) Awaiting(c engine.ConnID) bool { return a.awaitedAt(c) >= 0 }

func millis(d time.Duration) int64 { return d.Milliseconds() }

func started(ans Action) (engine.OpID, error) {
	if ans.Kind == ActRejected {
		return 0, ans.Err
	}
	return ans.Op, nil
}

// Acquire starts an acquire (engine.Engine.Acquire).
func (a *Adapter) Acquire(r engine.AcquireRequest) (engine.OpID, error) {
	if err := r.Validate(); err != nil {
		return 0, err
	}
	op, err := started(a.input(Event{Kind: EvAcquire, Resource: r.Resource, TTLms: millis(r.TTL), WaitMS: millis(r.Wait), AutoExtend: r.AutoExtend, Fence: r.Fence, Token: r.Token,
		Permits: uint32(r.Permits), Mode: r.Mode, Resources: r.Resources, Election: r.Election, Value: r.Value}))
	if err == nil && r.Mode != engine.ModeExclusive {
		a.startedMode(op, r.Mode)
	}
	if err == nil && len(r.Resources) > 0 {
		a.noteSet(op, r)
	}
	return op, err
}

// Inspect starts an inspection (engine.Engine.Inspect).
func (a *Adapter) Inspect(resource string) (engine.OpID, error) {
	if err := engine.CheckResource(resource); err != nil {
		return 0, err
	}
	return started(a.input(Event{Kind: EvInspect, Resource: resource}))
}

// InspectWith starts an inspection of a semaphore, an election or other
// lock kind (engine.Engine.InspectWith).
func (a *Adapter) InspectWith(r engine.InspectRequest) (engine.OpID, error) {
	if err := r.Validate(); err != nil {
		return 0, err
	}
	return started(a.input(Event{Kind: EvInspect, Resource: r.Resource, Permits: uint32(r.Permits), Mode: r.Mode, Election: r.Election}))
}

// Extend starts an extension (engine.Engine.Extend).
func (a *Adapter) Extend(l engine.LockID, ttl time.Duration) (engine.OpID, error) {
	if err := engine.CheckTTL(ttl); err != nil {
		if _, ok := a.Lock(l); !ok {
			return 0, engine.ErrUnknownLock
		}
		return 0, err
	}
	return started(a.input(Event{Kind: EvExtend, Lock: uint64(l), TTLms: millis(ttl)}))
}

// Release starts a release (engine.Engine.Release).
func (a *Adapter) Release(l engine.LockID) (engine.OpID, error) {
	op, err := started(a.input(Event{Kind: EvRelease, Lock: uint64(l)}))
	if err == nil && a.sets != nil {
		a.noteRelease(op, l)
	}
	if _, ok := a.fences[l]; ok && err == nil {
		if a.ending == nil {
			a.ending = map[engine.OpID]engine.LockID{}
		}
		a.ending[op] = l
	}
	return op, err
}

// Cancel cancels a pending acquire (engine.Engine.Cancel).
func (a *Adapter) Cancel(op engine.OpID) bool {
	return a.input(Event{Kind: EvCancel, Op: uint64(op)}).WasPending
}

// Forget drops a lock without releasing it (engine.Engine.Forget).
func (a *Adapter) Forget(l engine.LockID) {
	a.input(Event{Kind: EvForget, Lock: uint64(l)})
	a.forgetSet(l)
	delete(a.fences, l)
}

// Lock describes a lock (engine.Engine.Lock); durations in whole
// milliseconds.
func (a *Adapter) Lock(l engine.LockID) (engine.LockInfo, bool) {
	ans := a.input(Event{Kind: EvLockInfo, Lock: uint64(l)})
	if ans.Kind != ActInfo {
		delete(a.fences, l)
		a.forgetSet(l)
		return engine.LockInfo{}, false
	}
	a.setInfo(l, &ans.Info)
	if f, ok := a.fences[l]; ok {
		ans.Info.Fence, ans.Info.Reentered, ans.Info.Mode = f.Fence, f.Reentered, f.Mode
	}
	return ans.Info, true
}

// Close starts the engine's orderly end (engine.Engine.Close).
func (a *Adapter) Close() { a.input(Event{Kind: EvClose}) }

// Opened reports a connection open.
func (a *Adapter) Opened(c engine.ConnID) { a.input(Event{Kind: EvOpened, Conn: uint32(c)}) }

// Received hands the engine bytes from connection c.
func (a *Adapter) Received(c engine.ConnID, p []byte) {
	const chunk = MaxEvent - 64
	for len(p) > chunk {
		a.input(Event{Kind: EvReceived, Conn: uint32(c), Data: p[:chunk]})
		p = p[chunk:]
	}
	a.input(Event{Kind: EvReceived, Conn: uint32(c), Data: p})
}

// ConnFailed reports that connection c failed.
func (a *Adapter) ConnFailed(c engine.ConnID, err error) {
	msg := ""
	if err != nil {
		msg = cut(err.Error(), maxErrField)
	}
	a.input(Event{Kind: EvConnFailed, Conn: uint32(c), Message: msg})
}

// Tick runs what is due.
func (a *Adapter) Tick() { a.input(Event{Kind: EvTick}) }

// Next returns the next action, or false when there is none.
func (a *Adapter) Next() (engine.Action, bool) {
	if a.rd >= len(a.acts) {
		return engine.Action{}, false
	}
	act := a.acts[a.rd].Action
	a.acts[a.rd] = Action{}
	a.rd++
	return act, true
}
