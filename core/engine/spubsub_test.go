package engine

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	time "github.com/liblock/liblock/core/internal/xtime"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShardedScripts: each cluster variant is its original with SPUBLISH
// and PUBSUB SHARDNUMSUB for PUBLISH and PUBSUB NUMSUB, with no plain
// announcement left, under its own SHA and script bit.
func TestShardedScripts(t *testing.T) {
	require.Len(t, shardedScripts, 6)
	for orig, v := range shardedScripts {
		sum := sha1.Sum([]byte(v.src))
		assert.Equal(t, hex.EncodeToString(sum[:]), v.sha, "SHA-1 of %q", v.src)
		assert.NotEqual(t, orig.sha, v.sha)
		assert.NotEqual(t, orig.bit, v.bit)
		assert.Contains(t, v.src, `"SPUBLISH"`)
		assert.NotContains(t, v.src, `"PUBLISH"`)
		assert.NotContains(t, v.src, `"NUMSUB"`)
		assert.Equal(t, orig.src, strings.NewReplacer(`"SPUBLISH"`, `"PUBLISH"`, `"SHARDNUMSUB"`, `"NUMSUB"`).Replace(v.src))
		assert.Equal(t, noWait[orig], noWait[v], v.sha)
		assert.Equal(t, deletes[orig], deletes[v], v.sha)
		assert.Equal(t, grantPositive[orig], grantPositive[v], v.sha)
	}
	// Every script that announces has a cluster variant.
	for _, sc := range []*script{releaseScript, extendScript, acquireTokenScript, acquireFenceScript, fenceScript, inspectScript,
		semAcquireScript, semReleaseScript, semInspectScript, multiAcquireScript, multiReleaseScript, multiExtendScript, multiFenceScript,
		rwAcquireScript, rwExtendScript, rwReleaseScript, rwFenceScript, rwInspectScript, electFenceScript, electExtendScript, electReleaseScript} {
		if strings.Contains(sc.src, `"PUBLISH"`) {
			assert.NotNil(t, shardedScripts[sc], sc.sha)
		}
	}
}

// twoShards is a fake cluster of two primaries, a:1 (slots 0-8191) and
// b:2 (8192-16383), where SET NX answers as set says and every script 1.
func twoShards(t *testing.T, set func() string) (*fakeCluster, map[string]*fakeClusterNode) {
	m := shardsReply([4]string{"0", "8191", "a:1", "ra:1"}, [4]string{"8192", "16383", "b:2", "rb:2"})
	answer := func(cmd []string, _ bool) string {
		switch strings.ToUpper(cmd[0]) {
		case "SET":
			return set()
		case "SSUBSCRIBE", "SUBSCRIBE":
			return "*3\r\n$" + strconv.Itoa(len(cmd[0])) + "\r\n" + strings.ToLower(cmd[0]) + "\r\n$" + strconv.Itoa(len(cmd[1])) + "\r\n" + cmd[1] + "\r\n:1\r\n"
		}
		return ":1\r\n"
	}
	nodes := map[string]*fakeClusterNode{"a:1": {shards: m, answer: answer}, "b:2": {shards: m, answer: answer}}
	return newFakeCluster(t, "redis://a:1?cluster=yes", intp(0), nodes), nodes
}

// keysOn returns a resource whose key's slot is on a:1 (lo) or b:2.
func resourceOn(lo bool) string {
	for i := 0; ; i++ {
		r := "r" + strconv.Itoa(i)
		if (KeySlot("{"+r+"}") < 8192) == lo {
			return r
		}
	}
}

