package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An extension or a release that can no longer succeed waits for the
// nodes still to answer while their answers could prove the lock lost: node
// c fails and node a answers that the key is gone; node b's answer decides
// between lost (gone there too) and unavailable (held there: it cannot
// tell). Deciding unavailable before b answered would tell the caller of an
// extension that the lock stays held until its validity ends, of a lock
// already gone from a quorum.
func TestUnsureOutcomeWaitsForTheLastNode(t *testing.T) {
	for _, extend := range []bool{true, false} {
		for _, bHolds := range []bool{false, true} {
			name := map[bool]string{true: "extend", false: "release"}[extend] + map[bool]string{true: "/b holds it", false: "/b lost it"}[bHolds]
			t.Run(name, func(t *testing.T) {
				f := newFakeNodes(t, []string{"redis://a:1", "redis://b:1", "redis://c:1"}, nil, map[string]*fakeServer{
					"a:1": {role: "master"}, "b:1": {role: "master"}, "c:1": {role: "master"},
				})
				d := f.acquire("r")
				require.NoError(t, d.Err)
				var op OpID
				var err error
				if extend {
					op, err = f.e.Extend(d.Lock, time.Second)
				} else {
					op, err = f.e.Release(d.Lock)
				}
				require.NoError(t, err)
				// The requests, held: each node's answer is delivered below, in order.
				conn := map[string]ConnID{}
				f.holdWrites(conn)
				require.Len(t, conn, 3, "a request to each node")
				f.e.ConnFailed(conn["c:1"], errors.New("connection reset by peer"))
				f.holdWrites(conn)
				f.e.Received(conn["a:1"], []byte(":0\r\n"))
				f.holdWrites(conn)
				_, decided := f.done[op]
				assert.False(t, decided, "decided before b answered: %v", f.done[op].Err)
				if bHolds {
					f.e.Received(conn["b:1"], []byte(":1\r\n"))
				} else {
					f.e.Received(conn["b:1"], []byte(":0\r\n"))
				}
				f.holdWrites(conn)
				done, ok := f.done[op]
				require.True(t, ok, "decided once b answered")
				if bHolds {
					assert.ErrorIs(t, done.Err, ErrUnavailable)
				} else {
					assert.ErrorIs(t, done.Err, ErrLost)
				}
			})
		}
	}
}

// A re-entry by token whose lock is held on just a quorum (the third node
// refused it then, another owner's key expiring a moment later there) is
// granted afresh on that node: an acquire decided on that fresh grant and one
// re-entered grant would say "not re-entered" of a token that held the lock
// on a quorum. It waits for the nodes still to answer while they could make
// the re-entry certain. Its control: the third node's grant is fresh too.
func TestReentryWaitsForTheQuorumThatHoldsTheToken(t *testing.T) {
	for _, bHolds := range []bool{true, false} {
		t.Run(map[bool]string{true: "b holds the token", false: "b does not"}[bHolds], func(t *testing.T) {
			a, b, c := &fakeServer{role: "master"}, &fakeServer{role: "master"}, &fakeServer{role: "master"}
			f := newFakeNodes(t, []string{"redis://a:1", "redis://b:1", "redis://c:1"}, nil, map[string]*fakeServer{"a:1": a, "b:1": b, "c:1": c})
			require.NoError(t, f.acquire("open").Err) // the connections
			token := "0123456789abcdef-token"
			op, err := f.e.Acquire(AcquireRequest{Resource: "r", TTL: 10 * time.Second, Token: token})
			require.NoError(t, err)
			conn := map[string]ConnID{}
			f.holdWrites(conn)
			require.Len(t, conn, 3, "a request to each node")
			// The acquire-by-token script answers 2 where the token held the
			// key (re-entered) and 1 where it set it afresh.
			f.e.Received(conn["c:1"], []byte(":1\r\n"))
			f.holdWrites(conn)
			f.e.Received(conn["a:1"], []byte(":2\r\n"))
			f.holdWrites(conn)
			_, decided := f.done[op]
			assert.False(t, decided, "decided before b answered")
			if bHolds {
				f.e.Received(conn["b:1"], []byte(":2\r\n"))
			} else {
				f.e.Received(conn["b:1"], []byte(":1\r\n"))
			}
			f.holdWrites(conn)
			done, ok := f.done[op]
			require.True(t, ok, "decided once b answered")
			require.NoError(t, done.Err)
			info, ok := f.e.Lock(done.Lock)
			require.True(t, ok)
			assert.Equal(t, bHolds, info.Reentered)
		})
	}
}

// holdWrites carries out the engine's actions without answering its
// writes: it notes which connection each node's request went out on (conn,
// by address), refuses new connections and records what is done; the test
// then delivers each node's answer itself, in the order it is testing.
func (f *fakeDeployment) holdWrites(conn map[string]ConnID) {
	for {
		a, ok := f.e.Next()
		if !ok {
			return
		}
		switch a.Kind {
		case ActWrite:
			conn[f.conns[a.Conn]] = a.Conn
		case ActOpen:
			f.e.ConnFailed(a.Conn, errors.New("connection refused"))
		case ActDone:
			f.done[a.Op] = a
		}
	}
}
