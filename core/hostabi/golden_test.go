package hostabi

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strconv"
	"testing"

	"github.com/liblock/liblock/core/engine"
	time "github.com/liblock/liblock/core/internal/xtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The golden vectors (spec/golden.json): every event and action kind,
// encoded by this package's codec, with edge values (empty strings, handles
// of 2^53-1, negative durations, UTF-8 beyond ASCII, error records with
// per-node causes), and the values the bytes hold, by the spec's field
// names. The Node and Python tests encode the events and decode the actions
// with their generated codecs and compare with both.
//
// TestGolden checks, from spec/protocol.json alone, that the bytes are the
// fields in the spec's order and types (so the codec's field order is the
// spec's), that the codec decodes them back to the same values, and that
// golden.json is what these cases produce. After a change of the protocol:
//
//	go test ./core/hostabi -run TestGolden -update
var update = flag.Bool("update", false, "rewrite spec/golden.json")

const goldenPath = "spec/golden.json"

const goldenMaxHandle = 1<<53 - 1

type goldenCase struct {
	Name   string         `json:"name"`
	Kind   string         `json:"kind"`
	Hex    string         `json:"hex"`
	Fields map[string]any `json:"fields"`
}

type goldenFile struct {
	Comment string       `json:"comment"`
	Events  []goldenCase `json:"events"`
	Actions []goldenCase `json:"actions"`
}

func goldenEvents() []struct {
	name string
	ev   Event
} {
	return []struct {
		name string
		ev   Event
	}{
		{"acquire", Event{Kind: EvAcquire, Resource: "orders:42", TTLms: 10000, WaitMS: 2500, AutoExtend: true}},
		{"acquire-empty-negative", Event{Kind: EvAcquire, Resource: "", TTLms: -1, WaitMS: -(1 << 40)}},
		{"acquire-fence-token-unicode", Event{Kind: EvAcquire, Resource: "заказы/订单/🔒", TTLms: 86400000, WaitMS: 0,
			Fence: true, Token: "a-token-of-my-own-é-0001"}},
		{"acquire-permits-read", Event{Kind: EvAcquire, Resource: "pool", TTLms: 5000, Permits: 3, Mode: engine.ModeRead}},
		{"acquire-write-token", Event{Kind: EvAcquire, Resource: "doc", TTLms: 5000, Mode: engine.ModeWrite, Token: "0123456789abcdef"}},
		{"acquire-resources", Event{Kind: EvAcquire, Resource: "a", TTLms: 5000, WaitMS: 100, Fence: true, Permits: 2, Resources: []string{"b", "", "ü🔒"}}},
		{"acquire-token", Event{Kind: EvAcquire, Resource: "r", TTLms: 1, WaitMS: 86400000, AutoExtend: true, Token: "0123456789abcdef"}},
		{"extend", Event{Kind: EvExtend, Lock: goldenMaxHandle, TTLms: 5000}},
		{"extend-negative", Event{Kind: EvExtend, Lock: 1, TTLms: -5000}},
		{"release", Event{Kind: EvRelease, Lock: goldenMaxHandle}},
		{"cancel", Event{Kind: EvCancel, Op: 0x123456789a}},
		{"forget", Event{Kind: EvForget, Lock: 1}},
		{"close", Event{Kind: EvClose}},
		{"opened", Event{Kind: EvOpened, Conn: 1<<32 - 1}},
		{"received", Event{Kind: EvReceived, Conn: 3, Data: []byte("+OK\r\n")}},
		{"received-empty", Event{Kind: EvReceived, Conn: 0, Data: []byte{}}},
		{"conn-failed", Event{Kind: EvConnFailed, Conn: 9, Message: "connect ECONNREFUSED 127.0.0.1:6379 — refusé"}},
		{"conn-failed-empty", Event{Kind: EvConnFailed, Conn: 9}},
		{"tick", Event{Kind: EvTick}},
		{"lock-info", Event{Kind: EvLockInfo, Lock: goldenMaxHandle - 1}},
		{"inspect", Event{Kind: EvInspect, Resource: "é"}},
		{"inspect-empty", Event{Kind: EvInspect}},
		{"inspect-permits", Event{Kind: EvInspect, Resource: "pool", Permits: 1<<32 - 1}},
		{"inspect-rw", Event{Kind: EvInspect, Resource: "doc", Mode: engine.ModeWrite}},
		{"report-awaiting", Event{Kind: EvReportAwaiting}},
		{"acquire-election", Event{Kind: EvAcquire, Resource: "leader", TTLms: 10000, WaitMS: 86400000, AutoExtend: true, Fence: true, Election: true, Value: "replica-2 ✓"}},
		{"inspect-election", Event{Kind: EvInspect, Resource: "leader", Election: true}},
		{"watch", Event{Kind: EvWatch, Resource: "leader", PollMS: 1000}},
		{"watch-default", Event{Kind: EvWatch, Resource: "é"}},
		{"unwatch", Event{Kind: EvUnwatch, Op: goldenMaxHandle}},
		{"reports-warnings", Event{Kind: EvReports, Level: 1}},
	}
}

