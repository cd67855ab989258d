package xsort_test

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/liblock/liblock/core/internal/xsort"
	"github.com/stretchr/testify/require"
)

type item struct{ key, seq int }

// TestSliceIsSorts: with and without the liblockwasm tag, Slice orders as
// sort.Slice does: alike for unique keys at any length, and alike for equal
// keys too up to 12 elements (both insertion-sort them).
func TestSliceIsSorts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for round := range 5000 {
		n := rng.IntN(40)
		if round%2 == 0 {
			n = rng.IntN(13)
		}
		unique := n > 12 || round%3 != 0
		a := make([]item, n)
		for i := range a {
			a[i] = item{key: rng.IntN(4), seq: i}
			if unique {
				a[i].key = rng.IntN(1 << 30)
			}
		}
		want := slices.Clone(a)
		sort.Slice(want, func(i, j int) bool { return want[i].key < want[j].key })
		got := slices.Clone(a)
		xsort.Slice(got, func(i, j int) bool { return got[i].key < got[j].key })
		if unique || n <= 12 {
			require.Equal(t, want, got, "Slice(%v) (expected: sort.Slice's)", a)
		}
		desc := slices.Clone(a) // by > too, as inspect.go sorts
		xsort.Slice(desc, func(i, j int) bool { return desc[i].key > desc[j].key })
		require.True(t, sort.SliceIsSorted(desc, func(i, j int) bool { return desc[i].key > desc[j].key }), "Slice(%v, >) = %v: not sorted", a, desc)
	}
}
