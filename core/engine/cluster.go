package engine

import (
	"strconv"
	"strings"
)

// Redis Cluster nodes. A node whose spec has Cluster set is a whole Redis
// Cluster: one vote of the quorum, whatever its number of shards. The
// engine keeps its slot map and a connection per shard primary it uses:
//
//   - The map comes from CLUSTER SHARDS (CLUSTER SLOTS on a server that
//     does not know it), asked of the known primaries and then the seeds,
//     in turn, all within one node timeout. Requests that need the map
//     (none yet, or a slot it names no primary for) wait for it in the
//     cluster node's queue; a map that cannot be had within the node
//     timeout fails them (the node's failure, as for a standalone node
//     that does not answer). A stale map (after a -MOVED or a shard's
//     failure) keeps routing while a new one is asked for.
//   - Every command goes to the primary of its key's slot (CRC16 of the
//     key, or of its hash tag), on a connection of its own (a shard node:
//     a node struct with the cluster node's index and the shard's
//     address). A slot the map gives no primary waits for a fresh map.
//     A replica never gets a lock command: the map's primaries only.
//   - -MOVED slot addr: the map is stale: the slot is noted as addr's,
//     the map is asked again at the next use, and the command is sent to
//     addr now. -ASK slot addr: ASKING then the command, on addr's
//     connection, the map unchanged. Both within the node timeout of the
//     command's first write (a redirected command keeps that deadline),
//     and at most maxRedirects times.
//   - A shard connection that fails (or times out) fails what it carried,
//     as a standalone node's would, and makes the map stale. A -READONLY,
//     -LOADING, -MASTERDOWN or -CLUSTERDOWN reply (a demoted primary, one
//     restarted empty, a cluster that lost its quorum) fails that request
//     and closes the shard connection; the map is asked again.
//
// Scripts are loaded per shard connection (node.loaded), so EVALSHA and
// the NOSCRIPT logic work per shard as on a standalone node. Wake-ups use
// sharded pub/sub: SPUBLISH from the scripts' cluster variants, SSUBSCRIBE
// on a pub/sub connection to the shard of the channel's slot (spubsub.go).
// The keys of one resource share a hash tag on an
// engine with a cluster node (keyOf), so that every script's keys are in
// one slot.
type clusterState struct {
	n *node // the cluster node
	// slots maps a slot to 1 + its primary's index in addrs, 0 when the
	// map names none.
	slots  []uint16
	addrs  []string
	shards map[string]*node // connections by address
	order  []*node          // the same, in the order they were made
	loaded bool             // a map was loaded
	stale  bool             // a new map is wanted
	// suspect: shards whose connection failed since the last map: their
	// slots wait for the new map, and they are asked for it last.
	suspect map[string]bool
	// The map being loaded: loading, its candidates (known primaries, then
	// seeds) and which was asked, why each failed; gen tells its timer.
	loading bool
	cands   []string
	tried   int
	next    int
	causes  []string
	gen     uint64
	// subs: the pub/sub connections, one per shard a waited-on channel
	// lives on (spubsub.go), by address and in the order made.
	subs       map[string]*node
	subOrder   []*node
	noShardSub bool // SSUBSCRIBE is an unknown command here (before 7.0): poll only
	// ids: the primaries' node ids of the last map (their addresses when
	// the map gave no ids), by which two cluster nodes of one engine are
	// found to be one cluster (dupOf).
	ids []string
	// dup: this node and another of the engine are one Redis Cluster
	// (listed under two seed lists): every request on it fails with dup,
	// for the engine's life, so that one cluster never gives two votes.
	dup error
}

// maxRedirects bounds the MOVED and ASK redirects one command follows.
const maxRedirects = 5

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// clusterName is a cluster node's name in errors: its first seed.
func clusterName(n Node) string { return "cluster via " + n.Seeds[0] }

// clusterID identifies a cluster for the duplicate check: its seeds.
func clusterID(n Node) string { return "cluster " + strings.Join(n.Seeds, ",") }

// crc16 is the CRC16-CCITT (XModem) Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// hashTag returns the part of key a cluster hashes: the text between the
// first '{' and the first '}' after it when that is not empty, else the
// whole key.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// KeySlot returns the Redis Cluster hash slot of key.
func KeySlot(key string) int { return int(crc16(hashTag(key)) % clusterSlots) }