func goldenActions() []struct {
	name string
	a    Action
} {
	unavailable := &engine.UnavailableError{Op: "acquire", Reason: "2 of 3 nodes failed", Nodes: []*engine.NodeError{
		{Node: 0, Addr: "127.0.0.1:1", Err: errors.New("dial tcp 127.0.0.1:1: connection refused")},
		{Node: 2, Addr: "[::1]:3", Err: engine.ErrNoAnswer},
	}}
	act := func(a engine.Action) Action { return Action{Action: a} }
	return []struct {
		name string
		a    Action
	}{
		{"open-tls", act(engine.Action{Kind: ActOpen, Conn: 1, Node: 63, Dial: &engine.Dial{
			Network: "tcp", Addr: "[::1]:6380", TLS: true, SkipVerify: true, ServerName: "::1"}})},
		{"open-unix", act(engine.Action{Kind: ActOpen, Conn: 1<<32 - 1, Node: 0, Dial: &engine.Dial{
			Network: "unix", Addr: "/tmp/rédis.sock"}})},
		{"write", act(engine.Action{Kind: ActWrite, Conn: 2, Data: []byte("*1\r\n$4\r\nPING\r\n")})},
		{"write-empty", act(engine.Action{Kind: ActWrite, Conn: 2, Data: []byte{}})},
		{"close", act(engine.Action{Kind: ActClose, Conn: 4})},
		{"done", act(engine.Action{Kind: ActDone, Op: goldenMaxHandle, Lock: goldenMaxHandle - 1})},
		{"done-unavailable", act(engine.Action{Kind: ActDone, Op: 7, Err: unavailable})},
		{"done-not-acquired", act(engine.Action{Kind: ActDone, Op: 8, Err: engine.ErrNotAcquired})},
		{"done-canceled", act(engine.Action{Kind: ActDone, Op: 9, Err: engine.ErrCanceled})},
		{"done-closed", act(engine.Action{Kind: ActDone, Op: 10, Err: engine.ErrClosed})},
		{"lost", act(engine.Action{Kind: ActLost, Lock: 11, Err: engine.ErrLost})},
		{"timer", act(engine.Action{Kind: ActTimer, Delay: 1500 * time.Microsecond})},
		{"timer-negative", act(engine.Action{Kind: ActTimer, Delay: -2 * time.Microsecond})},
		{"closed", act(engine.Action{Kind: ActClosed})},
		{"started", act(engine.Action{Kind: ActStarted, Op: 1})},
		{"rejected-argument", act(engine.Action{Kind: ActRejected, Err: &engine.ArgumentError{
			Arg: "ttl", Reason: "must be between 1ms and 24h0m0s, got 0s", Bound: engine.BoundMin, Limit: 1, Unit: "ms", Got: 0}})},
		{"rejected-argument-max", act(engine.Action{Kind: ActRejected, Err: &engine.ArgumentError{
			Arg: "ttl_ms", Reason: "must be between 1 and 86400000, got 9007199254740991", Bound: engine.BoundMax, Limit: 86400000, Unit: "ms", Got: goldenMaxHandle}})},
		{"rejected-argument-no-bound", act(engine.Action{Kind: ActRejected, Err: &engine.ArgumentError{
			Arg: "resources[3]", Reason: "duplicates resources[1] (\"ü\")"}})},
		{"done-argument-bytes", act(engine.Action{Kind: ActDone, Op: 16, Err: &engine.ArgumentError{
			Arg: "value", Reason: "longer than 4096 bytes, got 4097", Bound: engine.BoundMax, Limit: 4096, Unit: "bytes", Got: 4097}})},
		{"rejected-handle", act(engine.Action{Kind: ActRejected, Err: engine.ErrUnknownLock})},
		{"rejected-internal", act(engine.Action{Kind: ActRejected, Err: errors.New("liblock: internal: ünïcödé ✓")})},
		{"canceled", Action{Action: engine.Action{Kind: ActCanceled}, WasPending: true}},
		{"canceled-not-pending", Action{Action: engine.Action{Kind: ActCanceled}}},
		{"info", Action{Action: engine.Action{Kind: ActInfo}, Info: engine.LockInfo{
			Resource: "r", Key: "p:r", Token: "worker-7/0123456789abcdef", TTL: 10 * time.Second, Validity: 9990 * time.Millisecond,
			AutoExtend: true}}},
		{"info-lost", Action{Action: engine.Action{Kind: ActInfo}, Info: engine.LockInfo{
			Resource: "", Key: "", Token: "", TTL: 1000 * time.Millisecond, Validity: -1 * time.Millisecond,
			Released: true, Lost: engine.ErrLost}}},
		{"inspected-held", act(engine.Action{Kind: ActInspected, Op: goldenMaxHandle, Inspection: &engine.Inspection{
			Held: true, Validity: 9895 * time.Millisecond, Owner: "worker-7", Nodes: []engine.NodeState{
				{Node: 0, Addr: "127.0.0.1:1", Locked: true, Holder: true, Owner: "worker-7", TTL: 9998 * time.Millisecond},
				{Node: 1, Addr: "127.0.0.1:2", Locked: true, TTL: engine.NoExpiry},
				{Node: 2, Addr: "[::1]:3", Err: errors.New("dial tcp: connection refused")},
			}}})},
		{"inspected-no-expiry", act(engine.Action{Kind: ActInspected, Op: 10, Inspection: &engine.Inspection{
			Held: true, Validity: engine.NoExpiry, Owner: "ügo"}})},
		{"inspected-not-held", act(engine.Action{Kind: ActInspected, Op: 11, Inspection: &engine.Inspection{}})},
		{"inspected-permits", act(engine.Action{Kind: ActInspected, Op: 15, Inspection: &engine.Inspection{
			Held: true, Validity: 900 * time.Millisecond, Owner: "w", Permits: 3, InUse: 2, Holders: []engine.Holder{
				{Slot: 0, Owner: "w", Validity: 900 * time.Millisecond}, {Slot: 2, Owner: "", Validity: engine.NoExpiry}}}})},
		{"inspected-readers", act(engine.Action{Kind: ActInspected, Op: 17, Inspection: &engine.Inspection{
			Held: true, Validity: 4000 * time.Millisecond, Owner: "writer", Nodes: []engine.NodeState{
				{Node: 0, Addr: "127.0.0.1:1", Locked: true, Holder: true, Owner: "writer", TTL: 4100 * time.Millisecond}},
			Readers: []engine.ReaderState{{Owner: "reader-1", Validity: 900 * time.Millisecond}, {Owner: "", Validity: engine.NoExpiry}}}})},
		{"done-fence", Action{Action: engine.Action{Kind: ActDone, Op: 12, Lock: goldenMaxHandle}, Info: engine.LockInfo{Fence: 1<<40 + 5}}},
		{"done-reentered", Action{Action: engine.Action{Kind: ActDone, Op: 13, Lock: 4}, Info: engine.LockInfo{Reentered: true}}},
		{"awaiting", Action{Action: engine.Action{Kind: ActAwaiting, Conn: 5}, Awaiting: true}},
		{"awaiting-not", Action{Action: engine.Action{Kind: ActAwaiting, Conn: 5}}},
		{"inspected-leader", act(engine.Action{Kind: ActInspected, Op: 14, Inspection: &engine.Inspection{
			Held: true, Validity: 7000 * time.Millisecond, Owner: "host-a", Term: 1<<33 + 7, Value: "replica-1 ✓"}})},
		{"leader", act(engine.Action{Kind: ActLeader, Op: goldenMaxHandle, Inspection: &engine.Inspection{
			Held: true, Term: 42, Validity: 6543 * time.Millisecond, Owner: "host-b", Value: "http://10.0.0.2:8080"}})},
		{"leader-none", act(engine.Action{Kind: ActLeader, Op: 3, Inspection: &engine.Inspection{}})},
		{"report-acquire-end", Action{Action: engine.Action{Kind: ActReport, Op: 7, Lock: 9, Rep: engine.Report{
			What: engine.RepAcquireEnd, Outcome: 0, Attempts: 3, Duration: 1500 * time.Microsecond}}}},
		{"report-node-timeout", Action{Action: engine.Action{Kind: ActReport, Op: 7, Rep: engine.Report{
			What: engine.RepNode, Outcome: engine.NodeTimeout, Node: 2, Duration: 50 * time.Millisecond}}}},
	}
}

