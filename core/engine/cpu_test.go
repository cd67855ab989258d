package engine

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFifo runs a node's in-flight queue through uneven runs of pushes and
// pops: order kept, popped slots cleared.
func TestFifo(t *testing.T) {
	var f fifo
	reqs := make([]*request, 50)
	for i := range reqs {
		reqs[i] = &request{gen: uint64(i)}
	}
	var want []*request
	next := 0
	// Pushes and pops in uneven runs, through the compaction and the
	// growth of the array.
	for round := range 40 {
		for range round%7 + 1 {
			r := reqs[next%len(reqs)]
			next++
			f.push(r)
			want = append(want, r)
		}
		for range round%5 + 1 {
			if len(want) == 0 {
				break
			}
			require.Same(t, want[0], f.pop())
			want = want[1:]
		}
		require.Equal(t, len(want), f.len())
		require.Equal(t, want, append([]*request{}, f.items()...))
		for _, x := range f.q[:f.head] {
			require.Nil(t, x, "a popped request must not stay referenced")
		}
	}
	f.reset()
	require.Zero(t, f.len())
}
