package engine

import (
	"strconv"
)

// The replica check (Config.WaitReplicas). A node's grant — the SET of an
// acquire (or its script: a caller's token, a fence), the fence round's
// write, an extension — is followed on the same connection by
//
//	WAIT numreplicas timeout
//
// and its answer counts only once at least numreplicas replicas have
// acknowledged it: Redis answers WAIT with the number of replicas that
// acknowledged every write this connection made so far (the grant
// included), or as many as did when the timeout ran out. Fewer, or no
// answer within the node timeout, turn the node's grant into a failure,
// which the round treats like any failed node: the key it may hold is
// deleted by the attempt's cleanup (acquire), or the extension does not
// count (extend). A refusal (the key held by another) is not waited for.
//
// What WAIT promises: when it says k replicas acknowledged, k replicas had
// received the grant in their replication stream at that moment. What it
// does not: that they keep it (a replica restarted without persistence
// loses it), that a failover promotes one of them (Sentinel promotes the
// replica it finds best, normally the most up to date — a best effort, not
// consensus), or that the grant survives a partition in which the old
// primary keeps accepting writes. It makes the loss of a grant by a
// failover unlikely, not impossible; the README's failure model says when.

// MaxWaitReplicas (limits_gen.go, from the protocol's spec) bounds
// Config.WaitReplicas.

// validateWait checks Config.WaitReplicas.
func (cfg Config) validateWait() error {
	if w := cfg.WaitReplicas; w != nil && (*w < 0 || *w > MaxWaitReplicas) {
		return outOfRange("wait_replicas", "must be between 0 (off) and "+strconv.Itoa(MaxWaitReplicas)+", got "+strconv.Itoa(*w), *w < 0, int64(*w), 0, MaxWaitReplicas, "count")
	}
	return nil
}

// waitFor returns how many replicas must acknowledge each grant of node n:
// the configured count, or by default 1 on a Sentinel or a Cluster node
// (whose failover would otherwise lose a grant made just before it) and 0
// elsewhere.
func (cfg Config) waitFor(n Node) int {
	if cfg.WaitReplicas != nil {
		return *cfg.WaitReplicas
	}
	if n.MasterName != "" || n.Cluster {
		return 1
	}
	return 0
}

// The scripts' replies, as the replica check reads them. A script that is
// in none of these sets (a primitive added later) is waited for, and any
// reply but an error or nil counts as a grant: the safe side (a grant never
// counts unreplicated; at worst a refusal counts as a failure while the
// replicas lag). TestEveryScriptClassified lists them all.
var (
	// noWait: scripts that change nothing (inspection).
	noWait = map[*script]bool{inspectScript: true, semInspectScript: true, rwInspectScript: true}
	// deletes: the releases, answering ≥ 1 when they deleted the key, 0
	// when it was not held. Both answers are waited for as a grant is: a
	// release counts as done only once the replicas have its deletion, so
	// that the replica a failover promotes holds the key no longer; and an
	// answer from a primary that a failover left behind (its replicas gone
	// to the promoted one, while it still answers as a primary) reaches no
	// replica and fails, instead of reporting done while the new primary
	// keeps the key. A WAIT behind a command that wrote nothing counts the
	// replicas that follow the primary: the "not held" answer counts only
	// from a primary that many replicas follow.
	deletes = map[*script]bool{releaseScript: true, multiReleaseScript: true,
		semReleaseScript: true, rwReleaseScript: true}
	// grantNonNegative: scripts answering a fence counter (≥ 0) on a
	// grant, a negative number on a refusal.
	grantNonNegative = map[*script]bool{acquireFenceScript: true, multiAcquireScript: true, rwAcquireScript: true}
	// grantPositive: scripts answering ≥ 1 on success, ≤ 0 otherwise.
	grantPositive = map[*script]bool{extendScript: true, acquireTokenScript: true, fenceScript: true,
		multiExtendScript: true, multiFenceScript: true, rwExtendScript: true, rwFenceScript: true}
	// grantSlot: a semaphore's acquire, answering {slot, …}: a slot ≥ 0
	// granted, -1 refused.
	grantSlot = map[*script]bool{semAcquireScript: true}
)

// waitsFor reports whether a command may grant (or extend) a lock.
func waitsFor(c command) bool {
	switch {
	case c.kind == cmdSet:
		return true
	case c.sc == nil:
		return false
	}
	return !noWait[c.sc]
}

