package main

// handleTable maps handles (nonzero uint64) to entries. It replaces Go maps
// on the per-call path: in Go-wasm a map operation costs a generic hash
// (memhash64Fallback, no AES) and the swiss-table machinery, ≈ 9 % of an
// acquire+release pair's module CPU with ~8 map operations per pair.
// Handles count up from 1, so the handle itself, masked, is a perfect
// spread: an open-addressing table with linear probing finds almost every
// handle in its first slot. Deletion shifts the following run back
// (no tombstones), so lookups never slow down over time.
//
// Not safe for concurrent use (the module is single-threaded); it must not
// be changed while each runs.
type handleTable struct {
	slots []handleSlot // len is 0 or a power of two
	n     int          // live entries
}

type handleSlot struct {
	h uint64 // 0: empty
	v any
}

// get returns the entry of h, or nil.
func (t *handleTable) get(h uint64) any {
	if h == 0 || len(t.slots) == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.slots[i].h {
		case h:
			return t.slots[i].v
		case 0:
			return nil
		}
	}
}

// put adds h (nonzero, not in the table) with its entry v.
func (t *handleTable) put(h uint64, v any) {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	t.insert(h, v)
	t.n++
}

func (t *handleTable) insert(h uint64, v any) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].h != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = handleSlot{h: h, v: v}
}

func (t *handleTable) grow() { t.resize(max(8, 2*len(t.slots))) }

func (t *handleTable) resize(size int) {
	old := t.slots
	t.slots = make([]handleSlot, size)
	for _, s := range old {
		if s.h != 0 {
			t.insert(s.h, s.v)
		}
	}
}

// remove deletes h; absent handles are ignored.
func (t *handleTable) remove(h uint64) {
	if h == 0 || len(t.slots) == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].h != h {
		if t.slots[i].h == 0 {
			return
		}
		i = (i + 1) & mask
	}
	// Backward-shift deletion: move every later entry of the run whose
	// home slot is not between the hole and it into the hole.
	for j := (i + 1) & mask; t.slots[j].h != 0; j = (j + 1) & mask {
		home := t.slots[j].h & mask
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = handleSlot{}
	t.n--
	if len(t.slots) > minShrink && 8*t.n < len(t.slots) {
		t.resize(len(t.slots) / 2) // after a burst of locks, give the memory back
	}
}

// minShrink is the table size below which it does not shrink.
const minShrink = 64

// len returns the number of live entries.
func (t *handleTable) len() int { return t.n }

// each calls fn for every entry; fn must not change the table.
func (t *handleTable) each(fn func(h uint64, v any)) {
	for _, s := range t.slots {
		if s.h != 0 {
			fn(s.h, s.v)
		}
	}
}

// handles returns a copy of the live handles, for loops that change tables.
func (t *handleTable) handles() []uint64 {
	hs := make([]uint64, 0, t.n)
	for _, s := range t.slots {
		if s.h != 0 {
			hs = append(hs, s.h)
		}
	}
	return hs
}
