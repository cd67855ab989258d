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
	// fenced: acquired with Fence; fence is the engine's LockInfo.Fence.
	fenced bool
	fence  int64
	// A permit of a semaphore (key is its SemKey): its slot, and when its
	// acquire was asked for (true time).
	slot    int
	opStart time.Duration
	// mode: a read-write lock's reader or writer (sim_rwlock_test.go).
	mode LockMode
	// keys: a multi-resource lock's keys (key is the first); it holds
	// each of them over segs.
	keys []string
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
	// byToken: the locks acquired with each token. Holders of one token
	// (a re-entry, a hand-over) are one logical holder: their intervals may
	// overlap, and a release by any of them ends it for all (WithToken:
	// "releasing deletes the key for every holder of the token").
	byToken map[string][]*heldLock
	// retired: tokens some holder released (or whose client closed); the
	// workload never acquires with them again, and an acquire with one
	// that was in flight then holds nothing.
	retired map[string]bool
	// losses: when a node lost its data (true time), which fences do not
	// survive; lossSpan: how long before its success a fenced acquisition
	// may have read and written counters (the longest ttl); excuseLoss:
	// fences are compared only across stretches without a loss (the
	// negative control sets it false).
	losses     []time.Duration
	lossSpan   time.Duration
	excuseLoss bool
	fencePairs int // consecutive fenced acquisitions compared
	fenceSkips int // ... and not compared: a node lost its data between them
}

func newChecker() *checker {
	return &checker{held: map[string][]*heldLock{}, count: map[string]int{}, byToken: map[string][]*heldLock{}, retired: map[string]bool{}}
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
	for _, key := range h.allKeys() {
		if _, ok := k.held[key]; !ok {
			k.keys = append(k.keys, key)
		}
		k.held[key] = append(k.held[key], h)
	}
	k.byToken[h.token] = append(k.byToken[h.token], h)
}

// retire ends, now, the interval of every holder of token: one of them
// released it, which deletes the keys for all.
func (k *checker) retire(token string) {
	k.retired[token] = true
	for _, h := range k.byToken[token] {
		if h.c.s != nil {
			h.c.endHeld(h.id)
		}
	}
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
		if isSemKey(key) {
			continue // permits of one semaphore overlap: checkPermits
		}
		if isRWKey(key) {
			k.checkRWOverlaps(key)
			continue
		}
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
			if last != nil && s.start < last.end && s.h.token != last.h.token {
				k.violate("overlap", fmt.Sprintf("resource %s: %s held [%v, %v) and %s held [%v, %v): %v of overlap",
					key, last.h.owner(), last.start, last.end, s.h.owner(), s.start, s.end, min(last.end, s.end)-s.start))
			}
			if last == nil || s.end > last.end {
				last = s
			}
		}
	}
}

// addFenced records a fenced acquisition directly (the checker's
// self-test).
func (k *checker) addFenced(key, token string, start, end time.Duration, fence int64) {
	c := &simClient{id: len(k.held[key])}
	k.add(&heldLock{c: c, id: LockID(len(k.held[key]) + 1), key: key, token: token, segs: []segment{{start, end}}, ended: true, fenced: true, fence: fence})
}

// checkFences: per resource, in lock order (the order of the validity
// intervals of the successful fenced acquisitions, which start where the
// engine reported success), fences strictly increase. The engine's
// argument needs no more than that order: the later acquisition's first
// round met, on some node, the counter the earlier one wrote there.
func (k *checker) checkFences() {
	for _, key := range k.keys {
		if isSemKey(key) {
			continue // checkSemFences
		}
		if isRWKey(key) {
			k.checkRWFences(key)
			continue
		}
		var fs []*heldLock
		for _, h := range k.held[key] {
			if h.fenced {
				fs = append(fs, h)
			}
		}
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].segs[0].start < fs[j].segs[0].start })
		for i := 1; i < len(fs); i++ {
			a, b := fs[i-1], fs[i]
			if k.excuseLoss && k.lostBetween(a.segs[0].start-k.lossSpan, b.segs[0].start) {
				k.fenceSkips++
				continue
			}
			k.fencePairs++
			if b.fence <= a.fence {
				k.violate("fence", fmt.Sprintf("resource %s: %s acquired at %v with fence %d, after %s acquired at %v with fence %d",
					key, b.owner(), b.segs[0].start, b.fence, a.owner(), a.segs[0].start, a.fence))
			}
		}
	}
}

// lostBetween reports a node's loss of its data within (from, to].
func (k *checker) lostBetween(from, to time.Duration) bool {
	i := sort.Search(len(k.losses), func(i int) bool { return k.losses[i] > from })
	return i < len(k.losses) && k.losses[i] <= to
}

// inspSnap is a lock that was valid when an inspection started, with the
// end of its validity then (true time).
type inspSnap struct {
	h   *heldLock
	seg int
	end time.Duration
}

// checkInspection checks one inspection of key that ran over the true
// time [start, end] against the locks valid when it started (snaps). A
// lock whose validity covers the whole inspection holds its key on a
// quorum at every read, so: (1) an inspection that says Held names its
// owner (no other value can hold a quorum meanwhile); (2) one that says
// not held, with every node answering, is wrong when the lock's validity
// goes on well after the inspection (by more than the inspection's own
// allowance for its duration and the drift). Also: no key in the
// simulation lacks an expiry.
func (k *checker) checkInspection(key string, start, end time.Duration, in *Inspection, err error, nodes int, snaps []inspSnap) {
	if err != nil {
		if in != nil {
			k.violate("inspect", fmt.Sprintf("resource %s: an inspection failed (%v) and still reported %+v", key, err, *in))
		}
		return
	}
	if in == nil || len(in.Nodes) != nodes {
		k.violate("inspect", fmt.Sprintf("resource %s: an inspection succeeded without a report of every node: %+v", key, in))
		return
	}
	if in.Held && in.Validity <= 0 || !in.Held && (in.Validity != 0 || in.Owner != "") {
		k.violate("inspect", fmt.Sprintf("resource %s: inspection held %v with validity %v owner %q", key, in.Held, in.Validity, in.Owner))
	}
	errs := 0
	for _, n := range in.Nodes {
		if n.Err != nil {
			errs++
		}
		if n.Locked && n.TTL == NoExpiry {
			k.violate("inspect", fmt.Sprintf("resource %s: node %d reports the key without expiry", key, n.Node))
		}
	}
	for _, sn := range snaps {
		h := sn.h
		if len(h.segs) != sn.seg+1 {
			continue // renewed after it ended: reported as such
		}
		seg := h.segs[sn.seg]
		if seg.start > start || seg.end < end {
			continue // not valid throughout the inspection
		}
		owner := OwnerOf(h.token)
		if in.Held && in.Owner != owner {
			k.violate("inspect", fmt.Sprintf("resource %s: an inspection over [%v, %v] says held by %q (validity %v) while %s (owner %q) held it throughout, until %v",
				key, start, end, in.Owner, in.Validity, h.owner(), owner, seg.end))
		}
		until := min(seg.end, sn.end)
		if !in.Held && errs == 0 && float64(until-end)*0.94 > float64(3500*time.Microsecond)+1.01*float64(end-start) {
			k.violate("inspect", fmt.Sprintf("resource %s: an inspection over [%v, %v] with every node answering says not held while %s held it throughout, until %v",
				key, start, end, h.owner(), until))
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
