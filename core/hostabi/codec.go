package hostabi

import (
	"strconv"
	"unicode/utf8"

	"github.com/liblock/liblock/core/engine"
	errors "github.com/liblock/liblock/core/internal/xerrors"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// The byte encoding of PROTOCOL.md: events (host → engine) and actions
// (engine → host). The fields' encoding and decoding is codec_gen.go,
// generated from spec/protocol.json (whose go keys map each field to its Go
// value). This file holds what the spec does not say: the Go types, the
// checks of an event's length and of the bytes after it, the split of a
// WRITE that does not fit, the mapping of Go errors to and from the error
// record, and an INSPECTED's holders (the engine's holders and readers,
// two Go lists in one wire list, cut to what fits in MinOut).

// EventKind says what an event tells the engine.
type EventKind uint8

// The kinds of events and actions, the flags and the status codes are in
// protocol_gen.go, generated from spec/protocol.json; golden_test.go checks
// the codec's bytes against the spec.

// Event is one event, decoded or to be encoded. Only the fields of its Kind
// are used.
type Event struct {
	Kind       EventKind
	Resource   string // EvAcquire
	TTLms      int64  // EvAcquire, EvExtend
	WaitMS     int64  // EvAcquire
	AutoExtend bool   // EvAcquire
	Fence      bool   // EvAcquire
	Token      string // EvAcquire: the caller's token ("": random)
	// Permits, Mode and Resources: EvAcquire and EvInspect (Resources:
	// EvAcquire only): the further resources of a multi-resource lock.
	Permits   uint32
	Mode      engine.LockMode
	Resources []string
	// Election and Value: EvAcquire (a campaign, with its value) and
	// EvInspect (Election: the election's leader).
	Election bool
	Value    string
	PollMS   int64  // EvWatch (its name in Resource)
	Lock     uint64 // EvExtend, EvRelease, EvForget, EvLockInfo
	Op       uint64 // EvCancel, EvUnwatch
	Conn     uint32 // EvOpened, EvReceived, EvConnFailed
	Data     []byte // EvReceived
	Message  string // EvConnFailed
	Level    uint8  // EvReports (an engine.ReportLevel)
}

// Action is one decoded action: an engine.Action (kinds 1–7, and the Op of
// ActStarted, the Err of ActRejected) with the fields of the answers.
type Action struct {
	engine.Action
	WasPending bool            // ActCanceled
	Info       engine.LockInfo // ActInfo; ActDone: Fence and Reentered
	Awaiting   bool            // ActAwaiting (with Conn)
}

// Limits of the encoding.
const (
	// MinOut is the smallest output buffer step accepts: any one action
	// but a WRITE (which is split) fits in it.
	MinOut = 64 << 10
	// MaxEvent is the largest event step accepts.
	MaxEvent = 1<<20 + 64
	// Error strings are cut (at a UTF-8 boundary) to these lengths, so
	// that every action fits in MinOut.
	maxErrMessage = 8 << 10
	maxErrField   = 4 << 10
	maxNodeAddr   = 256
	maxNodeCause  = 256
	maxErrNodes   = engine.MaxNodes
)

// DecodeEvent reads exactly one event from b; Data aliases b. An error
// names what is wrong (it is malformed: truncated, of an unknown kind, with
// unknown flags, a length past the end, or bytes after the event).
func DecodeEvent(b []byte) (Event, error) {
	if len(b) == 0 {
		return Event{}, errors.New("empty event")
	}
	if len(b) > MaxEvent {
		return Event{}, errors.New("event longer than " + strconv.Itoa(MaxEvent) + " bytes")
	}
	r := reader{b: b, i: 1}
	ev := Event{Kind: EventKind(b[0])}
	if err := readEvent(&r, &ev); err != nil {
		return Event{}, err
	}
	if r.err != nil {
		return Event{}, r.err
	}
	if r.i != len(b) {
		return Event{}, errors.New(strconv.Itoa(len(b)-r.i) + " bytes after the event")
	}
	return ev, nil
}

// appendAction appends a to b if it fits in room bytes. A WRITE that does
// not fit whole is split: as much of its data as fits is written and the
// rest is left in a.Data. It reports whether a was written whole.
func appendAction(b []byte, a *Action, room int) ([]byte, bool) {
	if a.Kind == ActWrite {
		const head = 1 + 4 + 4
		if room < head+1 && len(a.Data) > 0 || room < head {
			return b, false
		}
		data := a.Data
		n := min(len(data), room-head)
		a.Data = data[:n]
		b = appendActionFields(b, a)
		a.Data = data[n:]
		return b, len(a.Data) == 0
	}
	start := len(b)
	b = appendActionFields(b, a)
	if len(b)-start > room {
		return b[:start], false
	}
	return b, true
}

// Decode appends the actions encoded in b to dst. Data of a WRITE aliases
// b. Errors are rebuilt as the engine's: *engine.ArgumentError,
// *engine.UnavailableError with its *engine.NodeError causes, and errors
// for which errors.Is finds the engine's sentinels (ErrNotAcquired,
// ErrLost, ErrCanceled or ErrClosed, ErrUnknownLock).
func Decode(dst []Action, b []byte) ([]Action, error) {
	r := reader{b: b}
	for r.i < len(b) && r.err == nil {
		var a Action
		a.Kind = engine.ActionKind(r.u8())
		if !readAction(&r, &a) {
			return dst, errors.New("hostabi: unknown action kind " + strconv.Itoa(int(a.Kind)) + " at offset " + strconv.Itoa(r.i-1))
		}
		if r.err == nil {
			dst = append(dst, a)
		}
	}
	if r.err != nil {
		return dst, errors.New("hostabi: actions: " + r.err.Error())
	}
	return dst, nil
}

// appendHolders writes an INSPECTED's holders: a semaphore's permits by
// slot (mode 0), then a read-write lock's readers (mode 1, slot 0; the
// engine never lists both kinds), as many as fit (fitReaders). start is
// where the action began.
func appendHolders(b []byte, in *engine.Inspection, start int) []byte {
	readers := fitReaders(in, len(b)-start)
	b = appendU16(b, uint16(len(in.Holders)+len(readers)))
	for _, h := range in.Holders {
		b = appendInspectedHolder(b, uint32(h.Slot), cut(h.Owner, maxNodeAddr), millisOrNone(h.Validity), uint8(engine.ModeExclusive))
	}
	for _, r := range readers {
		b = appendInspectedHolder(b, 0, cut(r.Owner, maxNodeAddr), millisOrNone(r.Validity), uint8(engine.ModeRead))
	}
	return b
}

// readHolders reads an INSPECTED's holders into in's Holders and Readers.
func readHolders(r *reader, in *engine.Inspection) {
	for i, n := 0, int(r.u16()); i < n && r.err == nil; i++ {
		slot, owner, validity, mode := readInspectedHolder(r)
		if engine.LockMode(mode) == engine.ModeRead {
			// A reader: its token does not travel, nor how many nodes
			// hold it.
			in.Readers = append(in.Readers, engine.ReaderState{Owner: owner, Validity: durationOrNone(validity)})
			continue
		}
		in.Holders = append(in.Holders, engine.Holder{Slot: int(slot), Owner: owner, Validity: durationOrNone(validity)})
	}
	in.InUse = len(in.Holders)
}

// fitReaders is as many of in's readers as an INSPECTED fits in MinOut,
// used bytes being written before its holders: a host must get every
// action in an output buffer of MinOut, and the readers of a read-write
// lock are not bounded (a semaphore's holders are, by MaxPermits). With
// owner labels of at most MaxOwner bytes that is several hundred readers;
// the others are left out (by token order, the engine's).
func fitReaders(in *engine.Inspection, used int) []engine.ReaderState {
	size := used + 2 + 8 + 4 + len(in.Value)
	for _, h := range in.Holders {
		size += 4 + 4 + len(cut(h.Owner, maxNodeAddr)) + 8 + 1
	}
	for i, r := range in.Readers {
		if size += 4 + 4 + len(cut(r.Owner, maxNodeAddr)) + 8 + 1; size > MinOut || i == 1<<16-1-len(in.Holders) {
			return in.Readers[:i]
		}
	}
	return in.Readers
}

// millisOrNone is d in milliseconds, or -1 for engine.NoExpiry.
func millisOrNone(d time.Duration) int64 {
	if d == engine.NoExpiry {
		return -1
	}
	return d.Milliseconds()
}

func durationOrNone(ms int64) time.Duration {
	if ms < 0 {
		return engine.NoExpiry
	}
	return time.Duration(ms) * time.Millisecond
}

// errText is an INSPECTED node's cause: "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func errOrNil(cause string) error {
	if cause == "" {
		return nil
	}
	return errors.New(cause)
}