// eventFields is what an event's bytes hold, by the spec's field names.
func eventFields(ev Event) map[string]any {
	switch ev.Kind {
	case EvAcquire:
		flags := 0
		if ev.AutoExtend {
			flags |= AcquireAutoExtend
		}
		if ev.Fence {
			flags |= AcquireFence
		}
		f := map[string]any{"resource": ev.Resource, "ttl_ms": ev.TTLms, "wait_ms": ev.WaitMS}
		if ev.Token != "" {
			flags |= AcquireToken
			f["token"] = ev.Token
		}
		flags |= kindFields(ev, f)
		if len(ev.Resources) > 0 {
			flags |= AcquireResources
			rs := []any{}
			for _, r := range ev.Resources {
				rs = append(rs, map[string]any{"resource": r})
			}
			f["resources"] = rs
		}
		if ev.Election {
			flags |= AcquireElection
			f["value"] = ev.Value
		}
		f["flags"] = flags
		return f
	case EvExtend:
		return map[string]any{"lock": ev.Lock, "ttl_ms": ev.TTLms}
	case EvRelease, EvForget, EvLockInfo:
		return map[string]any{"lock": ev.Lock}
	case EvCancel:
		return map[string]any{"op": ev.Op}
	case EvOpened:
		return map[string]any{"conn": ev.Conn}
	case EvReceived:
		return map[string]any{"conn": ev.Conn, "data": hex.EncodeToString(ev.Data)}
	case EvConnFailed:
		return map[string]any{"conn": ev.Conn, "message": ev.Message}
	case EvInspect:
		f := map[string]any{"resource": ev.Resource}
		f["flags"] = kindFields(ev, f) | b2i(ev.Election)*InspectElection
		return f
	case EvWatch:
		return map[string]any{"name": ev.Resource, "poll_ms": ev.PollMS}
	case EvUnwatch:
		return map[string]any{"op": ev.Op}
	case EvReports:
		return map[string]any{"level": ev.Level}
	}
	return map[string]any{}
}

