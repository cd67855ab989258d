package engine

// Multi-resource locks: all of k resources or none.
//
// Each resource keeps the key its mutex has (the prefix + the resource), so
// a multi-lock on {a, b} excludes a mutex on a and every other multi-lock
// that names a or b. An attempt is one round of one script per node over
// the k keys (multi_acquire.lua): when any of them exists the node refuses
// and names the first one held, and changes nothing; otherwise it sets them
// all with the attempt's token and ttl. A node therefore never holds a part
// of a set, and two clients asking for overlapping sets in any order cannot
// deadlock: neither ever waits while holding anything, and an attempt that
// a quorum did not grant is cleaned up and retried with the mutex's
// backoff, exactly as a mutex attempt is.
//
// From there the lock is a mutex whose "key" is the set: validity, quorum,
// cleanup, release, extension, loss and auto-extension are the mutex's,
// each round one script per node over the k keys. A node counts for a
// release or an extension only when every key of the set holds the token
// there (multi_extend.lua extends nothing otherwise): a node where one key
// expired may have given that key to someone else, so it no longer holds
// the set, and extending the others would only keep a part of it alive.
// Safety is then the mutex's argument applied to every key at once: a
// quorum set all k keys within the validity, so any other lock on any of
// them needs a quorum of its own, and the two quorums share a node where
// one of the scripts must have found the other's key (see README.md,
// "Multi-resource locks").
//
// A release deletes every key still holding the token and publishes each
// deleted key's release channel, so waiters on any of the resources wake;
// an acquire waiting for a set listens on every key's channel and wakes on
// a release of any of them. Waiting multi-acquires do not join a key's
// local queue (they span several): each polls with the backoff until a
// release wakes it.
//
// Fencing: one fence for the set, greater than every earlier fence on each
// of its resources. The acquire script answers the highest counter of the
// set's keys on the node; the fence is the highest among a quorum + 1, and
// a second round (multi_fence.lua) writes it to every counter of the set,
// only while all the keys hold the token and only upwards. A later lock on
// any of the resources reads that counter on a node its quorum shares with
// ours (fence.go's argument, per key).
//
// A caller's token (re-entry, hand-over) is refused with a multi-lock: a
// node holding some of the keys with the token could not tell a re-entry
// of the whole set from a partial leftover.