// keyOf returns the base key of a resource: the prefix and the resource.
// On an engine with a cluster node, a base key without a hash tag is
// wrapped in one ("{" + prefix + resource + "}"), so that every key
// derived from it by appending (the fence counter, the read-write lock's
// keys, a semaphore's slots, an election's key) hashes to the slot of the
// resource: the scripts touching several of them run on one shard. A
// resource with its own tag keeps it (several resources with one tag share
// a slot, as a multi-resource lock on a cluster needs). The CLI's inspect
// and release go through the engine, so they derive the same keys.
func (e *Engine) keyOf(resource string) string {
	k := e.prefix + resource
	if !e.tagKeys || hashTag(k) != k {
		return k
	}
	return "{" + k + "}"
}

// checkOneSlot refuses a multi-resource set whose keys are in several
// slots of an engine with a cluster node, naming the resources: one
// script cannot take them all on one shard, and splitting the set per slot
// would lose its all-or-nothing on a node (a shard granting its part while
// another refuses would need a cleanup that a crash can skip).
func (e *Engine) checkOneSlot(r AcquireRequest) error {
	if !e.tagKeys || len(r.Resources) == 0 {
		return nil
	}
	first := KeySlot(e.keyOf(r.Resource))
	for _, res := range r.Resources {
		if s := KeySlot(e.keyOf(res)); s != first {
			return invalidArg("resources", "on a Redis Cluster node a multi-resource lock's keys must hash to one slot: "+
				strconv.Quote(r.Resource)+" (slot "+strconv.Itoa(first)+") and "+strconv.Quote(res)+" (slot "+strconv.Itoa(s)+
				") do not; give the resources one hash tag, e.g. {orders}a and {orders}b")
		}
	}
	return nil
}

// isCluster reports whether the node is a Redis Cluster.
func (n *node) isCluster() bool { return n.cl != nil }

// newClusterState sets up a cluster node.
func newClusterState(n *node) *clusterState {
	return &clusterState{n: n, shards: map[string]*node{}, suspect: map[string]bool{}}
}

// commandKey is the key a command is routed by.
func commandKey(c command) string {
	if c.key == "" && c.nkeys > 0 {
		return c.multi[0]
	}
	return c.key
}

// clusterSend routes a command to the primary of its key's slot, or queues
// it until the map is loaded.
func (e *Engine) clusterSend(n *node, h handler, c command) {
	cl := n.cl
	c = clusterScript(c) // the sharded pub/sub variant (spubsub.go)
	if cl.stale && !cl.loading {
		cl.load(e)
	}
	if cl.loaded && cl.dup == nil {
		if e.firstMapsPending(cl) {
			// Held until the engine's other clusters have their first
			// maps (flushHeld): one listed twice is found before it votes.
			r := e.newRequest(n, h, c)
			r.sent = e.now
			n.queue = append(n.queue, r)
			return
		}
		// A stale map keeps routing while a new one is asked for (a
		// -MOVED already corrected its slot), except to a shard that
		// failed since: a frozen or dead shard delays its own slots only,
		// not every slot behind a map load that meets it.
		if p := cl.slots[KeySlot(commandKey(c))]; p != 0 && !cl.suspect[cl.addrs[p-1]] {
			e.send(cl.shard(e, cl.addrs[p-1]), h, c)
			return
		}
	}
	r := e.newRequest(n, h, c)
	r.sent = e.now
	n.queue = append(n.queue, r)
	if !cl.loading {
		cl.load(e)
	}
}

// firstMapsPending reports whether another cluster node of the engine is
// loading its first slot map: until it has, cl's requests wait (at most
// that load's node timeout), so that a cluster listed twice is found
// (dupOf) before either copy sends a lock command.
func (e *Engine) firstMapsPending(cl *clusterState) bool {
	for _, o := range e.nodes {
		if o.cl != nil && o.cl != cl && o.cl.loading && !o.cl.loaded {
			return true
		}
	}
	return false
}

// flushHeld sends the requests cluster nodes held for firstMapsPending,
// once no first map is pending; called when a map load ends either way.
func (e *Engine) flushHeld() {
	for _, o := range e.nodes {
		if o.cl != nil && o.cl.loaded && !o.cl.loading && len(o.queue) > 0 && !e.firstMapsPending(o.cl) {
			o.cl.flush(e)
		}
	}
}

// flush routes the requests queued for the map (or fails them on a
// cluster listed twice).
func (cl *clusterState) flush(e *Engine) {
	if cl.dup != nil {
		cl.n.fail(e, cl.dup)
		return
	}
	q := cl.n.queue
	cl.n.queue = nil
	for _, req := range q {
		if p := cl.slots[KeySlot(commandKey(req.cmd))]; p != 0 {
			e.send(cl.shard(e, cl.addrs[p-1]), req.h, req.cmd)
		} else {
			req.h.reply(e, cl.n.idx, Reply{Err: errorString("cluster: no primary serves slot " + strconv.Itoa(KeySlot(commandKey(req.cmd))))})
		}
		e.recycle(req)
	}
}

