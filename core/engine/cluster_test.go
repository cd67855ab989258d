package engine

import (
	"errors"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"testing"

	time "github.com/liblock/liblock/core/internal/xtime"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeySlot(t *testing.T) {
	// The Redis Cluster specification's vectors.
	assert.Equal(t, uint16(0x31C3), crc16("123456789"))
	assert.Equal(t, 12182, KeySlot("foo"))
	assert.Equal(t, KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"))
	assert.Equal(t, KeySlot("foo{}{bar}"), KeySlot("foo{}{bar}"), "an empty tag: the whole key")
	assert.Equal(t, KeySlot("{bar"), KeySlot("{bar"))
	assert.Equal(t, KeySlot("zap"), KeySlot("foo{zap}"))
	assert.Equal(t, KeySlot("bar"), KeySlot("foo{bar}{zap}"), "the first tag only")
}

func clusterEngine(t *testing.T, prefix string) *Engine {
	t.Helper()
	e, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "a:1", Cluster: true, Seeds: []string{"a:1"}}}, KeyPrefix: prefix}, &fakeEnv{})
	require.NoError(t, err)
	return e
}

func TestKeyOf(t *testing.T) {
	e := clusterEngine(t, "app:")
	assert.Equal(t, "{app:orders}", e.keyOf("orders"), "wrapped in a tag")
	assert.Equal(t, "app:{grp}a", e.keyOf("{grp}a"), "its own tag kept")
	assert.Equal(t, "{app:a{}b}", e.keyOf("a{}b"), "an empty tag is none: wrapped")
	// Every key derived from a base key by appending stays in its slot.
	for _, res := range []string{"orders", "{grp}a", "a{}b", "x}y", "{"} {
		base := e.keyOf(res)
		for _, k := range []string{FenceKey(base), RWKey(base), SemKey(base, 3), SlotKey(SemKey(base, 3), 2), ElectionKey(base), FenceKey(ElectionKey(base))} {
			assert.Equal(t, KeySlot(base), KeySlot(k), "%q vs %q", base, k)
		}
	}
	// Without a cluster node, keys are as they always were.
	plain, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "a:1"}}, KeyPrefix: "app:"}, &fakeEnv{})
	require.NoError(t, err)
	assert.Equal(t, "app:orders", plain.keyOf("orders"))
}

func TestCheckOneSlot(t *testing.T) {
	e := clusterEngine(t, "")
	_, err := e.Acquire(AcquireRequest{Resource: "a", Resources: []string{"b"}, TTL: MinTTL})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "resources")
	assert.Contains(t, err.Error(), `"a"`)
	assert.Contains(t, err.Error(), `"b"`)
	_, ok := e.Next()
	assert.False(t, ok, "nothing sent")
	_, err = e.Acquire(AcquireRequest{Resource: "{g}a", Resources: []string{"{g}b"}, TTL: MinTTL})
	require.NoError(t, err)
}

func TestParseClusterShardsAndSlots(t *testing.T) {
	bulk := func(s string) Reply { return Reply{Str: s} }
	num := func(n int64) Reply { return Reply{Int: n} }
	node := func(ip string, port int64, role, health string) Reply {
		return Reply{Elems: []Reply{bulk("id"), bulk("x"), bulk("port"), num(port), bulk("ip"), bulk(ip), bulk("endpoint"), bulk(ip),
			bulk("role"), bulk(role), bulk("health"), bulk(health)}}
	}
	shards := Reply{Elems: []Reply{
		{Elems: []Reply{bulk("slots"), {Elems: []Reply{num(0), num(99), num(200), num(16383)}}, bulk("nodes"),
			{Elems: []Reply{node("10.0.0.2", 7001, "replica", "online"), node("10.0.0.1", 7000, "master", "online")}}}},
		{Elems: []Reply{bulk("slots"), {Elems: []Reply{num(100), num(199)}}, bulk("nodes"),
			{Elems: []Reply{node("10.0.0.3", 7002, "master", "failed")}}}},
	}}
	addrs, slots, err := parseClusterShards(shards, "seed:1", false)
	require.NoError(t, err)
	assert.Equal(t, []string{"10.0.0.1:7000"}, addrs, "replicas and failed primaries are never routed to")
	assert.Equal(t, uint16(1), slots[0])
	assert.Equal(t, uint16(0), slots[150], "no online primary: waits for a new map")
	assert.Equal(t, uint16(1), slots[16383])

	ss := Reply{Elems: []Reply{
		{Elems: []Reply{num(0), num(8191), {Elems: []Reply{bulk(""), num(7000)}}, {Elems: []Reply{bulk("10.0.0.9"), num(7009)}}}},
		{Elems: []Reply{num(8192), num(16383), {Elems: []Reply{bulk("10.0.0.2"), num(7001)}}}},
	}}
	addrs, slots, err = parseClusterSlots(ss, "10.0.0.1:7000", false)
	require.NoError(t, err)
	assert.Equal(t, []string{"10.0.0.1:7000", "10.0.0.2:7001"}, addrs)
	assert.Equal(t, uint16(2), slots[9000])
	_, _, err = parseClusterSlots(Reply{Elems: []Reply{{Elems: []Reply{num(0), num(20000), {Elems: []Reply{bulk("a"), num(1)}}}}}}, "a:1", false)
	assert.Error(t, err)
}

