package hostabi

import (
	"strconv"
	"unicode/utf8"

	"github.com/liblock/liblock/core/engine"
	errors "github.com/liblock/liblock/core/internal/xerrors"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// The byte encoding of PROTOCOL.md: events (host → engine) and actions
// (engine → host). Little-endian, fixed-width integers; str and bytes are a
// u32 length and the bytes.

// EventKind says what an event tells the engine.
type EventKind uint8

// The kinds of events and actions, the flags and the status codes are in
// protocol_gen.go, generated from spec/protocol.json; golden_test.go checks
// this file's field order against the spec.

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

// AppendEvent appends ev, encoded, to b.
func AppendEvent(b []byte, ev Event) []byte {
	b = append(b, byte(ev.Kind))
	switch ev.Kind {
	case EvAcquire:
		b = appendStr(b, ev.Resource)
		b = appendU64(b, uint64(ev.TTLms))
		b = appendU64(b, uint64(ev.WaitMS))
		flags := boolByte(ev.AutoExtend) * AcquireAutoExtend
		if ev.Fence {
			flags |= AcquireFence
		}
		if ev.Token != "" {
			flags |= AcquireToken
		}
		flags |= kindFlags(ev)
		if len(ev.Resources) > 0 {
			flags |= AcquireResources
		}
		if ev.Election {
			flags |= AcquireElection
		}
		b = append(b, flags)
		if ev.Token != "" {
			b = appendStr(b, ev.Token)
		}
		if ev.Permits != 0 {
			b = appendU32(b, ev.Permits)
		}
		if len(ev.Resources) > 0 {
			b = appendU16(b, uint16(len(ev.Resources)))
			for _, r := range ev.Resources {
				b = appendStr(b, r)
			}
		}
		if ev.Election {
			b = appendStr(b, ev.Value)
		}
	case EvInspect:
		b = appendStr(b, ev.Resource)
		flags := kindFlags(ev)
		if ev.Election {
			flags |= InspectElection
		}
		b = append(b, flags)
		if ev.Permits != 0 {
			b = appendU32(b, ev.Permits)
		}
	case EvWatch:
		b = appendStr(b, ev.Resource)
		b = appendU64(b, uint64(ev.PollMS))
	case EvUnwatch:
		b = appendU64(b, ev.Op)
	case EvReports:
		b = append(b, ev.Level)
	case EvExtend:
		b = appendU64(b, ev.Lock)
		b = appendU64(b, uint64(ev.TTLms))
	case EvRelease, EvForget, EvLockInfo:
		b = appendU64(b, ev.Lock)
	case EvCancel:
		b = appendU64(b, ev.Op)
	case EvOpened:
		b = appendU32(b, ev.Conn)
	case EvReceived:
		b = appendU32(b, ev.Conn)
		b = appendU32(b, uint32(len(ev.Data)))
		b = append(b, ev.Data...)
	case EvConnFailed:
		b = appendU32(b, ev.Conn)
		b = appendStr(b, ev.Message)
	}
	return b
}

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
	switch ev.Kind {
	case EvAcquire:
		ev.Resource = r.str()
		ev.TTLms = int64(r.u64())
		ev.WaitMS = int64(r.u64())
		flags := r.u8()
		if flags&^(AcquireAutoExtend|AcquireFence|AcquireToken|AcquirePermits|AcquireRead|AcquireWrite|AcquireResources|AcquireElection) != 0 && r.err == nil {
			return Event{}, errors.New("ACQUIRE: unknown flags " + strconv.Itoa(int(flags)))
		}
		ev.AutoExtend, ev.Fence = flags&AcquireAutoExtend != 0, flags&AcquireFence != 0
		if flags&AcquireToken != 0 {
			ev.Token = r.str()
			if ev.Token == "" && r.err == nil {
				return Event{}, errors.New("ACQUIRE: an empty token with the token flag")
			}
		}
		if err := readKind(&r, &ev, flags, "ACQUIRE"); err != nil {
			return Event{}, err
		}
		if flags&AcquireResources != 0 {
			n := int(r.u16())
			if n == 0 && r.err == nil {
				return Event{}, errors.New("ACQUIRE: an empty resources list with the resources flag")
			}
			for i := 0; i < n && r.err == nil; i++ {
				ev.Resources = append(ev.Resources, r.str())
			}
		}
		if flags&AcquireElection != 0 {
			ev.Election, ev.Value = true, r.str()
		}
	case EvInspect:
		ev.Resource = r.str()
		flags := r.u8()
		if flags&^(InspectPermits|InspectRead|InspectWrite|InspectElection) != 0 && r.err == nil {
			return Event{}, errors.New("INSPECT: unknown flags " + strconv.Itoa(int(flags)))
		}
		if err := readKind(&r, &ev, flags, "INSPECT"); err != nil {
			return Event{}, err
		}
		ev.Election = flags&InspectElection != 0
	case EvWatch:
		ev.Resource = r.str()
		ev.PollMS = int64(r.u64())
	case EvUnwatch:
		ev.Op = r.u64()
	case EvReports:
		ev.Level = r.u8()
	case EvExtend:
		ev.Lock = r.u64()
		ev.TTLms = int64(r.u64())
	case EvRelease, EvForget, EvLockInfo:
		ev.Lock = r.u64()
	case EvCancel:
		ev.Op = r.u64()
	case EvClose, EvTick, EvReportAwaiting:
	case EvOpened:
		ev.Conn = r.u32()
	case EvReceived:
		ev.Conn = r.u32()
		ev.Data = r.bytes()
	case EvConnFailed:
		ev.Conn = r.u32()
		ev.Message = r.str()
	default:
		return Event{}, errors.New("unknown event kind " + strconv.Itoa(int(b[0])))
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
	start := len(b)
	switch a.Kind {
	case engine.ActWrite:
		const head = 1 + 4 + 4
		if room < head+1 && len(a.Data) > 0 || room < head {
			return b, false
		}
		n := min(len(a.Data), room-head)
		b = append(b, byte(a.Kind))
		b = appendU32(b, uint32(a.Conn))
		b = appendU32(b, uint32(n))
		b = append(b, a.Data[:n]...)
		a.Data = a.Data[n:]
		return b, len(a.Data) == 0
	case engine.ActOpen:
		b = append(b, byte(a.Kind))
		b = appendU32(b, uint32(a.Conn))
		b = appendU32(b, uint32(a.Node))
		var flags byte
		d := a.Dial
		if d == nil {
			d = &engine.Dial{}
		}
		if d.TLS {
			flags |= OpenTLS
		}
		if d.SkipVerify {
			flags |= OpenSkipVerify
		}
		b = append(b, flags)
		b = appendStr(b, d.Network)
		b = appendStr(b, d.Addr)
		b = appendStr(b, d.ServerName)
	case engine.ActClose:
		b = append(b, byte(a.Kind))
		b = appendU32(b, uint32(a.Conn))
	case engine.ActDone:
		b = append(b, byte(a.Kind))
		b = appendU64(b, uint64(a.Op))
		b = appendU64(b, uint64(a.Lock))
		b = appendU64(b, uint64(a.Info.Fence))
		b = append(b, boolByte(a.Info.Reentered))
		b = appendError(b, a.Err)
	case engine.ActLost:
		b = append(b, byte(a.Kind))
		b = appendU64(b, uint64(a.Lock))
		b = appendError(b, a.Err)
	case engine.ActTimer:
		b = append(b, byte(a.Kind))
		b = appendU64(b, uint64(a.Delay.Microseconds()))
	case engine.ActClosed:
		b = append(b, byte(a.Kind))
	case ActStarted:
		b = append(b, byte(a.Kind))
		b = appendU64(b, uint64(a.Op))
	case ActRejected:
		b = append(b, byte(a.Kind))
		b = appendError(b, a.Err)
	case ActCanceled:
		b = append(b, byte(a.Kind), boolByte(a.WasPending))
	case ActAwaiting:
		b = append(b, byte(a.Kind))
		b = appendU32(b, uint32(a.Conn))
		b = append(b, boolByte(a.Awaiting))
	case engine.ActReport:
		b = appendReport(b, &a.Action)
	case ActInspected:
		in := a.Inspection
		b = append(b, byte(a.Kind))
		b = appendU64(b, uint64(a.Op))
		b = append(b, boolByte(in.Held))
		b = appendU64(b, uint64(millisOrNone(in.Validity)))
		b = appendStr(b, cut(in.Owner, maxErrField))
		b = append(b, byte(len(in.Nodes)), byte(len(in.Nodes)>>8))
		for _, n := range in.Nodes {
			b = append(b, byte(n.Node), byte(n.Node>>8))
			b = appendStr(b, cut(n.Addr, maxNodeAddr))
			var flags byte
			if n.Locked {
				flags |= NodeLocked
			}
			if n.Holder {
				flags |= NodeHolder
			}
			b = append(b, flags)
			b = appendStr(b, cut(n.Owner, maxNodeAddr))
			b = appendU64(b, uint64(millisOrNone(n.TTL)))
			cause := ""
			if n.Err != nil {
				cause = cut(n.Err.Error(), maxNodeCause)
			}
			b = appendStr(b, cause)
		}
		// A semaphore's inspection: its count and held permits.
		b = appendU32(b, uint32(in.Permits))
		// Then a read-write lock's readers (protocol 4), as holders of
		// mode 1 without a slot; the engine never lists both kinds.
		readers := fitReaders(in, len(b)-start)
		nh := len(in.Holders) + len(readers)
		b = append(b, byte(nh), byte(nh>>8))
		for _, h := range in.Holders {
			b = appendU32(b, uint32(h.Slot))
			b = appendStr(b, cut(h.Owner, maxNodeAddr))
			b = appendU64(b, uint64(millisOrNone(h.Validity)))
			b = append(b, byte(engine.ModeExclusive))
		}
		for _, r := range readers {
			b = appendU32(b, 0)
			b = appendStr(b, cut(r.Owner, maxNodeAddr))
			b = appendU64(b, uint64(millisOrNone(r.Validity)))
			b = append(b, byte(engine.ModeRead))
		}
		b = appendU64(b, uint64(in.Term))
		b = appendStr(b, in.Value)
	case ActLeader:
		in := a.Inspection
		b = append(b, byte(a.Kind))
		b = appendU64(b, uint64(a.Op))
		b = append(b, boolByte(in.Held))
		b = appendU64(b, uint64(in.Term))
		b = appendU64(b, uint64(millisOrNone(in.Validity)))
		b = appendStr(b, cut(in.Owner, maxErrField))
		b = appendStr(b, in.Value)
	case ActInfo:
		in := &a.Info
		b = append(b, byte(a.Kind))
		b = appendStr(b, in.Resource)
		b = appendStr(b, in.Key)
		b = appendStr(b, in.Token)
		b = appendU64(b, uint64(in.TTL.Milliseconds()))
		b = appendU64(b, uint64(in.Validity.Milliseconds()))
		var flags byte
		if in.AutoExtend {
			flags |= InfoAutoExtend
		}
		if in.Released {
			flags |= InfoReleased
		}
		b = append(b, flags)
		b = appendError(b, in.Lost)
	default:
		panic("hostabi: unknown action kind " + strconv.Itoa(int(a.Kind)))
	}
	if len(b)-start > room {
		return b[:start], false
	}
	return b, true
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

// noError is the error record of no error: every field zero or empty.
var noError = make([]byte, 4+4+4+4+2+4+8+4+8)

// appendError encodes err: i32 status, str message, str a, str b, u16 n,
// n × (u16 node, str addr, str cause), then (protocol 4) str bound, i64
// limit, str unit, i64 got: an out-of-range argument's bound.
func appendError(b []byte, err error) []byte {
	if err == nil {
		return append(b, noError...)
	}
	b = appendU32(b, uint32(StatusOf(err)))
	b = appendStr(b, cut(err.Error(), maxErrMessage))
	var ae *engine.ArgumentError
	var ue *engine.UnavailableError
	switch {
	case errors.As(err, &ae):
		b = appendStr(b, cut(ae.Arg, maxErrField))
		b = appendStr(b, cut(ae.Reason, maxErrField))
		b = append(b, 0, 0)
		b = appendStr(b, ae.Bound) // "min", "max" or "": never long
		b = appendU64(b, uint64(ae.Limit))
		b = appendStr(b, cut(ae.Unit, maxNodeCause))
		return appendU64(b, uint64(ae.Got))
	case errors.As(err, &ue):
		b = appendStr(b, cut(ue.Op, maxErrField))
		b = appendStr(b, cut(ue.Reason, maxErrField))
		n := min(len(ue.Nodes), maxErrNodes)
		b = append(b, byte(n), byte(n>>8))
		for _, ne := range ue.Nodes[:n] {
			b = append(b, byte(ne.Node), byte(ne.Node>>8))
			b = appendStr(b, cut(ne.Addr, maxNodeAddr))
			cause := "<nil>"
			if ne.Err != nil {
				cause = ne.Err.Error()
			}
			b = appendStr(b, cut(cause, maxNodeCause))
		}
	default:
		b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	return append(b, noError[:4+8+4+8]...) // no bound
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
		switch a.Kind {
		case engine.ActOpen:
			a.Conn = engine.ConnID(r.u32())
			a.Node = int(r.u32())
			flags := r.u8()
			a.Dial = &engine.Dial{TLS: flags&OpenTLS != 0, SkipVerify: flags&OpenSkipVerify != 0}
			a.Dial.Network = r.str()
			a.Dial.Addr = r.str()
			a.Dial.ServerName = r.str()
		case engine.ActWrite:
			a.Conn = engine.ConnID(r.u32())
			a.Data = r.bytes()
		case engine.ActClose:
			a.Conn = engine.ConnID(r.u32())
		case engine.ActDone:
			a.Op = engine.OpID(r.u64())
			a.Lock = engine.LockID(r.u64())
			a.Info.Fence = int64(r.u64())
			a.Info.Reentered = r.u8() != 0
			a.Err = r.error()
		case engine.ActLost:
			a.Lock = engine.LockID(r.u64())
			a.Err = r.error()
		case engine.ActTimer:
			a.Delay = time.Duration(int64(r.u64())) * time.Microsecond
		case engine.ActClosed:
		case ActStarted:
			a.Op = engine.OpID(r.u64())
		case ActRejected:
			a.Err = r.error()
		case ActCanceled:
			a.WasPending = r.u8() != 0
		case ActAwaiting:
			a.Conn = engine.ConnID(r.u32())
			a.Awaiting = r.u8() != 0
		case engine.ActReport:
			readReport(&r, &a.Action)
		case ActInspected:
			in := &engine.Inspection{}
			a.Op = engine.OpID(r.u64())
			in.Held = r.u8() != 0
			in.Validity = durationOrNone(int64(r.u64()))
			in.Owner = r.str()
			n := int(r.u16())
			for i := 0; i < n && r.err == nil; i++ {
				ns := engine.NodeState{Node: int(r.u16()), Addr: r.str()}
				flags := r.u8()
				ns.Locked, ns.Holder = flags&NodeLocked != 0, flags&NodeHolder != 0
				ns.Owner = r.str()
				ns.TTL = durationOrNone(int64(r.u64()))
				if cause := r.str(); cause != "" {
					ns.Err = errors.New(cause)
				}
				in.Nodes = append(in.Nodes, ns)
			}
			in.Permits = int(r.u32())
			n = int(r.u16())
			for i := 0; i < n && r.err == nil; i++ {
				h := engine.Holder{Slot: int(r.u32()), Owner: r.str()}
				h.Validity = durationOrNone(int64(r.u64()))
				if engine.LockMode(r.u8()) == engine.ModeRead {
					// A reader: its token does not travel, nor how
					// many nodes hold it.
					in.Readers = append(in.Readers, engine.ReaderState{Owner: h.Owner, Validity: h.Validity})
					continue
				}
				in.Holders = append(in.Holders, h)
			}
			in.InUse = len(in.Holders)
			in.Term = int64(r.u64())
			in.Value = r.str()
			a.Inspection = in
		case ActLeader:
			in := &engine.Inspection{}
			a.Op = engine.OpID(r.u64())
			in.Held = r.u8() != 0
			in.Term = int64(r.u64())
			in.Validity = durationOrNone(int64(r.u64()))
			in.Owner = r.str()
			in.Value = r.str()
			a.Inspection = in
		case ActInfo:
			in := &a.Info
			in.Resource = r.str()
			in.Key = r.str()
			in.Token = r.str()
			in.TTL = time.Duration(int64(r.u64())) * time.Millisecond
			in.Validity = time.Duration(int64(r.u64())) * time.Millisecond
			flags := r.u8()
			in.AutoExtend, in.Released = flags&InfoAutoExtend != 0, flags&InfoReleased != 0
			in.Lost = r.error()
		default:
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

// statusError is a decoded error of a status that has no structured form:
// its message, and the sentinel errors.Is finds.
type statusError struct {
	msg  string
	kind error
}

func (e *statusError) Error() string { return e.msg }
func (e *statusError) Unwrap() error { return e.kind }

// bound is an error record's out-of-range fields (protocol 4).
type bound struct {
	bound, unit string
	limit, got  int64
}

// rebuild makes the error a host sees from its encoded parts.
func rebuild(status int32, msg, a, b string, nodes []*engine.NodeError, bd bound) error {
	var kind error
	switch status {
	case OK:
		return nil
	case InvalidArgument:
		return &engine.ArgumentError{Arg: a, Reason: b, Bound: bd.bound, Limit: bd.limit, Unit: bd.unit, Got: bd.got}
	case Unavailable:
		return &engine.UnavailableError{Op: a, Reason: b, Nodes: nodes}
	case NotAcquired:
		kind = engine.ErrNotAcquired
	case Lost:
		kind = engine.ErrLost
	case Canceled:
		// Both end an operation with LOCK_CANCELED; the message tells a
		// Close from a Cancel.
		kind = engine.ErrCanceled
		if msg == engine.ErrClosed.Error() {
			kind = engine.ErrClosed
		}
	case InvalidHandle:
		kind = engine.ErrUnknownLock
	default:
		return errors.New(msg)
	}
	if msg == kind.Error() {
		return kind
	}
	return &statusError{msg: msg, kind: kind}
}

// reader reads the encoding; the first error sticks and stops it.
type reader struct {
	b   []byte
	i   int
	err error
}

var errTruncated = errors.New("truncated")

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || len(r.b)-r.i < n {
		r.err = errTruncated
		return false
	}
	return true
}

func (r *reader) u8() byte {
	if !r.need(1) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	r.i += 2
	return uint16(r.b[r.i-2]) | uint16(r.b[r.i-1])<<8
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	p := r.b[r.i : r.i+4]
	r.i += 4
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
}

func (r *reader) u64() uint64 {
	lo := r.u32()
	return uint64(lo) | uint64(r.u32())<<32
}

func (r *reader) bytes() []byte {
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.b)-r.i) {
		r.err = errors.New("length " + strconv.FormatUint(uint64(n), 10) + " past the end")
		return nil
	}
	p := r.b[r.i : r.i+int(n) : r.i+int(n)]
	r.i += int(n)
	return p
}

func (r *reader) str() string { return string(r.bytes()) }

func (r *reader) error() error {
	status := int32(r.u32())
	msg, a, b := r.str(), r.str(), r.str()
	n := int(r.u16())
	var nodes []*engine.NodeError
	for i := 0; i < n && r.err == nil; i++ {
		ne := &engine.NodeError{Node: int(r.u16())}
		ne.Addr = r.str()
		if cause := r.str(); cause == engine.ErrNoAnswer.Error() {
			ne.Err = engine.ErrNoAnswer
		} else {
			ne.Err = errors.New(cause)
		}
		nodes = append(nodes, ne)
	}
	var bd bound
	bd.bound = r.str()
	bd.limit = int64(r.u64())
	bd.unit = r.str()
	bd.got = int64(r.u64())
	if r.err != nil {
		return nil
	}
	return rebuild(status, msg, a, b, nodes, bd)
}

func appendU16(b []byte, v uint16) []byte {
	return append(b, byte(v), byte(v>>8))
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendU64(b []byte, v uint64) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

func appendStr(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// kindFlags: the PERMITS, READ and WRITE bits of ev (the same bits in
// ACQUIRE and INSPECT).
func kindFlags(ev Event) uint8 {
	var f uint8
	if ev.Permits != 0 {
		f |= AcquirePermits
	}
	switch ev.Mode {
	case engine.ModeRead:
		f |= AcquireRead
	case engine.ModeWrite:
		f |= AcquireWrite
	}
	return f
}

// readKind reads what the PERMITS, READ and WRITE bits of flags announce.
func readKind(r *reader, ev *Event, flags uint8, what string) error {
	if flags&AcquirePermits != 0 {
		ev.Permits = r.u32()
		if ev.Permits == 0 && r.err == nil {
			return errors.New(what + ": permits 0 with the permits flag")
		}
	}
	switch flags & (AcquireRead | AcquireWrite) {
	case AcquireRead:
		ev.Mode = engine.ModeRead
	case AcquireWrite:
		ev.Mode = engine.ModeWrite
	case AcquireRead | AcquireWrite:
		if r.err == nil {
			return errors.New(what + ": both the read and the write flag")
		}
	}
	return nil
}
