package engine

import time "github.com/liblock/liblock/core/internal/xtime"

// timerTarget is something with a deadline. gen tells a timer that is
// still wanted from one that is not (targets compare it with their own).
type timerTarget interface {
	fire(e *Engine, gen uint64)
	// live reports whether the timer of that gen is still wanted.
	live(gen uint64) bool
}

type timer struct {
	at     time.Duration
	seq    uint64 // insertion order: equal deadlines fire first come first
	target timerTarget
	gen    uint64
}

// timerHeap is a min-heap of timers by deadline. Timers are not removed
// when they become stale: a target ignores a timer whose gen is stale, so
// the engine keeps one heap and no per-target bookkeeping. Stale timers
// are dropped when they reach the top, and by prune whenever the heap has
// doubled since the last prune: every request pushes one (its deadline)
// and is answered long before it, and every lock one (its validity or
// next extension), so without prune the heap held every request and lock
// of the last node timeout or ttl, which the garbage collector scanned
// over and over and every push and pop went through.
type timerHeap struct {
	h   []timer
	seq uint64
	// pruneAt is the length at which push prunes next: twice what was
	// left by the last prune, so that pruning costs O(1) per push.
	pruneAt int
}

// minPrune is the smallest heap that is pruned.
const minPrune = 64

func (t *timerHeap) less(i, j int) bool {
	a, b := &t.h[i], &t.h[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (t *timerHeap) push(at time.Duration, target timerTarget, gen uint64) {
	if len(t.h) >= max(t.pruneAt, minPrune) {
		t.prune()
		t.pruneAt = 2 * len(t.h)
	}
	t.seq++
	t.h = append(t.h, timer{at: at, seq: t.seq, target: target, gen: gen})
	i := len(t.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(i, p) {
			break
		}
		t.h[i], t.h[p] = t.h[p], t.h[i]
		i = p
	}
}

func (t *timerHeap) pop() timer {
	top := t.h[0]
	last := len(t.h) - 1
	t.h[0] = t.h[last]
	t.h[last] = timer{}
	t.h = t.h[:last]
	t.down(0)
	return top
}

// prune drops the stale timers. A timer that is not live never is again
// (a target's gen only grows, and what else live checks — an acquire
// finished, a lock released or lost, a request answered, a connection past
// its handshake — does not come back under the same gen), so this drops
// only timers that popDue and peek would skip, and the live ones come out
// in the same order: (at, seq) orders every pair of timers.
func (t *timerHeap) prune() {
	live := t.h[:0]
	for _, tm := range t.h {
		if tm.target.live(tm.gen) {
			live = append(live, tm)
		}
	}
	clear(t.h[len(live):]) // no references to the dropped targets
	t.h = live
	for i := len(t.h)/2 - 1; i >= 0; i-- {
		t.down(i)
	}
}

// down moves the timer at i down to its place.
func (t *timerHeap) down(i int) {
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && t.less(l, m) {
			m = l
		}
		if r < len(t.h) && t.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

// popDue removes and returns the earliest timer due at now.
func (t *timerHeap) popDue(now time.Duration) (timer, bool) {
	for len(t.h) > 0 && t.h[0].at <= now {
		if tm := t.pop(); tm.target.live(tm.gen) {
			return tm, true
		}
	}
	return timer{}, false
}

// peek returns the earliest deadline still wanted, dropping the timers
// before it that are not.
func (t *timerHeap) peek() (time.Duration, bool) {
	for len(t.h) > 0 && !t.h[0].target.live(t.h[0].gen) {
		t.pop()
	}
	if len(t.h) == 0 {
		return 0, false
	}
	return t.h[0].at, true
}
