package engine

import (
	"strings"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// Wake on release across processes. A release (and the drop of a lost
// lock, and a failed attempt's cleanup) publishes its random id on the
// key's channel from inside the release script, unless it hands the key to
// the releaser's own next waiter (see handOff): then it publishes nothing,
// which would wake nobody, and only counts the channel's subscribers. Once
// an acquire of this engine waits for a key (an attempt of it was refused,
// or it queued behind another), the engine subscribes to that key's channel
// on every node, through one extra connection per node (closed again when
// no acquire waits); a message wakes the oldest local
// waiter at once. Pub/sub may drop messages (a connection lost, a node
// frozen): the oldest waiter's polling stays as the fallback.

// subscription is one key's channel, from the moment an acquire of this
// engine actually waits for the key (an attempt refused, or queued behind
// another acquire) until no acquire of this engine waits for it.
type subscription struct {
	lastID string // the release id last acted on: the others' copies are ignored
	// remote: another client waited for the key at this engine's last
	// release; run counts the local hand-offs since this engine last
	// yielded, the first at runStart (see handOff).
	remote   bool
	run      int
	runStart time.Duration
}

// releaseID returns a new release id for a release round of key, and
// remembers it so that the round's own messages do not wake anyone twice
// (the releaser wakes its local waiters itself).
func (e *Engine) releaseID(key string) string {
	b := e.rand[:8]
	e.env.Random(b)
	id := e.strs.alloc(16)
	for i, c := range b {
		id[2*i], id[2*i+1] = hexDigits[c>>4], hexDigits[c&0xf]
	}
	s := str(id)
	if sub := e.subs[key]; sub != nil {
		sub.lastID = s
	}
	return s
}

// subscribe makes sure every node's pub/sub connection listens to key's
// channel, for as long as acquires of this engine wait for key (unqueue
// ends it with the last of them). Acquires call it only once they wait:
// one whose first attempt wins never subscribes, so a wait budget costs
// nothing on the wire until it is used.
func (e *Engine) subscribe(key string) {
	if e.subs[key] == nil {
		e.subs[key] = &subscription{}
	}
	e.listen(key)
}

// listen (re)subscribes every node's pub/sub connection to key's channel
// where it is not subscribed: after a connection was lost, the next poll
// of a waiter comes here again.
func (e *Engine) listen(key string) {
	if e.closing || e.subs[key] == nil {
		return
	}
	for i := range e.nodes {
		e.listenOn(i, key, key, ReleasedChannel(key)) // spubsub.go
	}
}

// unsubscribe stops listening to key's channel: no acquire of this engine
// waits for key any more.
func (e *Engine) unsubscribe(key string) {
	if e.subs[key] == nil || len(e.multiWaiting) > 0 && e.multiNeeds(key) {
		return
	}
	delete(e.subs, key)
	e.unlistenAll(key, ReleasedChannel(key)) // spubsub.go

}

// subNode returns node i's pub/sub connection's state.
func (e *Engine) subNode(i int) *node {
	if e.subNodes[i] == nil {
		n := e.nodes[i]
		e.subNodes[i] = &node{idx: i, spec: n.spec, name: n.name, sub: true, chans: map[string]bool{}}
	}
	return e.subNodes[i]
}

// message handles a pub/sub push: a release of some key was announced.
func (e *Engine) message(r Reply) {
	if len(r.Elems) != 3 || r.Elems[0].Str != "message" && r.Elems[0].Str != "smessage" {
		return
	}
	if ekey, ok := strings.CutPrefix(r.Elems[1].Str, leaderPrefix); ok {
		e.leaderMessage(ekey) // election.go
		return
	}
	key, ok := strings.CutPrefix(r.Elems[1].Str, releasedPrefix)
	sub := e.subs[key]
	if !ok || sub == nil || r.Elems[2].Str == sub.lastID {
		return
	}
	sub.lastID = r.Elems[2].Str
	e.wake(key)
}

// handOff decides, as a release of key starts, whether the key goes
// straight to this engine's oldest local waiter (its SET pipelined behind
// the release). While other clients are known to wait too, it does so only
// for a short run of turns and then yields: the release then wakes the
// other clients' waiters, and ours retry only after yieldGrace, so that
// neither side keeps the key from the other. Either way the waiters' own
// attempts decide: this changes when they try, never what they may hold.
func (e *Engine) handOff(key string) bool {
	if len(e.waiters[key]) == 0 {
		return false
	}
	sub := e.subs[key]
	if sub == nil {
		return true
	}
	if sub.run == 0 {
		sub.runStart = e.now
	}
	if sub.remote && (sub.run >= maxLocalRun || e.now-sub.runStart >= maxLocalRunTime) {
		sub.run = 0
		for _, o := range e.waiters[key] {
			if o.att == nil {
				o.timerGen++
				e.timers.push(e.now+yieldGrace, o, o.timerGen)
			}
			break // the oldest only: the others sleep until woken
		}
		return false
	}
	sub.run++
	return true
}

// noteReceivers records, from a release's answer on node i, whether the
// release's message reached another client waiting for the key: receivers
// counts this engine's own subscription too, when it has one there.
func (e *Engine) noteReceivers(op *lockOp, i int, receivers int64) {
	key := op.lock.key
	if e.nodes[i].cl != nil {
		// A cluster node's release SPUBLISHes (or counts with PUBSUB
		// SHARDNUMSUB) on the shard of the key's slot: every subscriber
		// of the channel is there, so the count is exact (spubsub.go).
		if e.shardSubscribed(i, key) {
			receivers--
		}
	} else if s := e.subNodes[i]; s != nil && s.chans[key] && s.state == stReady {
		receivers--
	}
	if receivers > 0 {
		op.remote = true
	}
	if sub := e.subs[key]; sub != nil && (op.remote || !op.decided) {
		sub.remote = op.remote
	}
}