// isGrant reports whether a reply to a waited command is a grant (what the
// WAIT must confirm) rather than a refusal or an error.
func isGrant(c command, r Reply) bool {
	switch {
	case r.Err != nil || r.Nil:
		return false
	case c.kind == cmdSet || c.sc == nil:
		return true
	case grantNonNegative[c.sc]:
		return r.Int >= 0
	case deletes[c.sc]:
		// Deleted or not held: either answer tells where the key is not,
		// which is worth something only from a primary that its replicas
		// follow (an old primary left by a failover has none).
		return true
	case grantPositive[c.sc]:
		return r.Int > 0
	case grantSlot[c.sc]:
		return len(r.Elems) > 0 && r.Elems[0].Int >= 0
	default:
		return true
	}
}

// waitGate stands between a waited command and its handler: it keeps the
// command's reply until the WAIT behind it answers, then hands over the
// reply, or a failure when too few replicas acknowledged a grant.
type waitGate struct {
	h    handler
	cmd  command
	need int
	r    Reply // the command's reply, once have
	have bool
	// acks counts the WAITs written for it: a command re-sent after
	// NOSCRIPT gets a second WAIT, and only the last one's answer counts.
	acks int
	ms   int64
}

// reply receives the command's own reply.
func (g *waitGate) reply(_ *Engine, _ int, r Reply) { g.r, g.have = r, true }

// waitAck receives the answer of a WAIT written behind a command.
type waitAck struct{ g *waitGate }

func (w waitAck) reply(e *Engine, i int, r Reply) {
	g := w.g
	g.acks--
	if g.acks > 0 {
		return // an earlier WAIT: the command was re-sent behind it
	}
	switch {
	case !g.have:
		g.h.reply(e, i, Reply{Err: errorString("WAIT answered before the command it follows")})
	case !isGrant(g.cmd, g.r):
		g.h.reply(e, i, g.r)
	case r.Err != nil:
		g.h.reply(e, i, Reply{Err: errorString("WAIT " + strconv.Itoa(g.need) + ": " + r.Err.Error())})
	case r.Int < int64(g.need):
		g.h.reply(e, i, Reply{Err: &WaitError{Need: g.need, Acked: int(r.Int), Timeout: g.ms, Release: deletes[g.cmd.sc]}})
	default:
		g.h.reply(e, i, g.r)
	}
}

// WaitError is a node's grant that too few replicas acknowledged within
// the WAIT's timeout: the node counts as failed for that round.
type WaitError struct {
	Need, Acked int
	Timeout     int64 // ms
	// Release: the write was a release's deletion, not a grant.
	Release bool
}

func (w *WaitError) Error() string {
	what := "the grant"
	if w.Release {
		what = "the release"
	}
	return "WAIT: " + strconv.Itoa(w.Acked) + " of the " + strconv.Itoa(w.Need) + " replicas wait_replicas asks for acknowledged " + what + " within " +
		strconv.FormatInt(w.Timeout, 10) + "ms"
}

// waitTimeout is the WAIT's own timeout: half the node timeout, so that
// its answer (and the grant it holds back) normally arrives before the
// request's deadline closes the connection. Redis ends a blocked WAIT at
// its next cron tick after the timeout (hz 10: up to 100 ms late), so with
// a node timeout under about 200 ms an unsatisfied WAIT may meet the
// engine's deadline first: the grant fails all the same ("no reply within
// the node timeout"), and the connection is made anew. A satisfied WAIT
// answers as soon as the replicas acknowledge (sub-millisecond on a LAN).
// At least 1 ms: WAIT's 0 would block for ever.
func (e *Engine) waitTimeout() int64 {
	return max(1, (e.timeout / 2).Milliseconds())
}

// writeWait writes a WAIT behind request r (just written on n), and puts
// a waitGate between r and its handler.
func (e *Engine) writeWait(n *node, r *request) {
	g, ok := r.h.(*waitGate)
	if !ok {
		g = &waitGate{h: r.h, cmd: r.cmd, need: n.wait, ms: e.waitTimeout()}
		r.h = g
	}
	g.have = false
	g.acks++
	n.out = AppendCommand(n.out, "WAIT", strconv.Itoa(g.need), strconv.FormatInt(g.ms, 10))
	w := e.newRequest(n, waitAck{g: g}, command{kind: cmdRaw})
	w.deadline = e.now + e.timeout
	e.timers.push(w.deadline, w, w.gen)
	n.inflight.push(w)
}

// waitShort reports whether r answers a WAIT (handler h) with fewer
// replicas than it asked for, or with an error.
func waitShort(h handler, r Reply) bool {
	w, ok := h.(waitAck)
	return ok && (r.Err != nil || r.Int < int64(w.g.need))
}

// unwrapWait returns the handler behind a waitGate, or h.
func unwrapWait(h handler) handler {
	if g, ok := h.(*waitGate); ok {
		return g.h
	}
	return h
}
