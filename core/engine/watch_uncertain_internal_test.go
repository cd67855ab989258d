package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A watch reports "no leader" only when no value can be on a quorum: with
// one node of three failing its inspection, the leader's key on one node
// and absent on the other may still be on a quorum (the failed node's), so
// the inspection tells nothing and the watch reports nothing; without a
// failed node the same answers mean no leader. Before, a node timing out
// on a loaded machine made watchers report leader → none → the same leader.
func TestWatchReportsNoLeaderOnlyWhenSure(t *testing.T) {
	const term = 1795000000000001
	leader := "0123456789abcdef0123456789abcdef\xffreplica-0\xff1795000000000001"
	holds := Reply{Kind: '*', Elems: []Reply{{Kind: '$', Str: leader}, {Kind: ':', Int: 900}}}
	absent := Reply{Kind: '*', Elems: []Reply{{Kind: '$', Nil: true}, {Kind: ':', Int: -2}}}
	failed := Reply{Err: errors.New("no reply within the node timeout (50ms)")}

	inspect := func(t *testing.T, e *Engine, w *watchOp, replies ...Reply) []Action {
		n := len(e.nodes)
		op := &inspectOp{id: w.id, resource: w.name, key: w.key, start: e.now, elect: true, watch: w,
			values: make([]string, n), has: make([]bool, n), ttls: make([]time.Duration, n), errs: make([]error, n)}
		e.inspecting++
		w.inflight = true
		e.actions = nil
		for i, r := range replies {
			op.reply(e, i, r)
		}
		var leaders []Action
		for _, a := range e.actions {
			if a.Kind == ActLeader {
				leaders = append(leaders, a)
			}
		}
		return leaders
	}
	for _, tc := range []struct {
		name    string
		replies []Reply
		report  bool // a report of no leader
	}{
		{"one node failed, the leader on one of the others", []Reply{holds, absent, failed}, false},
		{"no node failed, the leader on one node", []Reply{holds, absent, absent}, true},
		{"one node failed, the leader on none of the others", []Reply{absent, absent, failed}, true},
		{"two nodes failed", []Reply{holds, failed, failed}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "h:1"}, {Network: "tcp", Addr: "h:2"}, {Network: "tcp", Addr: "h:3"}}, NodeTimeout: time.Second}, &fakeEnv{})
			require.NoError(t, err)
			w := &watchOp{id: 7, name: "svc", key: ElectionKey("svc"), poll: time.Second}
			e.watches = map[OpID]*watchOp{w.id: w}
			first := inspect(t, e, w, holds, holds, holds)
			require.Len(t, first, 1)
			require.True(t, first[0].Inspection.Held)
			require.EqualValues(t, term, first[0].Inspection.Term)

			got := inspect(t, e, w, tc.replies...)
			if !tc.report {
				assert.Empty(t, got, "a watch reported what it could not know")
				return
			}
			require.Len(t, got, 1)
			assert.False(t, got[0].Inspection.Held)
		})
	}
}
