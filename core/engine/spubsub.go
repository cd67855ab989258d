package engine

import (
	"strconv"
	"strings"
)

// Sharded pub/sub on Redis Cluster nodes (Redis 7.0+). On a cluster node
// the wake-ups use shard channels instead of plain ones:
//
//   - The scripts that announce (the releases, an election's fence) run
//     in a variant of their own that SPUBLISHes and counts with PUBSUB
//     SHARDNUMSUB (shardedScripts, swapped in by clusterSend). The channel
//     names are unchanged: "liblock:released:" + key has no brace, so its
//     hash tag is the key's, and the channel is in the key's slot, as a
//     script's SPUBLISH needs. A cluster forwards a shard message to the
//     slot's shard only, not to every node of the cluster, and SPUBLISH
//     (and SHARDNUMSUB) count the subscribers of that shard: the whole
//     audience of the channel, so the hand-off logic has an exact count
//     again (noteReceivers).
//   - A waiter's pub/sub connection is per shard: SSUBSCRIBE goes to the
//     primary that owns the channel's slot (the same slot map as the lock
//     commands), on a connection of its own (clusterState.subs).
//   - A -MOVED answer to SSUBSCRIBE notes the slot's new owner and marks
//     the map stale; a "sunsubscribe" push the server sends when a slot
//     migrates away does the same. Either way the channel is dropped from
//     the connection's set, and the waiter's next poll (which calls
//     subscribe again) subscribes on the new owner. The poll stays the
//     fallback whenever a message is lost.
//
// Standalone and Sentinel nodes keep plain PUBLISH and SUBSCRIBE, with the
// original scripts (their SHAs are unchanged).

// The sharded variants' SHA-1 sums (TestShardedScripts checks them).
const (
	ReleaseShardSHA      = "88e9f7e1b7b00c16a0469730de60a200b44d3fde"
	MultiReleaseShardSHA = "410e871f8c2f02d1340aa3ebaae2bbe70966936c"
	RWReleaseShardSHA    = "a4061a8fef970e546dd1701bd6a5ef9872b8c9bd"
	SemReleaseShardSHA   = "90baa8b271590d36727fb65aea9de07cb95d2e4d"
	ElectReleaseShardSHA = "060eb9cac78ae5f408cf3e99097abf433bcbdc57"
	ElectFenceShardSHA   = "188f52d19f7e6d5830fb0cd48c750d22b7aed3a3"
)

var (
	releaseShardScript      = &script{src: sharded(releaseSrc), sha: ReleaseShardSHA, bit: 1 << 14}
	multiReleaseShardScript = &script{src: sharded(multiReleaseSrc), sha: MultiReleaseShardSHA, bit: 1 << 15}
	rwReleaseShardScript    = &script{src: sharded(rwReleaseSrc), sha: RWReleaseShardSHA, bit: 1 << 16}
	semReleaseShardScript   = &script{src: sharded(semReleaseSrc), sha: SemReleaseShardSHA, bit: 1 << 17}
	electReleaseShardScript = &script{src: sharded(electReleaseSrc), sha: ElectReleaseShardSHA, bit: 1 << 18}
	electFenceShardScript   = &script{src: sharded(electFenceSrc), sha: ElectFenceShardSHA, bit: 1 << 19}

	// shardedScripts maps a script that announces on a plain channel to
	// its cluster variant.
	shardedScripts = map[*script]*script{
		releaseScript:      releaseShardScript,
		multiReleaseScript: multiReleaseShardScript,
		rwReleaseScript:    rwReleaseShardScript,
		semReleaseScript:   semReleaseShardScript,
		electReleaseScript: electReleaseShardScript,
		electFenceScript:   electFenceShardScript,
	}
)

// sharded turns a script's plain announcement into a shard one: the same
// text with SPUBLISH for PUBLISH and PUBSUB SHARDNUMSUB for PUBSUB NUMSUB,
// so that the two variants cannot drift apart.
func sharded(src string) string {
	src = strings.ReplaceAll(src, `"PUBLISH"`, `"SPUBLISH"`)
	return strings.ReplaceAll(src, `"PUBSUB", "NUMSUB"`, `"PUBSUB", "SHARDNUMSUB"`)
}

