package engine

// Leader election, with the shape of etcd's
// concurrency.Election and client-go's leader election.
//
// A campaign is a fenced, auto-extended acquire of the election key
// (ElectionKey: the name's key + 0xFF + "elect", which no mutex, semaphore
// or read-write lock key can be, as their names are UTF-8). Its term is its
// fence: strictly greater than the term of every earlier leader of the
// election (fence.go's argument, the clock floor included: a term is
// what a leader passes to what it writes to, so it gets the same
// guarantee as a fence, and is as large). The value it stores on each node is the
// attempt's token, 0xFF, the campaign's value; once the fence round accepts
// the term on a node, the fence script (elect_fence.lua) rewrites the
// value there to token 0xFF value 0xFF term (same expiry) and publishes the
// term on LeaderChannel. The election's extend and release scripts match the
// token as a prefix of the value, so the rewrite changes nothing for them;
// the release publishes "0" on LeaderChannel when it deletes a leader's key.
//
// leader() is an inspection of the election key: the holder is the token
// and value held on a quorum; its term is the term its holder nodes show.
// Every node that shows a term for that token shows the leader's own term
// (only its fence round writes it there; a node that grants after the
// round ended gets the term too). A holder becomes leader when its fence
// round is accepted by a quorum, so leader() names it only once a quorum
// of nodes shows the term: a term shown on fewer may belong to a campaign
// whose fence round fails, and the next leader's term, read from a quorum
// that missed it, can be lower.
//
// Watching an election (Watch) subscribes to its LeaderChannel on every
// node and inspects the election on every message, and by polling as the
// fallback (at the leader's validity end, else every poll interval): each
// change is emitted once, in order (ActLeader), the first inspection's
// state first, so a late watcher starts from the current leader.

