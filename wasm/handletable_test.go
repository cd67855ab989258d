package main

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHandleTableAgreesWithMap runs random puts and removes (handles
// counting up, also in strides that collide, removed in random order, bursts that grow and shrink the
// table) against a Go map.
func TestHandleTableAgreesWithMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tab handleTable
	want := map[uint64]int{}
	var live []uint64
	next := uint64(0)
	check := func() {
		t.Helper()
		if tab.len() != len(want) {
			t.Fatalf("len %d, want %d", tab.len(), len(want))
		}
		for h, v := range want {
			if got, _ := tab.get(h).(int); got != v {
				t.Fatalf("get(%d) = %v, want %d", h, tab.get(h), v)
			}
		}
		hs := tab.handles()
		slices.Sort(hs)
		wantHs := make([]uint64, 0, len(want))
		for h := range want {
			wantHs = append(wantHs, h)
		}
		slices.Sort(wantHs)
		if !slices.Equal(hs, wantHs) {
			t.Fatalf("handles %v, want %v", hs, wantHs)
		}
	}
	for round := range 200 {
		burst := 1 + r.IntN(300)
		if round%50 == 0 {
			burst = 3000
		}
		for range burst {
			next += 1 + uint64(r.IntN(2))*63 // strides that collide
			tab.put(next, int(next))
			want[next] = int(next)
			live = append(live, next)
		}
		check()
		for range r.IntN(len(live) + 1) {
			i := r.IntN(len(live))
			h := live[i]
			live = append(live[:i], live[i+1:]...)
			tab.remove(h)
			delete(want, h)
			if tab.get(h) != nil {
				t.Fatalf("removed %d still there", h)
			}
		}
		tab.remove(next + 1) // absent: ignored
		tab.remove(0)
		check()
	}
	for _, h := range live {
		tab.remove(h)
	}
	if tab.len() != 0 || len(tab.slots) > minShrink {
		t.Fatalf("emptied table: len %d, %d slots", tab.len(), len(tab.slots))
	}
	if tab.get(0) != nil || tab.get(1) != nil {
		t.Fatal("empty table finds something")
	}
}