// clusterScript returns the variant of c's script a cluster node runs.
func clusterScript(c command) command {
	if v := shardedScripts[c.sc]; v != nil {
		c.sc = v
	}
	return c
}

// isShardSub reports whether s is a pub/sub connection to a cluster's
// shard (SSUBSCRIBE rather than SUBSCRIBE).
func (e *Engine) isShardSub(s *node) bool { return s.sub && e.nodes[s.idx].cl != nil }

// subConn returns the pub/sub connection of node i that hears the channel
// of key (a lock key or an election key), or nil when a cluster node's
// slot map does not name the slot's primary yet (or names one whose shard
// failed since): the waiter's next poll tries again, the map then loaded
// by its attempt.
func (e *Engine) subConn(i int, key string) *node {
	cl := e.nodes[i].cl
	if cl == nil {
		return e.subNode(i)
	}
	if cl.noShardSub {
		return nil
	}
	if !cl.loaded {
		if !cl.loading {
			cl.load(e)
		}
		return nil
	}
	p := cl.slots[KeySlot(key)]
	if p == 0 || cl.suspect[cl.addrs[p-1]] {
		return nil // no primary known, or its shard failed: after the next map
	}
	addr := cl.addrs[p-1]
	if cl.subs == nil {
		cl.subs = map[string]*node{}
	}
	s := cl.subs[addr]
	if s == nil {
		sp := cl.n.spec
		sp.Addr = addr
		s = &node{idx: i, spec: sp, name: cl.n.name + " (" + addr + ", pub/sub)", sub: true, chans: map[string]bool{}}
		cl.subs[addr] = s
		cl.subOrder = append(cl.subOrder, s)
	}
	return s
}

// subVerb is the (un)subscribe command for s: the sharded one on a
// cluster's shard.
func (e *Engine) subVerb(s *node, un bool) string {
	switch {
	case e.isShardSub(s) && un:
		return "SUNSUBSCRIBE"
	case e.isShardSub(s):
		return "SSUBSCRIBE"
	case un:
		return "UNSUBSCRIBE"
	}
	return "SUBSCRIBE"
}

// listenOn subscribes node i's connection for key's channel (filed under
// name in its chans), where it is not subscribed yet.
func (e *Engine) listenOn(i int, key, name, channel string) {
	s := e.subConn(i, key)
	if s == nil || s.chans[name] {
		return
	}
	s.chans[name] = true
	var h handler = discard{}
	if e.isShardSub(s) {
		h = shardSubStep{s: s, name: name}
	}
	e.send(s, h, command{kind: cmdArgs, args: []string{e.subVerb(s, false), channel}})
}

// unlistenAll drops the channel filed under name from every pub/sub
// connection; one left with nothing to hear is closed.
func (e *Engine) unlistenAll(name, channel string) {
	e.eachSub(func(s *node) {
		if !s.chans[name] {
			return
		}
		delete(s.chans, name)
		if len(s.chans) == 0 {
			// Nothing left to listen for: the connection goes (a client
			// that no longer waits holds no pub/sub connection).
			s.fail(e, errorString("pub/sub connection no longer needed"))
			return
		}
		e.send(s, discard{}, command{kind: cmdArgs, args: []string{e.subVerb(s, true), channel}})
	})
}

// eachSub calls f for every pub/sub connection: the standalone and
// Sentinel nodes' one each, and the cluster nodes' one per shard.
func (e *Engine) eachSub(f func(s *node)) {
	for _, s := range e.subNodes {
		if s != nil {
			f(s)
		}
	}
	for _, n := range e.nodes {
		if n.cl == nil {
			continue
		}
		for _, s := range n.cl.subOrder {
			f(s)
		}
	}
}

// shardSubStep receives a shard's answer to SSUBSCRIBE: a -MOVED (the
// slot is another shard's now) or any other error leaves the channel
// unsubscribed here, for the next poll to subscribe where the map then
// says.
type shardSubStep struct {
	s    *node
	name string
}