// kindFields sets permits in f and returns the PERMITS, READ and WRITE bits.
func kindFields(ev Event, f map[string]any) int {
	flags := 0
	if ev.Permits != 0 {
		flags |= AcquirePermits
		f["permits"] = ev.Permits
	}
	switch ev.Mode {
	case engine.ModeRead:
		flags |= AcquireRead
	case engine.ModeWrite:
		flags |= AcquireWrite
	}
	return flags
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// errorFields is what an error record holds (nil: status 0).
func errorFields(err error) any {
	if err == nil {
		return nil
	}
	f := map[string]any{"status": StatusOf(err), "message": err.Error(), "a": "", "b": "", "nodes": []any{},
		"bound": "", "limit": 0, "unit": "", "got": 0}
	var ae *engine.ArgumentError
	var ue *engine.UnavailableError
	switch {
	case errors.As(err, &ae):
		f["a"], f["b"] = ae.Arg, ae.Reason
		f["bound"], f["limit"], f["unit"], f["got"] = ae.Bound, ae.Limit, ae.Unit, ae.Got
	case errors.As(err, &ue):
		f["a"], f["b"] = ue.Op, ue.Reason
		nodes := []any{}
		for _, n := range ue.Nodes {
			nodes = append(nodes, map[string]any{"node": n.Node, "addr": n.Addr, "cause": n.Err.Error()})
		}
		f["nodes"] = nodes
	}
	return f
}

// actionFields is what an action's bytes hold, by the spec's field names.
func actionFields(a Action) map[string]any {
	switch a.Kind {
	case ActOpen:
		return map[string]any{"conn": a.Conn, "node": a.Node, "flags": b2i(a.Dial.TLS)*OpenTLS | b2i(a.Dial.SkipVerify)*OpenSkipVerify,
			"network": a.Dial.Network, "addr": a.Dial.Addr, "server_name": a.Dial.ServerName}
	case ActWrite:
		return map[string]any{"conn": a.Conn, "data": hex.EncodeToString(a.Data)}
	case ActClose:
		return map[string]any{"conn": a.Conn}
	case ActDone:
		return map[string]any{"op": a.Op, "lock": a.Lock, "fence": a.Info.Fence, "reentered": b2i(a.Info.Reentered), "error": errorFields(a.Err)}
	case ActLost:
		return map[string]any{"lock": a.Lock, "error": errorFields(a.Err)}
	case ActTimer:
		return map[string]any{"delay_us": a.Delay.Microseconds()}
	case ActStarted:
		return map[string]any{"op": a.Op}
	case ActRejected:
		return map[string]any{"error": errorFields(a.Err)}
	case ActCanceled:
		return map[string]any{"was_pending": b2i(a.WasPending)}
	case ActInfo:
		in := a.Info
		return map[string]any{"resource": in.Resource, "key": in.Key, "token": in.Token, "ttl_ms": in.TTL.Milliseconds(),
			"validity_ms": in.Validity.Milliseconds(), "flags": b2i(in.AutoExtend)*InfoAutoExtend | b2i(in.Released)*InfoReleased,
			"error": errorFields(in.Lost)}
	case ActInspected:
		in := a.Inspection
		nodes := []any{}
		for _, n := range in.Nodes {
			cause := ""
			if n.Err != nil {
				cause = n.Err.Error()
			}
			nodes = append(nodes, map[string]any{"node": n.Node, "addr": n.Addr, "flags": b2i(n.Locked)*NodeLocked | b2i(n.Holder)*NodeHolder,
				"owner": n.Owner, "ttl_ms": millisOrNone(n.TTL), "cause": cause})
		}
		holders := []any{}
		for _, h := range in.Holders {
			holders = append(holders, map[string]any{"slot": h.Slot, "owner": h.Owner, "validity_ms": millisOrNone(h.Validity), "mode": 0})
		}
		for _, r := range in.Readers {
			holders = append(holders, map[string]any{"slot": 0, "owner": r.Owner, "validity_ms": millisOrNone(r.Validity), "mode": 1})
		}
		return map[string]any{"op": a.Op, "held": b2i(in.Held), "validity_ms": millisOrNone(in.Validity), "owner": in.Owner, "nodes": nodes,
			"permits": in.Permits, "holders": holders, "term": in.Term, "value": in.Value}
	case ActLeader:
		in := a.Inspection
		return map[string]any{"op": a.Op, "held": b2i(in.Held), "term": in.Term, "validity_ms": millisOrNone(in.Validity), "owner": in.Owner, "value": in.Value}
	case ActAwaiting:
		return map[string]any{"conn": a.Conn, "awaiting": b2i(a.Awaiting)}
	case ActReport:
		return map[string]any{"what": a.Rep.What, "outcome": a.Rep.Outcome, "op": a.Op, "lock": a.Lock,
			"node": a.Rep.Node, "attempts": a.Rep.Attempts, "duration_us": a.Rep.Duration.Microseconds()}
	}
	return map[string]any{}
}

// The spec, as much of it as the vectors need.
type specField struct {
	Name   string      `json:"name"`
	Type   string      `json:"type"`
	Flags  []specFlag  `json:"flags"`
	IfFlag string      `json:"if_flag"`
	Items  []specField `json:"items"`
}

type specFlag struct {
	Bit  int    `json:"bit"`
	Name string `json:"name"`
}

type specMessage struct {
	Kind   int         `json:"kind"`
	Name   string      `json:"name"`
	Fields []specField `json:"fields"`
}

type protocolSpec struct {
	Events  []specMessage `json:"events"`
	Actions []specMessage `json:"actions"`
	Error   struct {
		Fields []specField `json:"fields"`
	} `json:"error"`
}

func loadSpec(t *testing.T) *protocolSpec {
	b, err := os.ReadFile("spec/protocol.json")
	require.NoError(t, err)
	var s protocolSpec
	require.NoError(t, json.Unmarshal(b, &s))
	return &s
}

// specEncoder writes values (as JSON decodes them, numbers as json.Number)
// by the spec's field lists alone.
type specEncoder struct {
	s   *protocolSpec
	out []byte
	err error
}

func (e *specEncoder) fail(msg string) {
	if e.err == nil {
		e.err = errors.New(msg)
	}
}

func (e *specEncoder) int(v any, bits int) {
	n, ok := v.(json.Number)
	if !ok {
		e.fail("not a number: " + strconv.Quote(toJSON(v)))
		return
	}
	x, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		e.fail(err.Error())
		return
	}
	for i := 0; i < bits/8; i++ {
		e.out = append(e.out, byte(uint64(x)>>(8*i)))
	}
}