import (
	"strconv"
	"strings"
	"unicode/utf8"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// ActLeader: watch Op saw the election change: Inspection is the new state
// (Held false: no leader). The first one is the state when the watch
// started.
const ActLeader ActionKind = 15

// MaxElectionValue and DefaultWatchPoll (how often a watch polls the
// election when pub/sub says nothing and no leader's validity ends sooner)
// are in limits_gen.go, from the protocol's spec.

// ElectionKey is the key of the election whose name's key is key.
func ElectionKey(key string) string { return key + "\xffelect" }

// LeaderChannel is the pub/sub channel on which the election whose key is
// ekey announces a new term (the message) or a resignation ("0").
func LeaderChannel(ekey string) string { return leaderPrefix + ekey }

const leaderPrefix = "liblock:leader:"

// The election's scripts, by their SHA-1 (TestScriptHashes).
const (
	// ElectFenceSHA: fence.lua for an election, which also writes the term
	// into the value and announces it (its counter variable is "term", so
	// that the fault proxy's pattern of fence.lua does not match it).
	ElectFenceSHA = "3ae20d2df83eff537db7fbfa847827e368b506a7"
	// ElectExtendSHA: extend.lua matching the token as the value's prefix.
	ElectExtendSHA = "b343a34cbcecf04763230f0361ae96234d9e0f23"
	// ElectReleaseSHA: release.lua matching the token as the value's
	// prefix; it announces the end of a term.
	ElectReleaseSHA = "706f8474f111d11ab1cae227b16529a32ea312c9"
)

// The election's scripts take bits of node.loaded away from the bottom
// (the mutex) and 1<<20.. (the multi-resource lock).
var (
	electFenceScript   = &script{src: electFenceSrc, sha: ElectFenceSHA, bit: 1 << 28}
	electExtendScript  = &script{src: electExtendSrc, sha: ElectExtendSHA, bit: 1 << 29}
	electReleaseScript = &script{src: electReleaseSrc, sha: ElectReleaseSHA, bit: 1 << 30}
)

// The election's scripts for WAIT (wait.go): the fence round and the
// extension grant as fence.lua and extend.lua do (1 on success); the
// release deletes as release.lua does.
func init() {
	grantPositive[electFenceScript] = true
	grantPositive[electExtendScript] = true
	deletes[electReleaseScript] = true
}

// releaseScriptFor and extendScriptFor: a lock's release and extend
// scripts: the election's, or its mode's (rwlock.go).
func releaseScriptFor(m LockMode, elect bool) *script {
	if elect {
		return electReleaseScript
	}
	return releaseFor(m)
}

func extendScriptFor(m LockMode, elect bool) *script {
	if elect {
		return electExtendScript
	}
	return extendFor(m)
}

func fenceScriptOf(elect bool) *script {
	if elect {
		return electFenceScript
	}
	return fenceScript
}

// CheckElectionName validates an election's name (the caller's "name").
func CheckElectionName(name string) error {
	if err := CheckResource(name); err != nil {
		return renamed("name", err)
	}
	return nil
}

// CheckElectionValue validates a campaign's value: what observers see.
func CheckElectionValue(value string) error {
	switch {
	case value == "":
		return outOfRange("value", "must not be empty", true, 0, 1, MaxElectionValue, "bytes")
	case len(value) > MaxElectionValue:
		return outOfRange("value", "longer than "+strconv.Itoa(MaxElectionValue)+" bytes, got "+strconv.Itoa(len(value)), false, int64(len(value)), 1, MaxElectionValue, "bytes")
	case !utf8.ValidString(value):
		return invalidArg("value", "not valid UTF-8")
	}
	return nil
}

// validateElection checks a campaign (AcquireRequest.Election).
func (r AcquireRequest) validateElection() error {
	if err := CheckElectionName(r.Resource); err != nil {
		return err
	}
	if err := CheckElectionValue(r.Value); err != nil {
		return err
	}
	switch {
	case r.Token != "":
		return invalidArg("token", "not with an election: a campaign's token is its own")
	case r.Permits != 0:
		return invalidArg("permits", "not with an election")
	case r.Mode != ModeExclusive:
		return invalidArg("mode", "not with an election")
	case len(r.Resources) > 0:
		return invalidArg("resources", "not with an election")
	}
	if err := CheckTTL(r.TTL); err != nil {
		return err
	}
	return CheckWait(r.Wait)
}

// initElection makes op a campaign: the election key, fenced (term =
// fence) and auto-extended.
func (e *Engine) initElection(op *acquireOp, r AcquireRequest) {
	op.key = ElectionKey(e.keyOf(r.Resource))
	op.elect, op.value = true, r.Value
	op.fence, op.autoExtend = true, true
}

// splitElected splits an election key's value: token, value, term (0 when
// the term is not written there yet). ok is false for a value that is no
// campaign's.
func splitElected(v string) (token, value string, term int64, ok bool) {
	token, rest, ok := strings.Cut(v, "\xff")
	if !ok {
		return "", "", 0, false
	}
	value, t, hasTerm := strings.Cut(rest, "\xff")
	if hasTerm {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || n < 1 {
			return "", "", 0, false
		}
		term = n
	}
	return token, value, term, true
}

// electInspection turns an inspection of an election key into the leader:
// the values are grouped by token and value (a node that has the term and
// one that has not yet agree), the term is the one a holder node shows,
// and a holder that shows no term yet is no leader yet.
func (e *Engine) electInspection(op *inspectOp) (*Inspection, error) {
	terms := make([]int64, len(op.values))
	for i, v := range op.values {
		if !op.has[i] {
			continue
		}
		if tok, val, term, ok := splitElected(v); ok {
			op.values[i], terms[i] = tok+"\xff"+val, term
		}
	}
	in, err := e.inspection(op)
	if in == nil {
		return in, err
	}
	var holder string
	for i := range in.Nodes {
		s := &in.Nodes[i]
		if !s.Locked {
			continue
		}
		tok, _, _, _ := splitElected(op.values[i])
		s.Owner = OwnerOf(tok)
		if s.Holder {
			in.Term = max(in.Term, terms[i])
			holder = op.values[i]
		}
	}
	// The term counts once a quorum shows it: the fence round succeeds
	// only then, and a term on fewer nodes may belong to a campaign whose
	// fence round then fails — the next leader's term, read from another
	// quorum, can be lower.
	shown := 0
	for i := range in.Nodes {
		if in.Nodes[i].Holder && in.Term != 0 && terms[i] == in.Term {
			shown++
		}
	}
	if shown < e.quorum {
		if in.Held {
			// The failed nodes may show the term: a quorum may know it.
			for i := range in.Nodes {
				if in.Nodes[i].Err != nil {
					shown++
				}
			}
			op.unsure = op.unsure || shown >= e.quorum
		}
		in.Term = 0
	}
	if !in.Held || in.Term == 0 {
		in.Held, in.Validity, in.Owner, in.Term = false, 0, "", 0
		return in, err
	}
	tok, val, _, _ := splitElected(holder)
	in.Owner, in.Value = OwnerOf(tok), val
	return in, err
}

// WatchRequest describes one watch of an election.
type WatchRequest struct {
	// Name is the election's name (as a campaign's AcquireRequest.Resource).
	Name string
	// Poll is how often to inspect the election when pub/sub announces
	// nothing and no leader's validity ends sooner; 0: DefaultWatchPoll.
	Poll time.Duration
}

// Validate checks the request as Watch does.
func (r WatchRequest) Validate() error {
	if err := CheckElectionName(r.Name); err != nil {
		return err
	}
	return CheckPoll(r.Poll)
}

// CheckPoll validates a watch's poll interval (0: DefaultWatchPoll).
func CheckPoll(poll time.Duration) error {
	if poll < 0 || poll > MaxWait {
		return outOfRange("poll", "must be between 0 (the default, "+DefaultWatchPoll.String()+") and "+MaxWait.String()+", got "+poll.String(),
			poll < 0, poll.Milliseconds(), 0, MaxWait.Milliseconds(), "ms")
	}
	return nil
}

// watchOp is one Watch.
type watchOp struct {
	id        OpID
	name, key string
	poll      time.Duration
	inflight  bool // an inspection is in flight
	dirty     bool // an announcement came during it: inspect again
	reported  bool
	held      bool
	term      int64
	value     string
	timerGen  uint64
	ended     bool
}

func (w *watchOp) live(gen uint64) bool { return !w.ended && gen == w.timerGen }

// fire: the poll is due.
func (w *watchOp) fire(e *Engine, gen uint64) {
	if w.live(gen) && !w.inflight {
		e.watchInspect(w)
	}
}

// Watch starts watching the election r.Name: an ActLeader for the state
// now, then one per change, until Unwatch (an ActDone for the watch, Err
// nil) or Close (ActDone with ErrClosed).
func (e *Engine) Watch(r WatchRequest) (OpID, error) {
	if err := r.Validate(); err != nil {
		return 0, err
	}
	if e.closing {
		return 0, ErrClosed
	}
	e.begin()
	w := &watchOp{id: OpID(e.newID()), name: r.Name, key: ElectionKey(e.keyOf(r.Name)), poll: r.Poll}
	if w.poll == 0 {
		w.poll = DefaultWatchPoll
	}
	if e.watches == nil {
		e.watches = map[OpID]*watchOp{}
	}
	e.watches[w.id] = w
	e.watchInspect(w)
	e.end()
	return w.id, nil
}

// Unwatch ends watch op (an ActDone with Err nil); false when op is no
// watch of this engine.
func (e *Engine) Unwatch(op OpID) bool {
	w := e.watches[op]
	if w == nil {
		return false
	}
	e.begin()
	e.endWatch(w, nil)
	e.end()
	return true
}

func (e *Engine) endWatch(w *watchOp, err error) {
	w.ended = true
	w.timerGen++
	delete(e.watches, w.id)
	e.unlistenLeader(w.key)
	e.emit(Action{Kind: ActDone, Op: w.id, Err: err})
}

// watchRepeats is the simulation's negative control of the watches' checks
// (sim_election_test.go): every inspection is reported, changed or not.
// Never set outside tests.

// closeWatches ends every watch (Close).
func (e *Engine) closeWatches() {
	for _, id := range sortedWatchIDs(e.watches) {
		e.endWatch(e.watches[id], ErrClosed)
	}
}

func sortedWatchIDs(m map[OpID]*watchOp) []OpID {
	ids := make([]OpID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}

// watchInspect (re)subscribes the watch's channel where a lost pub/sub
// connection dropped it, and inspects the election.
func (e *Engine) watchInspect(w *watchOp) {
	e.listenLeader(w.key)
	w.inflight, w.dirty = true, false
	w.timerGen++
	n := len(e.nodes)
	op := &inspectOp{id: w.id, resource: w.name, key: w.key, start: e.now, elect: true, watch: w,
		values: make([]string, n), has: make([]bool, n), ttls: make([]time.Duration, n), errs: make([]error, n)}
	e.inspecting++
	for _, nd := range e.nodes {
		e.sendScript(nd, op, inspectScript, op.key)
	}
}

// watchInspected handles a watch's inspection: the change, if any, then the
// next inspection (at once after an announcement, else the next poll).
// An unsure inspection (not held, but a leader may be on a quorum counting
// the nodes that failed) is no news: watchers would see the leader go and
// come back. The next poll, or the leader's key expiring where it answered,
// settles it.
func (e *Engine) watchInspected(w *watchOp, in *Inspection, err error, unsure bool) {
	w.inflight = false
	if w.ended {
		return
	}
	next := w.poll
	if err == nil && in != nil && !unsure {
		changed := !w.reported || in.Held != w.held || in.Term != w.term || in.Value != w.value || e.watchRepeats
		// Terms only grow: an inspection that finds an older leader than
		// one already reported ran into a stale minority and is not news.
		if changed && !(in.Held && w.held && in.Term < w.term) {
			w.reported, w.held, w.term, w.value = true, in.Held, in.Term, in.Value
			e.emit(Action{Kind: ActLeader, Op: w.id, Inspection: in})
		}
		if in.Held && in.Validity > 0 {
			// A leader that dies announces nothing: look again when its
			// validity ends.
			next = min(next, max(in.Validity, minRetryDelay))
		}
	}
	if w.dirty {
		e.watchInspect(w)
		return
	}
	w.timerGen++
	e.timers.push(e.now+next, w, w.timerGen)
}

// leaderMessage: an announcement on the channel of election key ekey.
func (e *Engine) leaderMessage(ekey string) {
	for _, id := range sortedWatchIDs(e.watches) {
		w := e.watches[id]
		if w.key != ekey {
			continue
		}
		if w.inflight {
			w.dirty = true
			continue
		}
		e.watchInspect(w)
	}
}

// leaderChan is the name under which a node's pub/sub connection files an
// election's channel (node.chans): 0xFF never starts a key.
func leaderChan(ekey string) string { return "\xffleader\xff" + ekey }

func (e *Engine) listenLeader(ekey string) {
	if e.closing {
		return
	}
	for i := range e.nodes {
		e.listenOn(i, ekey, leaderChan(ekey), LeaderChannel(ekey)) // spubsub.go
	}
}

func (e *Engine) unlistenLeader(ekey string) {
	for _, w := range e.watches {
		if w.key == ekey {
			return // another watch still listens
		}
	}
	e.unlistenAll(leaderChan(ekey), LeaderChannel(ekey)) // spubsub.go
}
