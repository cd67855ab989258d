package engine

import (
	"strconv"

	sort "github.com/liblock/liblock/core/internal/xsort"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// Read-write locks: any number of readers or one writer per name, over the
// same quorum, validity, extension, loss and fencing as the mutex.
//
// Each node keeps, per name, keys of their own (name + 0xFF + "rw:..." — a
// 0xFF byte never occurs in UTF-8, so no mutex's key, and no other name's,
// is one of them):
//
//   - the writer key RWKey(key): the writer's token, with PX ttl, as a
//     mutex's key;
//   - the readers key (":r"): a sorted set of the readers' tokens, each
//     scored by its expiry in the node's own milliseconds (read with TIME
//     in the script); expired members are pruned on every operation, and
//     the key's own expiry is kept at its latest member's, so that nothing
//     outlives its readers;
//   - the intents key (":i"): a sorted set of the ids of writers waiting
//     behind readers, scored the same way (a short ttl: two node timeouts +
//     rwIntentRefresh + rwIntentGrace);
//   - the fence counter (FenceKey of the name + 0xFF "rw").
//
// rw_acquire.lua admits, atomically per node, a reader only when no writer
// holds the node and no writer's intent is there; a writer only when no
// writer and no unexpired reader is there. A waiting writer refused because
// of readers leaves its intent there (refreshed by every attempt while it
// waits, at least every rwIntentRefresh, and removed when it acquires or
// gives up), so that a stream of new readers cannot starve it: once its
// intent is on enough nodes, no reader can be admitted by a quorum, and the
// readers in place drain within their ttl (or at their release).
//
// A reader and a writer are each valid from the moment a quorum granted
// until start + ttl − drift, as a mutex. The safety argument is in
// README.md ("Read-write lock safety").

// String names the mode as the options do ("read", "write"; "exclusive").
func (m LockMode) String() string {
	switch m {
	case ModeExclusive:
		return "exclusive"
	case ModeRead:
		return "read"
	case ModeWrite:
		return "write"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// RWKey is the writer key of the read-write lock of key (prefix +
// resource): key + 0xFF + "rw:w". Its readers and intents keys replace the
// final "w" with "r" and "i"; its fence counter is FenceKey(key + 0xFF +
// "rw").
func RWKey(key string) string { return key + rwSuffix }

const rwSuffix = "\xffrw:w"

// The read-write scripts' sums (TestScriptHashes).
const (
	// RWAcquireSHA: admit a reader or a writer (rw_acquire.lua).
	RWAcquireSHA = "83c0aa0c008553905a8ed63c4137f38b600cbc3e"
	// RWExtendSHA: extend a writer or an unexpired reader.
	RWExtendSHA = "d7e33fd3ca47230af43841f6ff13c4d7d36514b9"
	// RWReleaseSHA: remove a writer, a reader or an intent, and publish.
	RWReleaseSHA = "43fe5fca7653a836bd0ca67de9c7b47d852ea4c7"
	// RWFenceSHA: raise the fence counter while the token holds the lock.
	RWFenceSHA = "70dd599f8e16168583e8eacee93036dd5991aa24"
	// RWInspectSHA: the writer, its PTTL, and the unexpired readers.
	RWInspectSHA = "028a9d39f00c65ff2095443a8961bf85af6f5ddc"
)

// The read-write scripts. Their bits in node.loaded are high ones, out of
// the way of the other primitives' scripts.
var (
	rwAcquireScript = &script{src: rwAcquireSrc, sha: RWAcquireSHA, bit: 1 << 9}
	rwExtendScript  = &script{src: rwExtendSrc, sha: RWExtendSHA, bit: 1 << 10}
	rwReleaseScript = &script{src: rwReleaseSrc, sha: RWReleaseSHA, bit: 1 << 11}
	rwFenceScript   = &script{src: rwFenceSrc, sha: RWFenceSHA, bit: 1 << 12}
	rwInspectScript = &script{src: rwInspectSrc, sha: RWInspectSHA, bit: 1 << 13}
)

const (
	// rwIntentRefresh: a writer that left an intent makes an attempt (which
	// refreshes it) at least this often while it waits, whatever its
	// backoff or its place among this engine's waiters.
	rwIntentRefresh = maxRetryDelay
	// rwIntentGrace: an intent outlives its refresh by this much more than
	// two node timeouts. Between two runs of the writer's script on a node
	// pass at most: the rest of the first attempt (a node timeout), the
	// pause before the next (rwIntentRefresh), and the next attempt's way
	// to the node (a node timeout).
	rwIntentGrace = 2 * maxRetryDelay
)

// rwIntentTTL is how long a waiting writer's intent lives on a node unless
// refreshed, with nodeTimeout the node timeout.
func rwIntentTTL(nodeTimeout time.Duration) time.Duration {
	return 2*nodeTimeout + rwIntentRefresh + rwIntentGrace
}

// checkMode validates a request's mode.
func checkMode(r AcquireRequest) error {
	switch {
	case r.Mode > ModeWrite:
		return invalidArg("mode", "must be read, write or the mutex (exclusive), got "+r.Mode.String())
	case r.Mode != ModeExclusive && r.Token != "":
		return invalidArg("mode", "a read-write lock does not take a caller's token")
	}
	return nil
}

// rwInit makes an acquire one of a read-write lock: its key (and queue, and
// wake-up channel) is the writer key; a writer that waits gets an intent id.
func (e *Engine) rwInit(o *acquireOp, mode LockMode) {
	o.mode = mode
	o.key = RWKey(o.key)
	if mode == ModeWrite && o.wait {
		b := e.rand[:8]
		e.env.Random(b)
		var id [16]byte
		for i, c := range b {
			id[2*i], id[2*i+1] = hexDigits[c>>4], hexDigits[c&0xf]
		}
		o.intentID = string(id[:])
	}
}

// rwArgs is rw_acquire.lua's ARGV[2] for an attempt of o. A waiting
// writer's attempt may leave its intent on a node (even one whose answer
// never comes back, or comes after the acquire ended): from its first
// attempt on, the end of the acquire removes the intent everywhere.
func (e *Engine) rwArgs(o *acquireOp, px int64) string {
	if o.mode == ModeRead {
		return "r " + strconv.FormatInt(px, 10)
	}
	if o.intentID == "" {
		return "w " + strconv.FormatInt(px, 10) + " 0 -"
	}
	o.intentLeft = true
	ittl := rwIntentTTL(e.timeout).Milliseconds()
	return "w " + strconv.FormatInt(px, 10) + " " + strconv.FormatInt(ittl, 10) + " " + o.intentID
}

// rwRefused notes a refusal of a writer's attempt on a node that left its
// intent there: the intent is then kept fresh while the writer waits.
func (o *acquireOp) rwRefused(r Reply) {
	if o.intentID != "" && r.Err == nil && r.Int == -3 {
		o.intentSeen = true
	}
}

// rwWaiting arms, after a refused attempt of a writer whose intent may be
// out, an attempt within rwIntentRefresh whatever else it waits for: that
// attempt refreshes the intent (or takes the lock). The timer shares the
// op's generation, so whichever of the two fires first starts the attempt
// and the other finds it stale.
func (e *Engine) rwWaiting(o *acquireOp) {
	if o.intentSeen && !o.finished && o.att == nil {
		e.timers.push(min(e.now+rwIntentRefresh, o.waitUntil), o, o.timerGen)
	}
}

// rwFinished removes a finished writer's intent from every node (also where
// the acquire succeeded: the nodes that refused it still have it), and
// wakes the readers it held back. Sent behind the acquire's last attempt on
// every connection, it runs after that attempt's script on each node.
func (e *Engine) rwFinished(o *acquireOp) {
	if !o.intentLeft {
		return
	}
	o.intentLeft = false
	id := e.releaseID(o.key)
	for _, n := range e.nodes {
		e.sendScript(n, discard{}, rwReleaseScript, o.key, "i:"+o.intentID, id)
	}
}

// heldFor is heldHere for a waiter: this engine's own locks that stand in
// its way. A reader is in no local reader's way.
func (e *Engine) heldFor(o *acquireOp) time.Duration {
	if o.mode != ModeRead {
		return e.heldHere(o.key)
	}
	var until time.Duration
	for _, l := range e.locks {
		if l.key == o.key && l.mode == ModeWrite && !l.released && l.lostErr == nil && l.validUntil > e.now {
			until = max(until, l.validUntil)
		}
	}
	return until
}

// rwShares reports that waiter next may go at once after o took the lock:
// both are readers.
func rwShares(o, next *acquireOp) bool { return o.mode == ModeRead && next.mode == ModeRead }

// releaseFor and extendFor are the release and extend scripts of a lock
// of the mode.
func releaseFor(m LockMode) *script {
	if m != ModeExclusive {
		return rwReleaseScript
	}
	return releaseScript
}

func extendFor(m LockMode) *script {
	if m != ModeExclusive {
		return rwExtendScript
	}
	return extendScript
}

// sendRWFence is sendFence for a read-write lock.
func (e *Engine) sendRWFence(f *fenceRound, i int) {
	e.sendScript(e.nodes[i], f, rwFenceScript, f.a.op.key, f.a.token, strconv.FormatInt(f.fence, 10))
}

// ReaderState is one reader of a read-write lock found by an inspection.
type ReaderState struct {
	Token string
	// Owner is the reader's owner label (Config.Owner of its engine).
	Owner string
	// Validity is how long it certainly stays held: the quorum-th longest
	// of its remaining ttls, less the round's time and the drift.
	Validity time.Duration
	// Nodes is how many nodes hold it.
	Nodes int
}

// rwInspect is what an inspection of a read-write lock learns of its
// readers: each node's unexpired reader tokens and their remaining ttls.
type rwInspect struct {
	ttls []map[string]time.Duration
}

func (e *Engine) rwInspectInit(op *inspectOp) *script {
	op.key = RWKey(op.key)
	op.rw = &rwInspect{ttls: make([]map[string]time.Duration, len(e.nodes))}
	return rwInspectScript
}

// note records node i's readers: {token, ms left, ...}.
func (r *rwInspect) note(i int, rs Reply) {
	m := map[string]time.Duration{}
	for j := 0; j+1 < len(rs.Elems); j += 2 {
		m[rs.Elems[j].Str] = time.Duration(rs.Elems[j+1].Int) * time.Millisecond
	}
	r.ttls[i] = m
}

// rwReaders returns the readers that hold the lock on a quorum, sorted by
// token, each with its validity as Inspection.Validity is computed.
func (e *Engine) rwReaders(op *inspectOp) []ReaderState {
	byToken := map[string][]time.Duration{}
	var tokens []string
	for _, m := range op.rw.ttls {
		for tok, left := range m {
			if byToken[tok] == nil {
				tokens = append(tokens, tok)
			}
			byToken[tok] = append(byToken[tok], left)
		}
	}
	sort.Slice(tokens, func(i, j int) bool { return tokens[i] < tokens[j] })
	var out []ReaderState
	for _, tok := range tokens {
		ttls := byToken[tok]
		if len(ttls) < e.quorum {
			continue
		}
		sort.Slice(ttls, func(i, j int) bool { return ttls[i] > ttls[j] })
		left := ttls[e.quorum-1]
		v := left - (e.now - op.start) - (time.Duration(float64(left)*e.drift) + ClockPrecision)
		if v > 0 {
			out = append(out, ReaderState{Token: tok, Owner: OwnerOf(tok), Validity: v, Nodes: len(ttls)})
		}
	}
	return out
}