func (e *specEncoder) fields(fs []specField, vals map[string]any) {
	flags := int64(0)
	for _, f := range fs {
		v, present := vals[f.Name]
		if f.IfFlag != "" {
			bit := int64(0)
			for _, g := range fs {
				for _, fl := range g.Flags {
					if fl.Name == f.IfFlag {
						bit = 1 << fl.Bit
					}
				}
			}
			if flags&bit == 0 {
				if present {
					e.fail(f.Name + " present without its flag")
				}
				continue
			}
		}
		if !present {
			e.fail("no field " + f.Name)
			return
		}
		switch f.Type {
		case "u8":
			e.int(v, 8)
			if f.Flags != nil {
				flags, _ = v.(json.Number).Int64()
			}
		case "u16":
			e.int(v, 16)
		case "u32", "i32":
			e.int(v, 32)
		case "u64", "i64":
			e.int(v, 64)
		case "str":
			s, _ := v.(string)
			e.int(json.Number(strconv.Itoa(len(s))), 32)
			e.out = append(e.out, s...)
		case "bytes":
			s, _ := v.(string)
			b, err := hex.DecodeString(s)
			if err != nil {
				e.fail(err.Error())
			}
			e.int(json.Number(strconv.Itoa(len(b))), 32)
			e.out = append(e.out, b...)
		case "error":
			if v == nil {
				v = map[string]any{"status": json.Number("0"), "message": "", "a": "", "b": "", "nodes": []any{},
					"bound": "", "limit": json.Number("0"), "unit": "", "got": json.Number("0")}
			}
			e.fields(e.s.Error.Fields, v.(map[string]any))
		case "list":
			items, _ := v.([]any)
			e.int(json.Number(strconv.Itoa(len(items))), 16)
			for _, it := range items {
				e.fields(f.Items, it.(map[string]any))
			}
		default:
			e.fail("unknown type " + f.Type)
		}
	}
	if len(vals) > len(fs) {
		e.fail("more values than fields")
	}
}

func toJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// viaJSON is v as JSON decodes it (numbers as json.Number).
func viaJSON(t *testing.T, v any) any {
	d := json.NewDecoder(bytes.NewReader([]byte(toJSON(v))))
	d.UseNumber()
	var out any
	require.NoError(t, d.Decode(&out))
	return out
}

func TestGolden(t *testing.T) {
	s := loadSpec(t)
	g := goldenFile{Comment: "Golden vectors of the host protocol (spec/protocol.json), written by go test ./core/hostabi -run TestGolden -update: " +
		"each the hex bytes of one event or action as core/hostabi encodes it, and its fields by the spec's names " +
		"(bytes fields as hex; an error record null when its status is 0; a field with if_flag absent without its flag). " +
		"Checked by core/hostabi's TestGolden, bindings/node/test/protocol.test.js and bindings/python/tests/test_proto.py."}
	check := func(what string, m specMessage, bin []byte, fields map[string]any) goldenCase {
		c := goldenCase{Name: what, Kind: m.Name, Hex: hex.EncodeToString(bin), Fields: fields}
		e := &specEncoder{s: s, out: []byte{byte(m.Kind)}}
		e.fields(m.Fields, viaJSON(t, fields).(map[string]any))
		if assert.NoError(t, e.err, "%s: the spec cannot encode %s", what, toJSON(fields)) {
			assert.Equal(t, bin, e.out, "%s: what the codec wrote (expected) and what the spec's field order and types make (actual)", what)
		}
		return c
	}
	for _, c := range goldenEvents() {
		bin := AppendEvent(nil, c.ev)
		fields := eventFields(c.ev)
		g.Events = append(g.Events, check(c.name, s.Events[c.ev.Kind-1], bin, fields))
		back, err := DecodeEvent(bin)
		if assert.NoError(t, err, c.name) {
			assert.Equal(t, toJSON(fields), toJSON(eventFields(back)), "%s: decoded", c.name)
		}
	}
	for _, c := range goldenActions() {
		a := c.a
		bin, whole := appendAction(nil, &a, MinOut)
		require.True(t, whole, "%s: not written whole", c.name)
		fields := actionFields(c.a)
		var m specMessage
		for _, x := range s.Actions {
			if x.Kind == int(c.a.Kind) {
				m = x
			}
		}
		g.Actions = append(g.Actions, check(c.name, m, bin, fields))
		back, err := Decode(nil, bin)
		if assert.NoError(t, err, c.name) && assert.Len(t, back, 1, "%s: actions", c.name) {
			assert.Equal(t, toJSON(fields), toJSON(actionFields(back[0])), "%s: decoded", c.name)
		}
	}
	for _, list := range [][]goldenCase{g.Events, g.Actions} {
		seen := map[string]bool{}
		for _, c := range list {
			seen[c.Kind] = true
		}
		ms := s.Events
		if len(list) > 0 && &list[0] == &g.Actions[0] {
			ms = s.Actions
		}
		for _, m := range ms {
			assert.True(t, seen[m.Name], "no golden vector of %s", m.Name)
		}
	}
	out, err := json.MarshalIndent(g, "", " ")
	require.NoError(t, err)
	out = append(out, '\n')
	if *update {
		require.NoError(t, os.WriteFile(goldenPath, out, 0o644))
		return
	}
	have, err := os.ReadFile(goldenPath)
	require.NoError(t, err, "go test ./core/hostabi -run TestGolden -update")
	// Not assert.Equal: the file is long; the message says how to see the diff.
	assert.True(t, bytes.Equal(have, out), "%s is stale: it differs from what these cases encode (go test ./core/hostabi -run TestGolden -update, and look at the diff)", goldenPath)
}