// appendError encodes err as an error record (all zero for nil): its
// status and message; an *engine.ArgumentError's argument, reason and
// bound; an *engine.UnavailableError's operation, reason and per-node
// causes. Strings are cut so that every action fits in MinOut.
func appendError(b []byte, err error) []byte {
	var e errorRecord
	if err == nil {
		return appendErrorRecord(b, &e)
	}
	e.Status = StatusOf(err)
	e.Message = cut(err.Error(), maxErrMessage)
	var ae *engine.ArgumentError
	var ue *engine.UnavailableError
	switch {
	case errors.As(err, &ae):
		e.A, e.B = cut(ae.Arg, maxErrField), cut(ae.Reason, maxErrField)
		e.Bound = ae.Bound // "min", "max" or "": never long
		e.Limit, e.Unit, e.Got = ae.Limit, cut(ae.Unit, maxNodeCause), ae.Got
	case errors.As(err, &ue):
		e.A, e.B = cut(ue.Op, maxErrField), cut(ue.Reason, maxErrField)
		e.Nodes = make([]errorRecordItem, min(len(ue.Nodes), maxErrNodes))
		for i := range e.Nodes {
			ne := ue.Nodes[i]
			cause := "<nil>"
			if ne.Err != nil {
				cause = ne.Err.Error()
			}
			e.Nodes[i] = errorRecordItem{Node: uint16(ne.Node), Addr: cut(ne.Addr, maxNodeAddr), Cause: cut(cause, maxNodeCause)}
		}
	}
	return appendErrorRecord(b, &e)
}