// shard returns the connection to addr, made on first use.
func (cl *clusterState) shard(e *Engine, addr string) *node {
	s := cl.shards[addr]
	if s == nil {
		sp := cl.n.spec
		sp.Addr = addr
		s = &node{idx: cl.n.idx, spec: sp, name: cl.n.name + " (" + addr + ")", wait: cl.n.wait, waitDefault: cl.n.waitDefault, parent: cl.n}
		cl.shards[addr] = s
		cl.order = append(cl.order, s)
	}
	return s
}

// load starts asking for the slot map, bounded by one node timeout.
func (cl *clusterState) load(e *Engine) {
	cl.loading, cl.tried, cl.causes = true, 0, cl.causes[:0]
	cl.cands = cl.cands[:0]
	seen := map[string]bool{}
	all := append(append([]string(nil), cl.addrs...), cl.n.spec.Seeds...)
	for _, last := range []bool{false, true} {
		for _, a := range all {
			if !seen[a] && cl.suspect[a] == last {
				seen[a] = true
				cl.cands = append(cl.cands, a)
			}
		}
	}
	cl.gen++
	e.timers.push(e.now+e.timeout, cl, cl.gen)
	cl.ask(e, false)
}

// ask sends the map question to the next candidate.
func (cl *clusterState) ask(e *Engine, slots bool) {
	addr := cl.cands[cl.next%len(cl.cands)]
	args := []string{"CLUSTER", "SHARDS"}
	if slots {
		args = []string{"CLUSTER", "SLOTS"}
	}
	e.send(cl.shard(e, addr), clusterMapStep{cl: cl, gen: cl.gen, addr: addr, slots: slots}, command{kind: cmdArgs, args: args})
}

func (cl *clusterState) live(gen uint64) bool { return gen == cl.gen && cl.loading }

// fire ends a load that did not finish within the node timeout.
func (cl *clusterState) fire(e *Engine, gen uint64) {
	if cl.live(gen) {
		cl.next++ // the next load starts with another candidate
		cl.loadFailed(e, "no slot map within the node timeout ("+e.timeout.String()+")")
	}
}

// loadFailed fails the requests waiting for the map.
func (cl *clusterState) loadFailed(e *Engine, why string) {
	cl.loading = false
	cl.gen++
	msg := "cluster: " + why
	if len(cl.causes) > 0 {
		msg += " (" + strings.Join(cl.causes, "; ") + ")"
	}
	cl.n.fail(e, errorString(msg))
	e.flushHeld()
}

// clusterMapStep receives a candidate's slot map.
type clusterMapStep struct {
	cl    *clusterState
	gen   uint64
	addr  string
	slots bool // the answer to CLUSTER SLOTS
}

func (h clusterMapStep) reply(e *Engine, _ int, r Reply) {
	cl := h.cl
	if !cl.live(h.gen) {
		return
	}
	if r.Err != nil && !h.slots && strings.Contains(strings.ToLower(r.Err.Error()), "unknown") {
		cl.ask(e, true) // before 7.0: CLUSTER SLOTS
		return
	}
	var addrs []string
	var slots []uint16
	var err error
	if r.Err == nil {
		if h.slots {
			addrs, slots, err = parseClusterSlots(r, h.addr, cl.n.spec.TLS)
		} else {
			addrs, slots, err = parseClusterShards(r, h.addr, cl.n.spec.TLS)
		}
	} else {
		err = r.Err
	}
	if err != nil {
		cl.causes = append(cl.causes, h.addr+": "+scrub(err.Error(), cl.n.spec.Password))
		cl.tried++
		cl.next++
		if cl.tried >= len(cl.cands) {
			cl.loadFailed(e, "no seed or shard gave the slot map")
			return
		}
		cl.ask(e, false)
		return
	}
	cl.loading, cl.loaded, cl.stale = false, true, false
	cl.gen++
	cl.next = 0 // the next load asks the primaries first again
	clear(cl.suspect)
	cl.addrs, cl.slots = addrs, slots
	cl.ids = primaryIDs(r, h.slots, addrs)
	if cl.dup == nil {
		cl.dupOf(e)
	}
	// Connections to what is no longer a primary (a seed that is a
	// replica, a demoted primary) go once idle: lock commands never go to
	// them.
	for a, s := range cl.shards {
		if !contains(addrs, a) && s.inflight.len() == 0 && len(s.queue) == 0 {
			s.drop(e)
			delete(cl.shards, a)
		}
	}
	kept := cl.order[:0]
	for _, s := range cl.order {
		if cl.shards[s.spec.Addr] == s {
			kept = append(kept, s)
		}
	}
	clear(cl.order[len(kept):])
	cl.order = kept
	// A dup node's requests fail here (a send to it queues and asks the
	// map again, so each call fails through here, never at once inside
	// the call that sent it); the others' wait for any first map still
	// loading.
	if cl.dup != nil || !e.firstMapsPending(cl) {
		cl.flush(e)
	}
	e.flushHeld()
}

