package engine

import time "github.com/liblock/liblock/core/engine/internal/xtime"

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

// timerHeap is a min-heap of timers by deadline. Timers are never removed
// early: a target ignores a timer whose gen is stale, so the engine keeps
// one heap and no per-target bookkeeping.
type timerHeap struct {
	h   []timer
	seq uint64
}

func (t *timerHeap) less(i, j int) bool {
	a, b := &t.h[i], &t.h[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (t *timerHeap) push(at time.Duration, target timerTarget, gen uint64) {
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
	i := 0
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
	return top
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