// error reads an error record and rebuilds the error a host sees.
func (r *reader) error() error {
	var e errorRecord
	readErrorRecord(r, &e)
	if r.err != nil {
		return nil
	}
	var nodes []*engine.NodeError
	for _, n := range e.Nodes {
		ne := &engine.NodeError{Node: int(n.Node), Addr: n.Addr}
		if n.Cause == engine.ErrNoAnswer.Error() {
			ne.Err = engine.ErrNoAnswer
		} else {
			ne.Err = errors.New(n.Cause)
		}
		nodes = append(nodes, ne)
	}
	return rebuild(&e, nodes)
}

// cut shortens s to at most n bytes, at a UTF-8 boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// statusError is a decoded error of a status that has no structured form:
// its message, and the sentinel errors.Is finds.
type statusError struct {
	msg  string
	kind error
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.kind }

// rebuild makes the error a host sees from its record.
func rebuild(e *errorRecord, nodes []*engine.NodeError) error {
	var kind error
	switch e.Status {
	case OK:
		return nil
	case InvalidArgument:
		return &engine.ArgumentError{Arg: e.A, Reason: e.B, Bound: e.Bound, Limit: e.Limit, Unit: e.Unit, Got: e.Got}
	case Unavailable:
		return &engine.UnavailableError{Op: e.A, Reason: e.B, Nodes: nodes}
	case NotAcquired:
		kind = engine.ErrNotAcquired
	case Lost:
		kind = engine.ErrLost
	case Canceled:
		// Both end an operation with LOCK_CANCELED; the message tells a
		// Close from a Cancel.
		kind = engine.ErrCanceled
		if e.Message == engine.ErrClosed.Error() {
			kind = engine.ErrClosed
		}
	case InvalidHandle:
		kind = engine.ErrUnknownLock
	default:
		return errors.New(e.Message)
	}
	if e.Message == kind.Error() {
		return kind
	}
	return &statusError{msg: e.Message, kind: kind}
}