// primaryIDs returns the node ids of the map's primaries (CLUSTER SHARDS:
// each online master's "id"; CLUSTER SLOTS: the third field of each
// range's primary), or addrs when the map gave none.
func primaryIDs(r Reply, slots bool, addrs []string) []string {
	var ids []string
	for _, x := range r.Elems {
		if slots {
			if len(x.Elems) >= 3 && len(x.Elems[2].Elems) >= 3 && x.Elems[2].Elems[2].Str != "" {
				ids = append(ids, x.Elems[2].Elems[2].Str)
			}
			continue
		}
		nodes, _ := field(x.Elems, "nodes")
		for _, nd := range nodes.Elems {
			role, _ := field(nd.Elems, "role")
			id, _ := field(nd.Elems, "id")
			if role.Str == "master" && id.Str != "" {
				ids = append(ids, id.Str)
			}
		}
	}
	if len(ids) == 0 {
		return addrs
	}
	return ids
}

// dupOf finds another cluster node of the engine whose last map shares a
// primary with this one's: then both are one Redis Cluster listed twice
// (two seed lists; identical ones are refused at creation), which would
// count one cluster's grant as two votes of the quorum. Both nodes fail
// every request from then on, naming each other: the caller learns to
// list the cluster once, and the quorum never counts it twice. A node
// voted at most once before this: the second of the two maps to load is
// the one that finds the first.
func (cl *clusterState) dupOf(e *Engine) {
	for _, o := range e.nodes {
		if o == cl.n || o.cl == nil || !o.cl.loaded {
			continue
		}
		for _, id := range cl.ids {
			if !contains(o.cl.ids, id) {
				continue
			}
			a, b := o.idx, cl.n.idx
			if a > b {
				a, b = b, a
			}
			err := errorString("cluster: nodes[" + strconv.Itoa(a) + "] and nodes[" + strconv.Itoa(b) +
				"] are one Redis Cluster (both slot maps name primary " + id + "): list each cluster once")
			cl.dup = err
			if o.cl.dup == nil {
				o.cl.dup = err
				o.cl.n.fail(e, err)
			}
			return
		}
	}
}

func contains(a []string, s string) bool {
	for _, x := range a {
		if x == s {
			return true
		}
	}
	return false
}

// field returns the value after name in a RESP2 flat map.
func field(m []Reply, name string) (Reply, bool) {
	for i := 0; i+1 < len(m); i += 2 {
		if m[i].Str == name {
			return m[i+1], true
		}
	}
	return Reply{}, false
}