func (h shardSubStep) reply(e *Engine, _ int, r Reply) {
	if r.Err == nil {
		return
	}
	delete(h.s.chans, h.name)
	if re, ok := r.Err.(RedisError); ok && strings.Contains(strings.ToLower(string(re)), "unknown command") {
		// A cluster before Redis 7.0: no sharded pub/sub. Its waiters
		// poll, without a connection opened and refused at every poll.
		e.nodes[h.s.idx].cl.noShardSub = true
	}
	e.slotMoved(h.s, r)
	e.subIdle(h.s)
}

// subIdle closes a shard's pub/sub connection left with no channel (a
// slot moved away): the channels now live on other shards' connections.
func (e *Engine) subIdle(s *node) {
	if len(s.chans) == 0 && s.conn != 0 {
		s.fail(e, errorString("pub/sub connection no longer needed"))
	}
}

// slotMoved makes the slot map of s's cluster stale after a shard said
// a slot left it: a -MOVED r (which also names the slot's new owner, noted
// at once), or a "sunsubscribe" push (r zero). Other errors change nothing.
func (e *Engine) slotMoved(s *node, r Reply) {
	cl := e.nodes[s.idx].cl
	if cl == nil {
		return
	}
	if r.Err == nil {
		cl.stale = true // a push: the slot left this shard
		return
	}
	re, ok := r.Err.(RedisError)
	if !ok {
		return
	}
	f := strings.Fields(string(re))
	if len(f) != 3 || f[0] != "MOVED" {
		return // another error (a server without sharded pub/sub): the map is fine
	}
	cl.stale = true
	if cl.slots == nil {
		return
	}
	slot, err := strconv.Atoi(f[1])
	if err != nil || slot < 0 || slot >= clusterSlots {
		return
	}
	addr := f[2]
	if strings.HasPrefix(addr, ":") {
		addr = joinHostPort(hostOf(s.spec.Addr), addr[1:])
	}
	k := indexOf(cl.addrs, addr)
	if k < 0 {
		cl.addrs = append(cl.addrs, addr)
		k = len(cl.addrs) - 1
	}
	cl.slots[slot] = uint16(k + 1)
}

// push handles what a pub/sub connection receives that answers no request
// of its own: a message, or a shard's "sunsubscribe" for a slot that
// migrated away (told apart from the answer to our own SUNSUBSCRIBE by the
// request it would answer). It reports whether r was one.
func (e *Engine) push(s *node, r Reply) bool {
	if len(r.Elems) == 0 {
		return false
	}
	switch r.Elems[0].Str {
	case "message", "smessage":
		e.message(r)
		return true
	case "sunsubscribe":
		if len(r.Elems) < 2 {
			return false
		}
		ch := r.Elems[1].Str
		if q := s.inflight.items(); len(q) > 0 && len(q[0].cmd.args) == 2 &&
			q[0].cmd.args[0] == "SUNSUBSCRIBE" && q[0].cmd.args[1] == ch {
			return false // the answer to our own SUNSUBSCRIBE
		}
		if key, ok := strings.CutPrefix(ch, releasedPrefix); ok {
			delete(s.chans, key)
		} else if ekey, ok := strings.CutPrefix(ch, leaderPrefix); ok {
			delete(s.chans, leaderChan(ekey))
		}
		e.slotMoved(s, Reply{})
		e.subIdle(s)
		return true
	}
	return false
}

// shardSubscribed reports whether this engine's own subscription to key's
// channel on cluster node i is live (it counts among the subscribers a
// release's SPUBLISH reports).
func (e *Engine) shardSubscribed(i int, key string) bool {
	for _, s := range e.nodes[i].cl.subOrder {
		if s.chans[key] && s.state == stReady {
			return true
		}
	}
	return false
}

// The cluster variants grant what their originals grant, for the replica
// check (wait.go): the releases delete, an election's fence as fence.lua.
func init() {
	for _, v := range []*script{releaseShardScript, multiReleaseShardScript, rwReleaseShardScript,
		semReleaseShardScript, electReleaseShardScript} {
		deletes[v] = true
	}
	grantPositive[electFenceShardScript] = true
}