import (
	"strconv"
	"strings"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// The scripts' SHA-1 sums (TestScriptHashes checks them).
const (
	// MultiAcquireSHA: all the set's keys or none; -i names the first key
	// held, else the highest fence counter of the set (0 unless fenced).
	MultiAcquireSHA = "8e72be78cba2d9c2aa8ae10d6634798a38936dc3"
	// MultiReleaseSHA: delete every key holding the token, publish each
	// one's release; 1 when all of them held it.
	MultiReleaseSHA = "f4ce32b5c1123a201de22f7585d1fe7633aecef7"
	// MultiExtendSHA: raise every key's expiry while all hold the token.
	MultiExtendSHA = "131214c5ae15ef4f76aaa795fca50d84eae4a1c6"
	// MultiFenceSHA: raise every counter of the set to the fence while all
	// the keys hold the token (-1: one counter is already higher).
	MultiFenceSHA = "50d1d0086814b4a52d832b0ea6278b62c239bd2b"
)

// The multi-lock's scripts take high bits of node.loaded, away from the
// bits the other primitives take from the bottom.
var (
	multiAcquireScript = &script{src: multiAcquireSrc, sha: MultiAcquireSHA, bit: 1 << 20}
	multiReleaseScript = &script{src: multiReleaseSrc, sha: MultiReleaseSHA, bit: 1 << 21}
	multiExtendScript  = &script{src: multiExtendSrc, sha: MultiExtendSHA, bit: 1 << 22}
	multiFenceScript   = &script{src: multiFenceSrc, sha: MultiFenceSHA, bit: 1 << 23}
)

// CheckResources validates a multi-resource lock's set: resource and then
// more, as AcquireRequest.Resource and Resources. Errors name the set's
// elements as "resources[i]", resources[0] being resource: the index a
// caller who passed the whole set as one list sees.
func CheckResources(resource string, more []string) error {
	if n := 1 + len(more); n > MaxResources {
		return outOfRange("resources", "at most "+strconv.Itoa(MaxResources)+" resources in one lock, got "+strconv.Itoa(n), false, int64(n), 1, MaxResources, "count")
	}
	seen := make(map[string]int, 1+len(more))
	for i := range 1 + len(more) {
		r := resource
		if i > 0 {
			r = more[i-1]
		}
		if err := CheckResource(r); err != nil {
			return renamed(indexed("resources", i), err)
		}
		if j, dup := seen[r]; dup {
			return invalidArg(indexed("resources", i), "duplicates "+indexed("resources", j)+" ("+strconv.Quote(r)+")")
		}
		seen[r] = i
	}
	return nil
}

// validateMulti checks what a multi-resource request may not ask for.
func (r AcquireRequest) validateMulti() error {
	if err := CheckResources(r.Resource, r.Resources); err != nil {
		return err
	}
	switch {
	case r.Token != "":
		return invalidArg("token", "not supported with several resources: a multi-resource lock cannot be re-entered or handed over by token")
	case r.Permits != 0:
		return invalidArg("permits", "not with several resources: a semaphore's permit is of one resource, not of a multi-resource lock's set")
	case r.Mode != ModeExclusive:
		return invalidArg("mode", "not with several resources: a read-write lock is of one resource, not of a multi-resource lock's set")
	}
	return nil
}

// initMulti sets up a multi-resource acquire: the set's resources, keys
// and (fenced) counters, and the label its errors name it by.
func (e *Engine) initMulti(o *acquireOp, r AcquireRequest) {
	o.resources = append(make([]string, 0, 1+len(r.Resources)), r.Resource)
	o.resources = append(o.resources, r.Resources...)
	o.keys = make([]string, len(o.resources))
	for i, res := range o.resources {
		o.keys[i] = e.keyOf(res)
	}
	if o.fence {
		o.fenceKeys = make([]string, len(o.keys))
		for i, k := range o.keys {
			o.fenceKeys[i] = FenceKey(k)
		}
	}
	o.resource = strings.Join(o.resources, ", ")
	if o.wait {
		e.multiWaiting = append(e.multiWaiting, o)
	}
}

// sendMulti runs sc on node n over keys (then more keys) with args.
func (e *Engine) sendMulti(n *node, h handler, sc *script, keys, more []string, args ...string) {
	m := make([]string, 0, len(keys)+len(more)+len(args))
	m = append(append(append(m, keys...), more...), args...)
	e.send(n, h, command{kind: cmdEvalSHA, sc: sc, multi: m, nkeys: len(keys) + len(more)})
}

// appendMulti encodes a script over any number of keys.
func (c *command) appendMulti(b []byte) []byte {
	b = append(b, '*')
	b = appendLen(b, 3+len(c.multi))
	b = append(b, '\r', '\n')
	if c.kind == cmdEvalSHA {
		b = append(b, "$7\r\nEVALSHA\r\n"...)
		b = appendBulk(b, c.sc.sha)
	} else {
		b = append(b, "$4\r\nEVAL\r\n"...)
		b = appendBulk(b, c.sc.src)
	}
	var num [20]byte
	b = appendBulkBytes(b, strconv.AppendInt(num[:0], int64(c.nkeys), 10))
	for _, s := range c.multi {
		b = appendBulk(b, s)
	}
	return b
}

// sendAcquireMulti is an attempt's script to node n.
func (e *Engine) sendAcquireMulti(n *node, a *attempt) {
	o := a.op
	e.sendMulti(n, a, multiAcquireScript, o.keys, o.fenceKeys, a.token, strconv.FormatInt(o.ttl.Milliseconds(), 10), strconv.Itoa(len(o.keys)))
}

// multiRefused notes which resource a refusing node found held (the
// script's -i), for the error.
func (a *attempt) multiRefused(v int64) {
	if i := int(-v) - 1; a.heldBy < 0 && i >= 0 && i < len(a.op.resources) {
		a.heldBy = i
	}
}

// multiNotAcquired is the error of an attempt a quorum did not grant.
func (e *Engine) multiNotAcquired(a *attempt, detail string) error {
	if a.heldBy >= 0 {
		detail = "resource " + strconv.Quote(a.op.resources[a.heldBy]) + " is held; " + detail
	}
	return errNotAcquired(a.op.resource, detail)
}

// releaseMultiKeys deletes token from keys wherever it still holds them
// (a failed attempt's cleanup, a lost lock's drop), on every node but
// those skip says to leave out.
func (e *Engine) releaseMultiKeys(keys []string, token string, skip []uint8) {
	id := e.releaseIDKeys(keys)
	for i, n := range e.nodes {
		if skip == nil || skip[i] != refused {
			e.sendMulti(n, discard{}, multiReleaseScript, keys, nil, token, id)
		}
	}
}

// releaseIDKeys is releaseID for a set: one id, published on every key's
// channel, which this engine's own subscriptions then ignore.
func (e *Engine) releaseIDKeys(keys []string) string {
	id := e.releaseID(keys[0])
	for _, k := range keys[1:] {
		if sub := e.subs[k]; sub != nil {
			sub.lastID = id
		}
	}
	return id
}

// releaseMulti is a multi-lock's release round: one script per node, then
// the local waiters of every key are woken (their attempts go right behind
// the release on every connection, as a mutex's hand-off does).
func (e *Engine) releaseMulti(op *lockOp) {
	l := op.lock
	id := e.releaseIDKeys(l.keys)
	for _, n := range e.nodes {
		e.sendMulti(n, op, multiReleaseScript, l.keys, nil, l.token, id)
	}
	for _, k := range l.keys {
		e.wake(k)
	}
}

// extendMulti is a multi-lock's extension round.
func (e *Engine) extendMulti(op *lockOp, px string) {
	l := op.lock
	for _, n := range e.nodes {
		e.sendMulti(n, op, multiExtendScript, l.keys, nil, l.token, px)
	}
}

// sendFenceMulti is the fence round's script to node i.
func (e *Engine) sendFenceMulti(f *fenceRound, i int) {
	o := f.a.op
	e.sendMulti(e.nodes[i], f, multiFenceScript, o.keys, o.fenceKeys, f.a.token, strconv.FormatInt(f.fence, 10))
}

// holds reports whether the lock is on key (one of a multi-lock's keys).
func (l *lockState) holds(key string) bool {
	if l.keys == nil {
		return l.key == key
	}
	for _, k := range l.keys {
		if k == key {
			return true
		}
	}
	return false
}

// wakeKeys wakes the local waiters of every key of the lock.
func (e *Engine) wakeKeys(l *lockState) {
	if l.keys == nil {
		e.wake(l.key)
		return
	}
	for _, k := range l.keys {
		e.wake(k)
	}
}

// multiRetry is what a waiting multi-acquire does after a failed attempt:
// it listens on every key's channel, retries at once when a release came
// during the attempt, and otherwise polls with the backoff — no earlier
// than the end of a lock this engine holds on one of the keys, whose end
// wakes it anyway.
func (e *Engine) multiRetry(o *acquireOp) {
	for _, k := range o.keys {
		e.subscribe(k)
	}
	if o.woken {
		e.startAttempt(o)
		return
	}
	var until time.Duration
	for _, k := range o.keys {
		until = max(until, e.heldHere(k))
	}
	if until > 0 {
		o.timerGen++
		e.timers.push(min(max(until, e.now+o.delay/2), o.waitUntil), o, o.timerGen)
		return
	}
	e.backoff(o)
}

// wakeMulti wakes the oldest waiting multi-acquire on key not yet woken.
func (e *Engine) wakeMulti(key string) {
	for _, o := range e.multiWaiting {
		if !o.woken && !o.finished && o.hasKey(key) {
			e.wakeOne(o)
			return
		}
	}
}

func (o *acquireOp) hasKey(key string) bool {
	for _, k := range o.keys {
		if k == key {
			return true
		}
	}
	return false
}

// multiNeeds reports whether a waiting multi-acquire listens on key.
func (e *Engine) multiNeeds(key string) bool {
	for _, o := range e.multiWaiting {
		if o.hasKey(key) {
			return true
		}
	}
	return false
}

// multiDone forgets a multi-acquire that ended, and the channels only it
// listened on.
func (e *Engine) multiDone(o *acquireOp) {
	for i, x := range e.multiWaiting {
		if x == o {
			e.multiWaiting = append(e.multiWaiting[:i:i], e.multiWaiting[i+1:]...)
			break
		}
	}
	for _, k := range o.keys {
		if len(e.waiters[k]) == 0 {
			e.unsubscribe(k)
		}
	}
}
