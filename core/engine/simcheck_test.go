package engine

// The simulation's checker. Every successful acquisition holds its
// resource over an interval of TRUE time: from the moment the engine
// reported success until the validity end the engine computed (its clock's
// reading converted to true time), moved by each extension, and cut short
// when the user releases it, forgets it, closes the client, or is told the
// lock is lost. Per resource, the intervals of different acquisitions must
// never overlap. The other checks (operations that complete twice or hang,
// protocol slips, keys left behind) report through the same list.

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// segment is a stretch of true time [start, end) over which a lock was
// held. A lock has one, unless the engine renewed it after it had ended
// (itself a violation).
type segment struct{ start, end time.Duration }

type heldLock struct {
	c           *simClient
	id          LockID
	key         string
	token       string
	segs        []segment
	validC      time.Duration // the engine's validUntil last seen (client clock)
	ended       bool          // released, forgotten, closed or lost: the interval is final
	lost        bool
	releaseDone bool
}

func (h *heldLock) owner() string { return fmt.Sprintf("c%d/lock%d", h.c.id, h.id) }

type violation struct {
	kind string // overlap, twice, hang, leftover, outlived, protocol, validity
	msg  string
}

type checker struct {
	held       map[string][]*heldLock // by key
	keys       []string               // keys in first-seen order
	violations []violation
	count      map[string]int
	ops        int
}

func newChecker() *checker {
	return &checker{held: map[string][]*heldLock{}, count: map[string]int{}}
}

const maxViolationsKept = 20

func (k *checker) violate(kind, msg string) {
	k.count[kind]++
	if len(k.violations) < maxViolationsKept {
		k.violations = append(k.violations, violation{kind, msg})
	}
}

func (k *checker) total() int {
	n := 0
	for _, c := range k.count {
		n += c
	}
	return n
}

func (k *checker) add(h *heldLock) {
	if _, ok := k.held[h.key]; !ok {
		k.keys = append(k.keys, h.key)
	}
	k.held[h.key] = append(k.held[h.key], h)
}

// addInterval records an interval directly (the checker's self-test).
func (k *checker) addInterval(key, owner string, start, end time.Duration) {
	c := &simClient{id: len(k.held[key])}
	k.add(&heldLock{c: c, id: LockID(len(k.held[key]) + 1), key: key, token: owner, segs: []segment{{start, end}}, ended: true})
}

// checkOverlaps reports every pair of intervals of different acquisitions
// of one resource that overlap, in true time.
func (k *checker) checkOverlaps() {
	type seg struct {
		segment
		h *heldLock
	}
	for _, key := range k.keys {
		var segs []seg
		for _, h := range k.held[key] {
			for _, s := range h.segs {
				if s.end > s.start {
					segs = append(segs, seg{s, h})
				}
			}
		}
		sort.SliceStable(segs, func(i, j int) bool { return segs[i].start < segs[j].start })
		var last *seg // the segment that ends last among those seen
		for i := range segs {
			s := &segs[i]
			if last != nil && s.start < last.end && s.h != last.h {
				k.violate("overlap", fmt.Sprintf("resource %s: %s held [%v, %v) and %s held [%v, %v): %v of overlap",
					key, last.h.owner(), last.start, last.end, s.h.owner(), s.start, s.end, min(last.end, s.end)-s.start))
			}
			if last == nil || s.end > last.end {
				last = s
			}
		}
	}
}

func (k *checker) report() string {
	var b strings.Builder
	kinds := make([]string, 0, len(k.count))
	for kind := range k.count {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		fmt.Fprintf(&b, "%s: %d; ", kind, k.count[kind])
	}
	for _, v := range k.violations {
		fmt.Fprintf(&b, "\n  [%s] %s", v.kind, v.msg)
	}
	return b.String()
}
