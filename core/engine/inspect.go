package engine

import (
	"strconv"
	"strings"

	sort "github.com/liblock/liblock/core/internal/xsort"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// NoExpiry is Inspection.Validity for a key that has no expiry (set by some
// other program without PX): held until someone deletes it.
const NoExpiry = time.Duration(-1)

// Inspection is what Inspect found out about a resource, without taking it.
type Inspection struct {
	// Held reports whether one value (one holder) holds the key on a
	// quorum of nodes, for at least a moment more.
	Held bool
	// Validity is how long the holder certainly keeps it: the least
	// remaining ttl over the best quorum of nodes, less the time the round
	// took and the drift. NoExpiry for a key without expiry; 0 when not
	// held.
	Validity time.Duration
	// Owner is the holder's label (Config.Owner of the engine that took
	// it); "" when it set none or the key was set by another program.
	Owner string
	// Nodes is each node's answer, in node order.
	Nodes []NodeState
	// A semaphore's inspection (InspectPermits): its permit count, how
	// many permits a quorum holds, and those permits by slot. Held,
	// Validity and Owner are then the first holder's.
	Permits int
	InUse   int
	Holders []Holder
	// Readers: for a read-write lock (InspectRequest.Mode), the readers
	// that hold it on a quorum, by token; Held, Validity and Owner are then
	// its writer's, and Nodes' its writer key's (rwlock.go).
	Readers []ReaderState
	// Term and Value: an election's leader's term and value (election.go).
	Term  int64
	Value string
}

// NodeState is one node's part of an Inspection.
type NodeState struct {
	Node   int
	Addr   string
	Locked bool          // the key exists on the node
	Holder bool          // its value is the holder's (the quorum's)
	Owner  string        // the label in its value, if any
	TTL    time.Duration // the key's remaining ttl there (NoExpiry: none)
	Err    error         // the node failed to answer
}

// inspectOp is one Inspect: one round of GET + PTTL to every node.
type inspectOp struct {
	id       OpID
	resource string
	key      string
	start    time.Duration
	values   []string
	has      []bool
	ttls     []time.Duration
	errs     []error
	answered int
	permits  int         // a semaphore's inspection (InspectPermits)
	sem      *semInspect // its slots per node
	rw       *rwInspect  // a read-write lock's readers, per node
	// elect: an election's inspection; watch: the watch it is for.
	elect bool
	watch *watchOp
	// unsure: not held, but only because nodes failed: the holder's value
	// may be on a quorum counting them. Inspect answers "not held" (its
	// answer is a lower bound); a watch reports nothing of it.
	unsure bool
}

// Inspect starts an inspection of resource: whether a quorum holds it, how
// long at least, and by which owner. Its outcome is an ActDone whose
// Inspection is set (or whose Err says why it could not tell).
func (e *Engine) Inspect(resource string) (OpID, error) {
	return e.InspectWith(InspectRequest{Resource: resource})
}

// InspectWith is Inspect of the lock r names: the mutex, a semaphore or a
// read-write lock.
func (e *Engine) InspectWith(r InspectRequest) (OpID, error) {
	if err := r.Validate(); err != nil {
		return 0, err
	}
	if r.Permits > 0 {
		return e.InspectPermits(r.Resource, r.Permits) // semaphore.go
	}
	resource := r.Resource
	if e.closing {
		return 0, ErrClosed
	}
	e.begin()
	n := len(e.nodes)
	key := e.keyOf(resource)
	if r.Election {
		key = ElectionKey(key)
	}
	op := &inspectOp{id: OpID(e.newID()), resource: resource, key: key, start: e.now, elect: r.Election,
		values: make([]string, n), has: make([]bool, n), ttls: make([]time.Duration, n), errs: make([]error, n)}
	e.inspecting++
	sc := inspectScript
	if r.Mode != ModeExclusive {
		sc = e.rwInspectInit(op)
	}
	for _, nd := range e.nodes {
		e.sendScript(nd, op, sc, op.key)
	}
	e.end()
	return op.id, nil
}

func (op *inspectOp) reply(e *Engine, i int, r Reply) {
	switch {
	case op.sem != nil:
		op.semInspectReply(i, r)
	case r.Err != nil:
		op.errs[i] = r.Err
	case len(r.Elems) == 2 || op.rw != nil && len(r.Elems) == 3:
		if op.rw != nil {
			op.rw.note(i, r.Elems[2])
		}
		op.has[i] = !r.Elems[0].Nil
		op.values[i] = r.Elems[0].Str
		if pttl := r.Elems[1].Int; pttl >= 0 {
			op.ttls[i] = time.Duration(pttl) * time.Millisecond
		} else {
			op.ttls[i] = NoExpiry
		}
	default:
		op.errs[i] = protocolError("an inspection answered " + strconv.Itoa(len(r.Elems)) + " values")
	}
	if op.answered++; op.answered < len(e.nodes) {
		return
	}
	e.inspecting--
	var in *Inspection
	var err error
	switch {
	case op.sem != nil:
		in, err = e.semInspection(op)
	case op.elect:
		in, err = e.electInspection(op)
	default:
		in, err = e.inspection(op)
		if in != nil && op.rw != nil {
			in.Readers = e.rwReaders(op)
		}
	}
	if op.watch != nil {
		e.watchInspected(op.watch, in, err, op.unsure)
		return
	}
	e.emit(Action{Kind: ActDone, Op: op.id, Inspection: in, Err: err})
}

func (e *Engine) inspection(op *inspectOp) (*Inspection, error) {
	n := len(e.nodes)
	count := map[string]int{}
	holder, best := "", 0
	var causes []*NodeError
	for i := range n {
		if op.errs[i] != nil {
			causes = append(causes, &NodeError{Node: i, Addr: e.nodes[i].name, Err: op.errs[i]})
			continue
		}
		if op.has[i] {
			count[op.values[i]]++
			if c := count[op.values[i]]; c > best || c == best && op.values[i] < holder {
				holder, best = op.values[i], c
			}
		}
	}
	in := &Inspection{Nodes: make([]NodeState, n)}
	var ttls []time.Duration
	for i := range n {
		s := NodeState{Node: i, Addr: e.nodes[i].name, Locked: op.has[i], TTL: op.ttls[i], Err: op.errs[i]}
		if op.has[i] {
			s.Owner = OwnerOf(op.values[i])
			s.Holder = best >= e.quorum && op.values[i] == holder
			if s.Holder {
				t := op.ttls[i]
				if t == NoExpiry {
					t = time.Duration(1<<63 - 1)
				}
				ttls = append(ttls, t)
			}
		}
		in.Nodes[i] = s
	}
	if best >= e.quorum {
		// The quorum-th longest remaining ttl: until then a quorum holds it.
		sort.Slice(ttls, func(i, j int) bool { return ttls[i] > ttls[j] })
		left := ttls[e.quorum-1]
		if left == time.Duration(1<<63-1) {
			in.Held, in.Validity, in.Owner = true, NoExpiry, OwnerOf(holder)
			return in, nil
		}
		v := left - (e.now - op.start) - (time.Duration(float64(left)*e.drift) + ClockPrecision)
		if v > 0 {
			in.Held, in.Validity, in.Owner = true, v, OwnerOf(holder)
			return in, nil
		}
	}
	if len(causes) > n-e.quorum {
		return nil, e.unavailable("inspect", nil, causes, ": cannot tell whether it is held")
	}
	op.unsure = best < e.quorum && best+len(causes) >= e.quorum
	return in, nil
}

// OwnerOf returns the owner label in a lock's value ("owner/uuid"), or ""
// for a value with none (a bare token, or another program's value).
func OwnerOf(value string) string {
	i := strings.LastIndexByte(value, '/')
	if i <= 0 || !isUUID(value[i+1:]) {
		return ""
	}
	return value[:i]
}

// isUUID reports the canonical text of a UUID: 8-4-4-4-12 hex digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}