func push(kind, channel, msg string) []byte {
	b := func(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
	return []byte("*3\r\n" + b(kind) + b(channel) + b(msg))
}

// A waiter on a cluster node SSUBSCRIBEs on the shard of its key's slot
// only (never SUBSCRIBE), a shard message wakes it at once (no clock
// moved), and its release runs the SPUBLISH variant of the script.
func TestClusterFakeShardedWakeUp(t *testing.T) {
	free := false
	f, _ := twoShards(t, func() string {
		if free {
			return "+OK\r\n"
		}
		return "$-1\r\n"
	})
	for _, lo := range []bool{true, false} {
		res := resourceOn(lo)
		owner, other := "a:1", "b:2"
		if !lo {
			owner, other = other, owner
		}
		free = false
		f.log = nil
		op, err := f.e.Acquire(AcquireRequest{Resource: res, TTL: 10 * time.Second, Wait: time.Minute})
		require.NoError(t, err)
		f.run()
		ch := ReleasedChannel("{" + res + "}")
		assert.Equal(t, []string{owner + " SSUBSCRIBE " + ch}, f.logged(owner, "SSUBSCRIBE"), "the key's shard")
		assert.Empty(t, f.logged(other, "SSUBSCRIBE"), "not the other shard")
		for _, a := range []string{owner, other} {
			assert.Empty(t, f.logged(a, "SUBSCRIBE"), "no plain SUBSCRIBE on a cluster")
		}
		sets := len(f.logged(owner, "SET"))
		free = true
		f.e.Received(f.subs[owner], push("smessage", ch, "someid"))
		f.run()
		d, done := f.done[op]
		require.True(t, done, "woken without the clock moving; log:\n%s", strings.Join(f.log, "\n"))
		require.NoError(t, d.Err)
		assert.Equal(t, sets+1, len(f.logged(owner, "SET")))

		rel, err := f.e.Release(d.Lock)
		require.NoError(t, err)
		f.run()
		require.Contains(t, f.done, rel)
		evals := append(f.logged(owner, "EVALSHA"), f.logged(owner, "EVAL ")...)
		require.NotEmpty(t, evals)
		last := evals[len(evals)-1]
		assert.True(t, strings.Contains(last, ReleaseShardSHA) || strings.Contains(last, `"SPUBLISH"`), "the SPUBLISH variant: %q", last)
		for _, l := range f.log {
			assert.NotContains(t, l, ReleaseSHA, "never the plain PUBLISH release on a cluster")
		}
	}
}

// A -MOVED answer to SSUBSCRIBE, and a "sunsubscribe" push after a slot
// migrated: the waiter's next poll subscribes on the slot's new owner, and
// the waiter still gets the lock.
func TestClusterFakeShardedResubscribe(t *testing.T) {
	res := resourceOn(true)
	key := "{" + res + "}"
	ch := ReleasedChannel(key)
	slot := strconv.Itoa(KeySlot(key))
	for _, how := range []string{"moved", "sunsubscribe"} {
		t.Run(how, func(t *testing.T) {
			free := false
			f, nodes := twoShards(t, func() string {
				if free {
					return "+OK\r\n"
				}
				return "$-1\r\n"
			})
			moved := shardsReply([4]string{"0", "16383", "b:2", "rb:2"})
			a := nodes["a:1"]
			orig := a.answer
			if how == "moved" {
				// The slot migrates to b:2 just as the waiter subscribes:
				// its SSUBSCRIBE meets -MOVED, and so does all that follows.
				migrated := false
				a.answer = func(cmd []string, asking bool) string {
					if cmd[0] == "SSUBSCRIBE" && !migrated {
						migrated = true
						a.shards, nodes["b:2"].shards = moved, moved
					}
					if migrated && (cmd[0] == "SSUBSCRIBE" || cmd[0] == "SET") {
						return "-MOVED " + slot + " b:2\r\n"
					}
					return orig(cmd, asking)
				}
			}
			op, err := f.e.Acquire(AcquireRequest{Resource: res, TTL: 10 * time.Second, Wait: time.Minute})
			require.NoError(t, err)
			f.run()
			require.NotEmpty(t, f.logged("a:1", "SSUBSCRIBE "+ch))
			if how == "sunsubscribe" {
				require.Empty(t, f.logged("b:2", "SSUBSCRIBE"))
				// The slot migrates to b:2: a:1 tells its subscribers.
				a.shards = moved
				nodes["b:2"].shards = moved
				a.answer = func(cmd []string, asking bool) string {
					if cmd[0] == "SET" || cmd[0] == "SSUBSCRIBE" {
						return "-MOVED " + slot + " b:2\r\n"
					}
					return orig(cmd, asking)
				}
				f.e.Received(f.subs["a:1"], []byte("*3\r\n$12\r\nsunsubscribe\r\n$"+strconv.Itoa(len(ch))+"\r\n"+ch+"\r\n:0\r\n"))
				f.run()
				_, open := f.conns[f.subs["a:1"]]
				assert.False(t, open, "a:1's pub/sub connection, left with nothing to hear, is closed")
			}
			// The next polls: subscribed on b:2, the new owner.
			require.Eventually(t, func() bool {
				f.env.now += 50 * time.Millisecond
				f.e.Tick()
				f.run()
				return len(f.logged("b:2", "SSUBSCRIBE "+ch)) > 0
			}, 5*time.Second, time.Millisecond, "log:\n%s", strings.Join(f.log, "\n"))
			free = true
			f.e.Received(f.subs["b:2"], push("smessage", ch, "someid"))
			f.run()
			d, done := f.done[op]
			require.True(t, done, "log:\n%s", strings.Join(f.log, "\n"))
			require.NoError(t, d.Err)
			assert.Empty(t, f.logged("a:1", "SUBSCRIBE"))
			assert.Empty(t, f.logged("b:2", "SUBSCRIBE"))
		})
	}
}

// On a cluster node a release's SPUBLISH count is the shard's, exact: no
// subscriber but this engine's own means no other client waits (the
// old PUBLISH count forced "others may wait"), and one more means one does.
func TestClusterExactHandOffCount(t *testing.T) {
	f, _ := twoShards(t, func() string { return "$-1\r\n" })
	res := resourceOn(true)
	key := "{" + res + "}"
	op, err := f.e.Acquire(AcquireRequest{Resource: res, TTL: 10 * time.Second, Wait: time.Minute})
	require.NoError(t, err)
	f.run()
	require.NotEmpty(t, f.logged("a:1", "SSUBSCRIBE"))
	require.True(t, f.e.shardSubscribed(0, key), "this engine's own subscription, live")
	for _, c := range []struct {
		receivers int64
		remote    bool
	}{{1, false}, {2, true}, {0, false}} {
		lop := &lockOp{lock: &lockState{key: key}}
		f.e.noteReceivers(lop, 0, c.receivers)
		assert.Equal(t, c.remote, lop.remote, "%d subscribers counted by SPUBLISH", c.receivers)
		assert.Equal(t, c.remote, f.e.subs[key].remote)
	}
	_ = op
}

// A cluster without sharded pub/sub (before Redis 7.0) answers SSUBSCRIBE
// as an unknown command: the waiter polls, sending it once only, and still
// gets the lock.
func TestClusterFakeNoShardedPubSub(t *testing.T) {
	free := false
	f, nodes := twoShards(t, func() string {
		if free {
			return "+OK\r\n"
		}
		return "$-1\r\n"
	})
	for _, n := range nodes {
		orig := n.answer
		n.answer = func(cmd []string, asking bool) string {
			if cmd[0] == "SSUBSCRIBE" {
				return "-ERR unknown command 'SSUBSCRIBE', with args beginning with: \r\n"
			}
			return orig(cmd, asking)
		}
	}
	op, err := f.e.Acquire(AcquireRequest{Resource: resourceOn(true), TTL: 10 * time.Second, Wait: time.Minute})
	require.NoError(t, err)
	f.run()
	for i := 0; i < 20; i++ {
		f.env.now += 50 * time.Millisecond
		f.e.Tick()
		f.run()
	}
	assert.Len(t, f.logged("a:1", "SSUBSCRIBE"), 1, "asked once")
	assert.Greater(t, len(f.logged("a:1", "SET")), 5, "the waiter polls")
	free = true
	require.Eventually(t, func() bool {
		f.env.now += 50 * time.Millisecond
		f.e.Tick()
		f.run()
		_, done := f.done[op]
		return done
	}, 5*time.Second, time.Millisecond)
	require.NoError(t, f.done[op].Err)
}