// parseClusterShards reads CLUSTER SHARDS: each shard's slot ranges and
// its online primary (ip or endpoint, port or tls-port).
func parseClusterShards(r Reply, asked string, tls bool) ([]string, []uint16, error) {
	slots := make([]uint16, clusterSlots)
	var addrs []string
	for _, sh := range r.Elems {
		ranges, _ := field(sh.Elems, "slots")
		nodes, _ := field(sh.Elems, "nodes")
		addr := ""
		for _, nd := range nodes.Elems {
			role, _ := field(nd.Elems, "role")
			health, _ := field(nd.Elems, "health")
			if role.Str != "master" || health.Str != "online" {
				continue
			}
			host, _ := field(nd.Elems, "endpoint")
			if host.Str == "" || host.Str == "?" {
				host, _ = field(nd.Elems, "ip")
			}
			if host.Str == "" {
				// A node that never met another does not know its own
				// address: the one it was asked on.
				host.Str = hostOf(asked)
			}
			port, _ := field(nd.Elems, "port")
			if tp, ok := field(nd.Elems, "tls-port"); ok && tls {
				port = tp
			}
			if host.Str != "" && port.Int > 0 {
				addr = joinHostPort(host.Str, strconv.FormatInt(port.Int, 10))
			}
		}
		if addr == "" || len(ranges.Elems)%2 != 0 {
			continue // no primary online: its slots wait for a new map
		}
		addrs = append(addrs, addr)
		for i := 0; i < len(ranges.Elems); i += 2 {
			if err := setRange(slots, ranges.Elems[i].Int, ranges.Elems[i+1].Int, len(addrs)); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(addrs) == 0 {
		return nil, nil, errorString("CLUSTER SHARDS named no online primary")
	}
	return addrs, slots, nil
}

// parseClusterSlots reads CLUSTER SLOTS: [lo, hi, [ip, port, ...]
// (the primary), replicas...]. An empty ip is the asked node's.
func parseClusterSlots(r Reply, asked string, _ bool) ([]string, []uint16, error) {
	slots := make([]uint16, clusterSlots)
	var addrs []string
	host := hostOf(asked)
	for _, rg := range r.Elems {
		if len(rg.Elems) < 3 || len(rg.Elems[2].Elems) < 2 {
			continue
		}
		ip := rg.Elems[2].Elems[0].Str
		if ip == "" || ip == "?" {
			ip = host
		}
		addr := joinHostPort(ip, strconv.FormatInt(rg.Elems[2].Elems[1].Int, 10))
		k := indexOf(addrs, addr)
		if k < 0 {
			addrs = append(addrs, addr)
			k = len(addrs) - 1
		}
		if err := setRange(slots, rg.Elems[0].Int, rg.Elems[1].Int, k+1); err != nil {
			return nil, nil, err
		}
	}
	if len(addrs) == 0 {
		return nil, nil, errorString("CLUSTER SLOTS named no primary")
	}
	return addrs, slots, nil
}

// hostOf is the host of a host:port address.
func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}

func indexOf(a []string, s string) int {
	for i, x := range a {
		if x == s {
			return i
		}
	}
	return -1
}

func setRange(slots []uint16, lo, hi int64, v int) error {
	if lo < 0 || hi >= clusterSlots || lo > hi {
		return errorString("slot range " + strconv.FormatInt(lo, 10) + "-" + strconv.FormatInt(hi, 10) + " out of bounds")
	}
	for s := lo; s <= hi; s++ {
		slots[s] = uint16(v)
	}
	return nil
}

// redirect handles a shard's -MOVED or -ASK reply to req; it reports
// whether it did (the reply then goes to nobody).
func (e *Engine) redirect(req *request, r Reply) bool {
	re, ok := r.Err.(RedisError)
	if !ok {
		return false
	}
	msg := string(re)
	ask := strings.HasPrefix(msg, "ASK ")
	if !ask && !strings.HasPrefix(msg, "MOVED ") {
		return false
	}
	f := strings.Fields(msg)
	if len(f) != 3 {
		return false
	}
	slot, err := strconv.Atoi(f[1])
	if err != nil || slot < 0 || slot >= clusterSlots {
		return false
	}
	sh := req.node
	cl := sh.parent.cl
	addr := f[2]
	if strings.HasPrefix(addr, ":") {
		// The node knows no endpoint for the target: the same host.
		addr = joinHostPort(hostOf(sh.spec.Addr), addr[1:])
	}
	h := req.h
	if g, ok := h.(*waitGate); ok {
		// The WAIT written behind the redirected command answers to
		// nobody: the command, re-sent, gets a WAIT of its own.
		h, g.h = g.h, discard{}
	}
	if req.redirects >= maxRedirects {
		h.reply(e, sh.idx, Reply{Err: errorString("cluster: more than " + strconv.Itoa(maxRedirects) + " redirects (last: " + msg + ")")})
		return true
	}
	if !ask && cl.slots != nil {
		// The map is stale: note the slot's new owner now, and ask for
		// the whole map at the next use.
		k := indexOf(cl.addrs, addr)
		if k < 0 {
			cl.addrs = append(cl.addrs, addr)
			k = len(cl.addrs) - 1
		}
		cl.slots[slot] = uint16(k + 1)
		cl.stale = true
	}
	nr := e.newRequest(cl.shard(e, addr), h, req.cmd)
	nr.sent, nr.asking = req.sent, ask
	nr.redirects = req.redirects + 1
	nr.budget = req.deadline // the first write's node timeout still bounds it
	e.sendRequest(nr)
	return true
}

// clusterDown reports whether a shard's error reply means it no longer
// serves lock commands: demoted, loading, or the cluster down.
func clusterDown(r Reply) bool {
	if demoted(r) {
		return true
	}
	re, ok := r.Err.(RedisError)
	return ok && strings.HasPrefix(string(re), "CLUSTERDOWN")
}

// clusterShards calls f for each shard connection of every cluster node.
func (e *Engine) clusterShards(f func(s *node) bool) bool {
	for _, n := range e.nodes {
		if n.cl == nil {
			continue
		}
		for _, s := range n.cl.order {
			if !f(s) {
				return false
			}
		}
	}
	return true
}
