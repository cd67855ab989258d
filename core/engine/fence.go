package engine

import (
	"strconv"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// Fencing tokens, monotonic across the quorum.
//
// Every node keeps a counter per resource (FenceKey). The first round's
// script sets the key and answers the node's counter; once a quorum
// granted, the fence is the highest counter among the granting nodes + 1,
// and a second round writes it to those nodes — only while the key still
// holds this attempt's token, and only upwards. The acquire succeeds when a
// quorum accepted the fence within the lock's validity.
//
// Why the next holder's fence is greater: its first round is granted by a
// quorum, which intersects the quorum that accepted this fence. On a node
// in both, the next holder's SET could only succeed once this lock's key
// was gone there, and this lock's second round ran on that node while its
// key was there — so the counter the next holder reads there is at least
// this fence.
//
// A node that restarts without its data forgets its counters, which never
// expire: waiting out the longest ttl before it rejoins (the delayed
// restart) restores exclusion, not the counters. So the first round's
// scripts answer, for each counter, max(counter, floor), where floor is
// the node's own clock: TIME in microseconds since the epoch. The fence is
// then at least one more than some node's clock at the first round. Why it
// still exceeds every earlier fence F when the later quorum holds no
// counter of F: F is at most one more than the highest clock any node
// showed at F's first round (by induction: each fence is the largest of
// counters and clocks read then, plus one, and two fences of one counter
// are at least a round trip, so more than a microsecond, apart). The later
// quorum shares a node with the quorum that accepted F; that node lost F
// only by restarting empty, after F was written and more than the longest
// ttl before the later first round. Its clock then reads higher than
// every node's clock at F's first round unless the servers' clocks differ
// by more than that time, or one was stepped back. Values are about
// 1.8e15: exact in int64 and in a double (below 2^53, which it passes in
// the year 2255), the scripts keep them in strings and in Lua doubles
// (never tostring). An existing counter above the floor wins, so fences
// only grow on upgrade.

// fenceRound is the second round of a fenced acquire.
type fenceRound struct {
	a        *attempt
	fence    int64
	state    []uint8
	accepted int
	refused  int
	failed   int
	sent     int
	causes   []*NodeError
	decided  bool
	start    time.Duration // for reports (report.go)
}

func (e *Engine) startFencing(a *attempt) {
	f := &fenceRound{a: a, fence: a.maxFence + 1, state: make([]uint8, len(e.nodes)), start: e.now}
	a.fencing = f
	for i := range e.nodes {
		if a.holds(i) {
			e.sendFence(f, i)
		}
	}
}

// sendFence writes the round's fence to node i, which granted the first
// round: at its start, or late while the round still runs. The fence was
// taken from the quorum that granted first, which is all its argument needs
// (any later quorum meets it); a late node only widens the set that may
// accept it, and its counter only goes up.
func (e *Engine) sendFence(f *fenceRound, i int) {
	f.sent++
	if f.a.op.mode != ModeExclusive {
		e.sendRWFence(f, i)
		return
	}
	if f.a.op.keys != nil {
		e.sendFenceMulti(f, i)
		return
	}
	key, fenceKey := f.a.op.key, FenceKey(f.a.op.key)
	if o := f.a.op; o.permits > 0 {
		// A permit: its slot, and the name's counter, shared by every
		// permit count and the mutex (a fence exceeds every earlier one
		// of the name).
		key, fenceKey = SlotKey(o.key, f.a.chosen), FenceKey(e.keyOf(o.resource))
	}
	e.sendScript2(e.nodes[i], f, fenceScriptOf(f.a.op.elect), key, fenceKey, f.a.token, strconv.FormatInt(f.fence, 10))
}

func (f *fenceRound) reply(e *Engine, i int, r Reply) {
	if f.state[i] != pending {
		return
	}
	switch {
	case r.Err != nil:
		f.state[i] = failed
		f.failed++
		f.causes = append(f.causes, &NodeError{Node: i, Addr: e.nodes[i].name, Err: r.Err})
	case r.Int == 1:
		f.state[i] = granted
		f.accepted++
	default:
		f.state[i] = refused
		f.refused++
	}
	if !f.decided {
		e.fenceDecide(f)
	}
}

// fenceDecide ends the fence round once its outcome is certain. The nodes
// still to answer it include those whose first-round answer is still due:
// they may yet grant and then take the fence.
func (e *Engine) fenceDecide(f *fenceRound) {
	a, o := f.a, f.a.op
	left := f.sent - f.accepted - f.refused - f.failed
	for _, st := range a.state {
		if st == pending {
			left++
		}
	}
	until := e.validUntil(a.start, o.ttl)
	switch {
	case f.accepted >= e.quorum && e.now < until:
		f.decided = true
		if e.report {
			e.rep(RepFence, o.id, 0, StatusOK, e.now-f.start)
		}
		if o.att == a && !o.finished {
			e.acquired(o, a, until)
		}
	case f.accepted >= e.quorum || f.accepted+left < e.quorum:
		f.decided = true
		if o.finished {
			return // canceled meanwhile: its cleanup is done
		}
		var err error
		switch {
		case f.accepted >= e.quorum:
			err = &UnavailableError{Op: "acquire", Reason: e.tooLate("fenced", a.start, o.ttl), Nodes: sortCauses(f.causes)}
		case f.failed > 0:
			err = &UnavailableError{Op: "acquire", Reason: "the fence was written on " + strconv.Itoa(f.accepted) + " of " + strconv.Itoa(len(e.nodes)) + " nodes, " + e.quorumText(), Nodes: sortCauses(append([]*NodeError(nil), f.causes...))}
		default:
			err = errNotAcquired(o.resource, "the fence was refused by "+strconv.Itoa(f.refused)+" nodes")
		}
		if e.report {
			e.rep(RepFence, o.id, 0, StatusOf(err), e.now-f.start)
		}
		e.attemptFailed(a, err)
	}
}
