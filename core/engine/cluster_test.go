package engine

import (
	"testing"

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