// A scripted fake of a Redis Cluster: each address answers each command
// as the test says (per connection: ASKING is remembered for the next
// command), and every command each address receives is logged.
type fakeClusterNode struct {
	down   bool
	shards string                                 // the raw CLUSTER SHARDS reply
	answer func(cmd []string, asking bool) string // the raw reply to a lock command
}

type fakeCluster struct {
	t      *testing.T
	e      *Engine
	env    *manualEnv
	nodes  map[string]*fakeClusterNode
	conns  map[ConnID]string
	asking map[ConnID]bool
	log    []string
	done   map[OpID]Action
	subs   map[string]ConnID // the connection each address got a (S)SUBSCRIBE on (spubsub_test.go)
}

func newFakeCluster(t *testing.T, url string, wait *int, nodes map[string]*fakeClusterNode) *fakeCluster {
	return newFakeClusters(t, []string{url}, wait, nodes)
}

// newFakeClusters is newFakeCluster with several node URLs (an address no
// map names is a standalone server answering with its answer).
func newFakeClusters(t *testing.T, urls []string, wait *int, nodes map[string]*fakeClusterNode) *fakeCluster {
	ns, err := ParseNodes(urls)
	require.NoError(t, err)
	env := &manualEnv{r: mrand.New(mrand.NewPCG(1, 2))}
	e, err := New(Config{Nodes: ns, NodeTimeout: 100 * time.Millisecond, WaitReplicas: wait}, env)
	require.NoError(t, err)
	return &fakeCluster{t: t, e: e, env: env, nodes: nodes, conns: map[ConnID]string{}, asking: map[ConnID]bool{}, done: map[OpID]Action{}}
}

func (f *fakeCluster) run() {
	for i := 0; i < 10000; i++ {
		a, ok := f.e.Next()
		if !ok {
			return
		}
		switch a.Kind {
		case ActOpen:
			s := f.nodes[a.Dial.Addr]
			if s == nil || s.down {
				f.log = append(f.log, a.Dial.Addr+" (refused)")
				f.e.ConnFailed(a.Conn, errors.New("connection refused"))
				continue
			}
			f.conns[a.Conn] = a.Dial.Addr
			f.e.Opened(a.Conn)
		case ActWrite:
			addr := f.conns[a.Conn]
			s := f.nodes[addr]
			var out []byte
			for _, cmd := range parseCommands(f.t, a.Data) {
				f.log = append(f.log, addr+" "+strings.Join(cmd, " "))
				name := strings.ToUpper(cmd[0])
				switch name {
				case "PING":
					out = append(out, "+PONG\r\n"...)
				case "ASKING":
					f.asking[a.Conn] = true
					out = append(out, "+OK\r\n"...)
				case "CLUSTER":
					out = append(out, s.shards...)
				case "WAIT":
					out = append(out, ":1\r\n"...)
				case "INFO":
					info := "cluster_enabled:0\r\nconnected_slaves:1\r\n"
					if len(s.shards) > 0 {
						info = "cluster_enabled:1\r\nconnected_slaves:1\r\n"
					}
					out = append(out, "$"+strconv.Itoa(len(info))+"\r\n"+info+"\r\n"...)
				default:
					if name == "SSUBSCRIBE" || name == "SUBSCRIBE" {
						if f.subs == nil {
							f.subs = map[string]ConnID{}
						}
						f.subs[addr] = a.Conn
					}
					out = append(out, s.answer(cmd, f.asking[a.Conn])...)
					f.asking[a.Conn] = false
				}
			}
			f.e.Received(a.Conn, out)
		case ActClose:
			delete(f.conns, a.Conn)
		case ActDone:
			_, again := f.done[a.Op]
			require.False(f.t, again, "op %d ended twice", a.Op)
			f.done[a.Op] = a
		}
	}
	f.t.Fatal("the engine never stopped acting")
}

func (f *fakeCluster) acquire(resource string) Action {
	f.t.Helper()
	op, err := f.e.Acquire(AcquireRequest{Resource: resource, TTL: 10 * time.Second})
	require.NoError(f.t, err)
	f.run()
	d, ok := f.done[op]
	require.True(f.t, ok, "the acquire did not end; log:\n%s", strings.Join(f.log, "\n"))
	return d
}

// logged returns the log lines of addr starting with cmd.
func (f *fakeCluster) logged(addr, cmd string) []string {
	var out []string
	for _, l := range f.log {
		if strings.HasPrefix(l, addr+" "+cmd) {
			out = append(out, l)
		}
	}
	return out
}

// shardsReply is CLUSTER SHARDS naming, per shard, its slot range, its
// primary and a replica.
func shardsReply(shards ...[4]string) string {
	bulk := func(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
	node := func(addr, role string) string {
		h, p, _ := strings.Cut(addr, ":")
		return "*10\r\n" + bulk("port") + ":" + p + "\r\n" + bulk("ip") + bulk(h) + bulk("endpoint") + bulk(h) +
			bulk("role") + bulk(role) + bulk("health") + bulk("online")
	}
	out := "*" + strconv.Itoa(len(shards)) + "\r\n"
	for _, s := range shards { // lo, hi, primary, replica
		out += "*4\r\n" + bulk("slots") + "*2\r\n:" + s[0] + "\r\n:" + s[1] + "\r\n" + bulk("nodes") +
			"*2\r\n" + node(s[3], "replica") + node(s[2], "master")
	}
	return out
}

func ok(_ []string, _ bool) string { return "+OK\r\n" }

func TestClusterFakeFollowsMovedNeverAReplica(t *testing.T) {
	slot := strconv.Itoa(KeySlot("{k}"))
	m := shardsReply([4]string{"0", "16383", "a:1", "r:1"})
	f := newFakeCluster(t, "redis://a:1?cluster=yes", nil, map[string]*fakeClusterNode{
		"a:1": {shards: m, answer: func([]string, bool) string { return "-MOVED " + slot + " b:2\r\n" }},
		"b:2": {shards: m, answer: ok},
		"r:1": {shards: m, answer: ok},
	})
	d := f.acquire("k")
	require.NoError(t, d.Err)
	assert.Len(t, f.logged("a:1", "SET {k}"), 1)
	assert.Len(t, f.logged("b:2", "SET {k}"), 1, "re-sent to the address MOVED named")
	assert.Equal(t, []string{"b:2 WAIT 1 50"}, f.logged("b:2", "WAIT"), "WAIT 1 by default on a cluster node")
	assert.Empty(t, f.logged("r:1", ""), "nothing to the replica")
	assert.Equal(t, "cluster via a:1", f.e.NodeAddr(0))
}

func TestClusterFakeAsk(t *testing.T) {
	slot := strconv.Itoa(KeySlot("{k}"))
	m := shardsReply([4]string{"0", "16383", "a:1", "r:1"})
	f := newFakeCluster(t, "redis://a:1?cluster=yes", intp(0), map[string]*fakeClusterNode{
		"a:1": {shards: m, answer: func([]string, bool) string { return "-ASK " + slot + " b:2\r\n" }},
		"b:2": {shards: m, answer: func(_ []string, asking bool) string {
			if !asking {
				return "-MOVED " + slot + " a:1\r\n"
			}
			return "+OK\r\n"
		}},
	})
	d := f.acquire("k")
	require.NoError(t, d.Err)
	b := f.logged("b:2", "")
	require.GreaterOrEqual(t, len(b), 3)
	assert.Equal(t, []string{"b:2 PING", "b:2 ASKING"}, b[:2])
	assert.True(t, strings.HasPrefix(b[2], "b:2 SET {k}"), "the command right after ASKING: %q", b[2])
	// ASK changes no map: the next command goes to a first again.
	d = f.acquire("k")
	require.NoError(t, d.Err)
	assert.Len(t, f.logged("a:1", "SET {k}"), 2)
}

func TestClusterFakeRedirectLimit(t *testing.T) {
	slot := strconv.Itoa(KeySlot("{k}"))
	m := shardsReply([4]string{"0", "16383", "a:1", "r:1"})
	f := newFakeCluster(t, "redis://a:1?cluster=yes", intp(0), map[string]*fakeClusterNode{
		"a:1": {shards: m, answer: func([]string, bool) string { return "-MOVED " + slot + " b:2\r\n" }},
		"b:2": {shards: m, answer: func([]string, bool) string { return "-MOVED " + slot + " a:1\r\n" }},
	})
	d := f.acquire("k")
	require.Error(t, d.Err)
	assert.Contains(t, d.Err.Error(), "more than 5 redirects")
	assert.Equal(t, 1+maxRedirects, len(f.logged("a:1", "SET {k}"))+len(f.logged("b:2", "SET {k}")), "the first send and 5 redirects")
}

func TestClusterFakeSeeds(t *testing.T) {
	m := shardsReply([4]string{"0", "16383", "p:1", "r:1"})
	f := newFakeCluster(t, "redis://s1:1?cluster=yes&addr=s2:2", intp(0), map[string]*fakeClusterNode{
		"s1:1": {down: true},
		"s2:2": {shards: m, answer: ok},
		"p:1":  {shards: m, answer: ok},
	})
	d := f.acquire("k")
	require.NoError(t, d.Err)
	assert.Equal(t, []string{"s1:1 (refused)", "s2:2 PING", "s2:2 CLUSTER SHARDS", "p:1 PING"}, f.log[:4], "seeds in turn, then the primary")
	assert.Len(t, f.logged("p:1", "SET {k}"), 1)
	assert.Empty(t, f.logged("s2:2", "SET"), "a seed that is not the slot's primary gets no lock command")

	// Every seed down: the node fails, naming each seed's cause.
	f = newFakeCluster(t, "redis://s1:1?cluster=yes&addr=s2:2", intp(0), map[string]*fakeClusterNode{
		"s1:1": {down: true}, "s2:2": {down: true},
	})
	d = f.acquire("k")
	require.Error(t, d.Err)
	assert.Contains(t, d.Err.Error(), "s1:1: connection refused")
	assert.Contains(t, d.Err.Error(), "s2:2: connection refused")
}

func intp(n int) *int { return &n }

// One Redis Cluster listed under two seed lists is found when the second
// map loads, before either copy sends a lock command (the first map's
// requests wait for the other's first map): both nodes then fail every
// request naming each other, so the cluster never gives two votes. Its
// control: two distinct clusters lock as usual.
func TestClusterListedTwiceFoundBeforeItVotes(t *testing.T) {
	m := shardsReply([4]string{"0", "16383", "p:1", "r:1"})
	x := &fakeClusterNode{answer: ok}
	f := newFakeClusters(t, []string{"redis://s1:1?cluster=yes", "redis://s2:2?cluster=yes", "redis://x:9"}, intp(0),
		map[string]*fakeClusterNode{"s1:1": {shards: m, answer: ok}, "s2:2": {shards: m, answer: ok}, "p:1": {shards: m, answer: ok}, "x:9": x})
	for i := 0; i < 2; i++ {
		d := f.acquire("k")
		require.Error(t, d.Err, "one cluster twice and one server: one real vote of three")
		assert.Contains(t, d.Err.Error(), "nodes[0] and nodes[1] are one Redis Cluster (both slot maps name primary p:1): list each cluster once")
		assert.Empty(t, f.logged("p:1", "SET"), "no lock command reached the cluster listed twice; log:\n%s", strings.Join(f.log, "\n"))
	}

	// The control: two clusters with distinct primaries.
	m2 := shardsReply([4]string{"0", "16383", "q:2", "r:2"})
	f = newFakeClusters(t, []string{"redis://s1:1?cluster=yes", "redis://s2:2?cluster=yes", "redis://x:9"}, intp(0),
		map[string]*fakeClusterNode{"s1:1": {shards: m, answer: ok}, "s2:2": {shards: m2, answer: ok}, "p:1": {shards: m, answer: ok},
			"q:2": {shards: m2, answer: ok}, "x:9": x})
	d := f.acquire("k")
	require.NoError(t, d.Err)
	assert.Len(t, f.logged("p:1", "SET {k}"), 1)
	assert.Len(t, f.logged("q:2", "SET {k}"), 1)
}

// primaryIDs reads node ids from both map forms, and falls back to the
// primaries' addresses.
func TestPrimaryIDs(t *testing.T) {
	bulk := func(s string) Reply { return Reply{Str: s} }
	num := func(n int64) Reply { return Reply{Int: n} }
	shards := Reply{Elems: []Reply{{Elems: []Reply{bulk("slots"), {Elems: []Reply{num(0), num(16383)}}, bulk("nodes"), {Elems: []Reply{
		{Elems: []Reply{bulk("id"), bulk("r1"), bulk("role"), bulk("replica")}},
		{Elems: []Reply{bulk("id"), bulk("p1"), bulk("role"), bulk("master")}}}}}}}}
	assert.Equal(t, []string{"p1"}, primaryIDs(shards, false, []string{"a:1"}))
	slots := Reply{Elems: []Reply{{Elems: []Reply{num(0), num(16383), {Elems: []Reply{bulk("h"), num(1), bulk("p2")}}}}}}
	assert.Equal(t, []string{"p2"}, primaryIDs(slots, true, []string{"h:1"}))
	old := Reply{Elems: []Reply{{Elems: []Reply{num(0), num(16383), {Elems: []Reply{bulk("h"), num(1)}}}}}}
	assert.Equal(t, []string{"h:1"}, primaryIDs(old, true, []string{"h:1"}), "no ids: the addresses")
}
