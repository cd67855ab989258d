package hostabi

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/hostabitest"
	"github.com/liblock/liblock/core/testkit/redistest"
)

func argName(err error) string {
	var ae *engine.ArgumentError
	if errors.As(err, &ae) {
		return ae.Arg
	}
	return ""
}

func TestParseConfig(t *testing.T) {
	good := `{"nodes":["redis://127.0.0.1:1","unix:///tmp/r.sock"],"node_timeout_ms":75,"drift_factor":0.02,"key_prefix":"app:\u00e9\ud83d\ude00"}`
	cfg, err := ParseConfig(good)
	require.NoError(t, err)
	assert.Equal(t, []string{"redis://127.0.0.1:1", "unix:///tmp/r.sock"}, cfg.Nodes)
	assert.Equal(t, 75*time.Millisecond, cfg.NodeTimeout)
	require.NotNil(t, cfg.DriftFactor)
	assert.Equal(t, 0.02, *cfg.DriftFactor)
	assert.Equal(t, "app:é😀", cfg.KeyPrefix)
	ecfg, err := cfg.Engine()
	require.NoError(t, err)
	assert.Len(t, ecfg.Nodes, 2)

	for _, tc := range []struct{ in, arg string }{
		{``, "config"},
		{`[]`, "config"},
		{`null`, "config"},
		{`{"nodes":["redis://h:1"]} x`, "config"},
		{`{"Nodes":["redis://h:1"]}`, "config"},
		{`{"nodes":["redis://h:1"],"nodes":["redis://h:1"]}`, "config"},
		{`{"nodes":["redis://h:1"],"extra":1}`, "config"},
		{`{"nodes":null}`, "nodes"},
		{`{}`, "nodes"},
		{`{"nodes":"redis://h:1"}`, "nodes"},
		{`{"nodes":[1]}`, "nodes[0]"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":1.5}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":1.0}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":1e3}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":-1}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":0}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":"5"}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":3600000}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"drift_factor":"0.1"}`, "drift_factor"},
		{`{"nodes":["redis://h:1"],"drift_factor":0.5}`, "drift_factor"},
		{`{"nodes":["redis://h:1"],"drift_factor":1e999}`, "drift_factor"},
		{`{"nodes":["redis://h:1"],"key_prefix":1}`, "key_prefix"},
		{`{"nodes":["redis://h:1"],"key_prefix":"` + strings.Repeat("p", 257) + `"}`, "key_prefix"},
		{`{"nodes":["redis://h:1"],"key_prefix":"a` + "\x01" + `"}`, "config"},
		{`{"nodes":["redis://h:1"]`, "config"},
		{"{\"nodes\":[\"redis://h:1\"],\"key_prefix\":\"\xff\"}", "config"},
		{`{"nodes":[` + strings.Repeat(`"redis://h:1",`, 64) + `"redis://h:1"]}`, "nodes"},
	} {
		_, err := ParseConfig(tc.in)
		assert.ErrorIs(t, err, engine.ErrInvalidArgument, tc.in)
		assert.Equal(t, tc.arg, argName(err), tc.in)
		assert.Equal(t, InvalidArgument, StatusOf(err), tc.in)
	}
	// Node URLs are checked when resolved, naming their place.
	_, err = New(`{"nodes":["redis://h:1","http://h:2"]}`)
	assert.Equal(t, "nodes[1]", argName(err))
	_, err = New(`{"nodes":[]}`)
	assert.Equal(t, "nodes", argName(err))
}

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions(`{"wait_ms":250,"auto_extend":true}`, false)
	require.NoError(t, err)
	assert.Equal(t, AcquireOptions{Wait: 250 * time.Millisecond, AutoExtend: true}, o)
	o, err = ParseOptions("", true)
	require.NoError(t, err)
	assert.Equal(t, AcquireOptions{}, o)
	for _, in := range []string{``, `{"wait":1}`, `{"wait_ms":-1}`, `{"auto_extend":1}`, `{"wait_ms":1e3}`, `{"wait_ms":86400001}`, `{"wait_ms":01}`} {
		_, err := ParseOptions(in, false)
		assert.ErrorIs(t, err, engine.ErrInvalidArgument, in)
	}
	_, err = TTLFromMillis(0)
	assert.Equal(t, "ttl_ms", argName(err))
	_, err = WaitFromMillis(-1)
	assert.Equal(t, "wait_ms", argName(err))
}

func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int32
	}{
		{nil, OK},
		{engine.ErrNotAcquired, NotAcquired},
		{engine.ErrLost, Lost},
		{engine.InvalidArg("x", "y"), InvalidArgument},
		{&engine.UnavailableError{Op: "acquire"}, Unavailable},
		{engine.ErrCanceled, Canceled},
		{engine.ErrClosed, Canceled},
		{context.Canceled, Canceled},
		{context.DeadlineExceeded, Canceled},
		{engine.Wrap("x", engine.ErrUnknownLock), InvalidHandle},
		{ErrInvalidHandle, InvalidHandle},
		{errors.New("other"), Internal},
	} {
		assert.Equal(t, c.want, StatusOf(c.err), "%v", c.err)
	}
}

func TestEventRoundTrip(t *testing.T) {
	for _, ev := range []Event{
		{Kind: EvAcquire, Resource: "orders:42", TTLms: 10000, WaitMS: 5000, AutoExtend: true},
		{Kind: EvAcquire, Resource: "", TTLms: -1, WaitMS: 1 << 62},
		{Kind: EvExtend, Lock: 1<<53 - 1, TTLms: 3000},
		{Kind: EvRelease, Lock: 7},
		{Kind: EvCancel, Op: 9},
		{Kind: EvForget, Lock: 3},
		{Kind: EvClose},
		{Kind: EvOpened, Conn: 1 << 31},
		{Kind: EvReceived, Conn: 2, Data: []byte("+OK\r\n")},
		{Kind: EvReceived, Conn: 2, Data: []byte{}},
		{Kind: EvConnFailed, Conn: 4, Message: "connection refused é"},
		{Kind: EvTick},
		{Kind: EvLockInfo, Lock: 12},
		{Kind: EvReportAwaiting},
		{Kind: EvReports, Level: 2},
	} {
		got, err := DecodeEvent(AppendEvent(nil, ev))
		require.NoError(t, err, "%+v", ev)
		if len(ev.Data) == 0 && len(got.Data) == 0 {
			got.Data = ev.Data
		}
		assert.Equal(t, ev, got)
	}
}

func roundTrip(t *testing.T, a Action) Action {
	t.Helper()
	b, whole := appendAction(nil, &a, MinOut)
	require.True(t, whole)
	got, err := Decode(nil, b)
	require.NoError(t, err)
	require.Len(t, got, 1)
	return got[0]
}

func TestActionRoundTrip(t *testing.T) {
	for _, a := range []engine.Action{
		{Kind: engine.ActOpen, Conn: 3, Node: 2, Dial: &engine.Dial{Network: "tcp", Addr: "h:6380", TLS: true, ServerName: "h", SkipVerify: true}},
		{Kind: engine.ActOpen, Conn: 4, Node: 0, Dial: &engine.Dial{Network: "unix", Addr: "/tmp/s"}},
		{Kind: engine.ActWrite, Conn: 3, Data: []byte("*1\r\n$4\r\nPING\r\n")},
		{Kind: engine.ActClose, Conn: 3},
		{Kind: engine.ActDone, Op: 5, Lock: 6},
		{Kind: engine.ActTimer, Delay: 1500 * time.Microsecond},
		{Kind: engine.ActClosed},
		{Kind: ActStarted, Op: 1<<53 - 1},
	} {
		got := roundTrip(t, Action{Action: a})
		assert.Equal(t, a, got.Action)
	}
	assert.True(t, roundTrip(t, Action{Action: engine.Action{Kind: ActCanceled}, WasPending: true}).WasPending)
	for _, on := range []bool{true, false} {
		aw := Action{Action: engine.Action{Kind: ActAwaiting, Conn: 1<<32 - 1}, Awaiting: on}
		assert.Equal(t, aw, roundTrip(t, aw))
	}
	info := engine.LockInfo{Resource: "r", Key: "p:r", Token: "tok", TTL: 10 * time.Second, Validity: 9876 * time.Millisecond, AutoExtend: true, Released: true}
	assert.Equal(t, info, roundTrip(t, Action{Action: engine.Action{Kind: ActInfo}, Info: info}).Info)

	// Errors come back as the engine's types.
	ue := &engine.UnavailableError{Op: "acquire", Reason: "2 of 3 nodes failed", Nodes: []*engine.NodeError{
		{Node: 0, Addr: "127.0.0.1:1", Err: errors.New("connection refused")},
		{Node: 2, Addr: "127.0.0.1:3", Err: errors.New("timeout")},
	}}
	got := roundTrip(t, Action{Action: engine.Action{Kind: engine.ActDone, Op: 1, Err: ue}}).Err
	var gue *engine.UnavailableError
	require.ErrorAs(t, got, &gue)
	assert.Equal(t, ue.Error(), got.Error())
	assert.ErrorIs(t, got, engine.ErrUnavailable)
	require.Len(t, gue.Nodes, 2)
	assert.Equal(t, 2, gue.Nodes[1].Node)
	assert.Equal(t, "timeout", gue.Nodes[1].Err.Error())

	got = roundTrip(t, Action{Action: engine.Action{Kind: ActRejected, Err: engine.InvalidArg("ttl_ms", "must be between 1 and 86400000, got 0")}}).Err
	var ae *engine.ArgumentError
	require.ErrorAs(t, got, &ae)
	assert.Equal(t, "ttl_ms", ae.Arg)

	for _, c := range []struct {
		err, is error
	}{
		{engine.Wrap("acquire", engine.ErrNotAcquired), engine.ErrNotAcquired},
		{engine.ErrNotAcquired, engine.ErrNotAcquired},
		{engine.Wrap("extend", engine.ErrLost), engine.ErrLost},
		{engine.ErrCanceled, engine.ErrCanceled},
		{engine.ErrClosed, engine.ErrClosed},
		{engine.ErrUnknownLock, engine.ErrUnknownLock},
	} {
		got := roundTrip(t, Action{Action: engine.Action{Kind: engine.ActLost, Lock: 1, Err: c.err}}).Err
		assert.ErrorIs(t, got, c.is, "%v", c.err)
		assert.Equal(t, c.err.Error(), got.Error())
	}
	got = roundTrip(t, Action{Action: engine.Action{Kind: engine.ActDone, Err: errors.New("boom")}}).Err
	assert.Equal(t, Internal, StatusOf(got))
	assert.Equal(t, "boom", got.Error())

	// A huge error still fits in MinOut.
	big := &engine.UnavailableError{Op: "acquire", Reason: strings.Repeat("r", 1<<20)}
	for i := range engine.MaxNodes {
		big.Nodes = append(big.Nodes, &engine.NodeError{Node: i, Addr: strings.Repeat("a", 1000), Err: errors.New(strings.Repeat("é", 1000))})
	}
	a := Action{Action: engine.Action{Kind: engine.ActDone, Err: big}}
	b, whole := appendAction(nil, &a, MinOut)
	require.True(t, whole)
	got2, err := Decode(nil, b)
	require.NoError(t, err)
	assert.ErrorIs(t, got2[0].Err, engine.ErrUnavailable)
}

func TestDecodeRejectsGarbage(t *testing.T) {
	a := Action{Action: engine.Action{Kind: engine.ActDone, Op: 1, Err: engine.ErrLost}}
	b, _ := appendAction(nil, &a, MinOut)
	for n := 1; n < len(b); n++ {
		_, err := Decode(nil, b[:n])
		assert.Error(t, err, "truncated at %d", n)
	}
	_, err := Decode(nil, []byte{99})
	assert.Error(t, err)
}

// Protocol 3's kind bits: each malformed use is refused by DecodeEvent.
func TestDecodeEventKindBits(t *testing.T) {
	head := AppendEvent(nil, Event{Kind: EvAcquire, Resource: "r", TTLms: 1000})
	head = head[:len(head)-1] // without the flags byte
	acquire := func(flags byte, rest ...byte) []byte {
		return append(append(append([]byte(nil), head...), flags), rest...)
	}
	for name, b := range map[string][]byte{
		"permits 0":           acquire(AcquirePermits, 0, 0, 0, 0),
		"permits truncated":   acquire(AcquirePermits, 1, 0),
		"read and write":      acquire(AcquireRead | AcquireWrite),
		"empty resources":     acquire(AcquireResources, 0, 0),
		"resources truncated": acquire(AcquireResources, 2, 0, 1, 0, 0, 0, 'b'),
		"bit 7":               acquire(128),
		"inspect bit 0":       append(AppendEvent(nil, Event{Kind: EvInspect, Resource: "r"})[:6], 1),
		"inspect no flags":    AppendEvent(nil, Event{Kind: EvInspect, Resource: "r"})[:6],
	} {
		_, err := DecodeEvent(b)
		assert.Error(t, err, name)
	}
	ev, err := DecodeEvent(acquire(AcquireRead|AcquireResources, 1, 0, 1, 0, 0, 0, 'b'))
	require.NoError(t, err)
	assert.Equal(t, engine.ModeRead, ev.Mode)
	assert.Equal(t, []string{"b"}, ev.Resources)
}

// A fixed clock and randomness make two engines emit the same bytes.
type fixedEnv struct{ now atomic.Int64 }

func (e *fixedEnv) Now() time.Duration { return time.Duration(e.now.Load()) }
func (e *fixedEnv) Random(p []byte) {
	for i := range p {
		p[i] = byte(i)
	}
}

func newFixed(t *testing.T, nodes ...string) uint64 {
	t.Helper()
	h, err := NewWithEnv(Config{Nodes: nodes}, &fixedEnv{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = Free(h) })
	return h
}

// step calls Step and decodes; it fails the test on an error.
func step(t *testing.T, h uint64, ev *Event, out []byte) []Action {
	t.Helper()
	var in []byte
	if ev != nil {
		in = AppendEvent(nil, *ev)
	}
	n, err := Step(h, in, out)
	require.NoError(t, err)
	acts, err := Decode(nil, out[:n])
	require.NoError(t, err)
	return acts
}

func TestMalformedEventsDoNothing(t *testing.T) {
	h := newFixed(t, "redis://127.0.0.1:1")
	out := make([]byte, MinOut)
	acq := AppendEvent(nil, Event{Kind: EvAcquire, Resource: "r", TTLms: 1000})
	bad := [][]byte{
		{0}, {12}, {255},
		append(append([]byte(nil), acq...), 0), // a byte after the event
		AppendEvent(nil, Event{Kind: EvReceived, Conn: 1, Data: []byte("x")})[:9],
		{byte(EvReceived), 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 'x'}, // length past the end
		{byte(EvConnFailed), 1, 0, 0, 0, 5, 0, 0, 0},
		append(acq[:len(acq)-1:len(acq)-1], 8), // unknown flag
		append(acq[:len(acq)-1:len(acq)-1], 4), // the token flag without a token
		make([]byte, MaxEvent+1),
	}
	for n := 1; n < len(acq); n++ {
		bad = append(bad, acq[:n])
	}
	for _, in := range bad {
		n, err := Step(h, in, out)
		assert.Zero(t, n)
		assert.Equal(t, InvalidArgument, StatusOf(err), "% x", in[:min(len(in), 16)])
		assert.Equal(t, "in", argName(err))
	}
	assert.Empty(t, step(t, h, nil, out), "a rejected event did something")

	// Bad handles and a small out.
	_, err := Step(0, nil, out)
	assert.Equal(t, InvalidHandle, StatusOf(err))
	_, err = Step(1<<60, acq, out)
	assert.Equal(t, InvalidHandle, StatusOf(err))
	_, err = Step(h, acq, out[:MinOut-1])
	assert.Equal(t, "out_cap", argName(err))
	assert.Empty(t, step(t, h, nil, out))
	assert.Equal(t, InvalidHandle, StatusOf(Free(0)))
}

func TestRequestsAnswered(t *testing.T) {
	h := newFixed(t, "redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3")
	out := make([]byte, MinOut)
	acts := step(t, h, &Event{Kind: EvAcquire, Resource: "r", TTLms: 0}, out)
	require.Len(t, acts, 1)
	assert.Equal(t, ActRejected, acts[0].Kind)
	assert.Equal(t, "ttl_ms", argName(acts[0].Err))

	acts = step(t, h, &Event{Kind: EvAcquire, Resource: "r", TTLms: 1000, WaitMS: 1000}, out)
	require.NotEmpty(t, acts)
	require.Equal(t, ActStarted, acts[0].Kind)
	op := acts[0].Op
	opens := 0
	for _, a := range acts[1:] {
		if a.Kind == engine.ActOpen {
			opens++
		}
	}
	assert.Equal(t, 3, opens, "a connection per node; no pub/sub connection before the acquire has waited")

	for _, ev := range []Event{{Kind: EvExtend, Lock: 99, TTLms: 1000}, {Kind: EvExtend, Lock: 99, TTLms: 0}, {Kind: EvRelease, Lock: 99}, {Kind: EvLockInfo, Lock: 99}} {
		acts = step(t, h, &ev, out)
		require.Len(t, acts, 1)
		assert.Equal(t, ActRejected, acts[0].Kind)
		assert.Equal(t, InvalidHandle, StatusOf(acts[0].Err), "%+v", ev)
	}
	acts = step(t, h, &Event{Kind: EvCancel, Op: uint64(op)}, out)
	require.NotEmpty(t, acts)
	assert.Equal(t, ActCanceled, acts[0].Kind)
	assert.True(t, acts[0].WasPending)
	var done *Action
	for i := range acts {
		if acts[i].Kind == engine.ActDone {
			done = &acts[i]
		}
	}
	require.NotNil(t, done)
	assert.ErrorIs(t, done.Err, engine.ErrCanceled)
	acts = step(t, h, &Event{Kind: EvCancel, Op: uint64(op)}, out)
	require.Len(t, acts, 1)
	assert.False(t, acts[0].WasPending)

	step(t, h, &Event{Kind: EvClose}, out)
	acts = step(t, h, &Event{Kind: EvAcquire, Resource: "r", TTLms: 1000}, out)
	require.NotEmpty(t, acts)
	assert.ErrorIs(t, acts[0].Err, engine.ErrClosed)
	assert.Equal(t, Canceled, StatusOf(acts[0].Err))
}

// writes runs many acquires on one node before its connection opens, so
// that the OPENED event makes one WRITE larger than MinOut; it returns the
// bytes of every WRITE and how many step calls it took.
func writes(t *testing.T, outSize int, tickBetween bool) ([]byte, int) {
	h := newFixed(t, "redis://127.0.0.1:1")
	out := make([]byte, outSize)
	var conn engine.ConnID
	for i := range 100 {
		acts := step(t, h, &Event{Kind: EvAcquire, Resource: strings.Repeat("x", 1000) + string(rune('a'+i%26)), TTLms: 1000, WaitMS: 0}, out)
		for _, a := range acts {
			if a.Kind == engine.ActOpen {
				conn = a.Conn
			}
		}
	}
	require.NotZero(t, conn)
	// The handshake (INFO) first; the commands follow its reply.
	acts := step(t, h, &Event{Kind: EvOpened, Conn: uint32(conn)}, out)
	require.Len(t, acts, 1)
	require.Equal(t, "*1\r\n$4\r\nINFO\r\n", string(acts[0].Data))
	var data []byte
	calls := 0
	ev := &Event{Kind: EvReceived, Conn: uint32(conn), Data: []byte("$13\r\nrun_id:abcdef\r\n")}
	for {
		acts := step(t, h, ev, out)
		calls++
		if len(acts) == 0 {
			break
		}
		for _, a := range acts {
			if a.Kind == engine.ActWrite {
				assert.Equal(t, conn, a.Conn)
				data = append(data, a.Data...)
			}
		}
		ev = nil
		if tickBetween && calls == 1 {
			// A new event while actions are pending: the pending WRITE
			// must not change.
			ev = &Event{Kind: EvTick}
		}
	}
	return data, calls
}

func TestSplitWrites(t *testing.T) {
	whole, calls := writes(t, 1<<20, false)
	require.Greater(t, len(whole), MinOut)
	assert.Equal(t, 2, calls)
	split, calls := writes(t, MinOut, false)
	assert.Greater(t, calls, 2)
	assert.Equal(t, whole, split)
	split, _ = writes(t, MinOut, true)
	assert.Equal(t, whole, split)

	// appendAction alone: a WRITE cut to the room left.
	a := Action{Action: engine.Action{Kind: engine.ActWrite, Conn: 1, Data: []byte("0123456789")}}
	b, whole2 := appendAction(nil, &a, 9+4)
	assert.False(t, whole2)
	assert.Equal(t, "456789", string(a.Data))
	got, err := Decode(nil, b)
	require.NoError(t, err)
	assert.Equal(t, "0123", string(got[0].Data))
	_, whole2 = appendAction(nil, &a, 9)
	assert.False(t, whole2)
}

// An engine driven through Step (the Adapter over this package's table)
// against real redis-servers, the test acting as the host.
func TestStepAgainstRedis(t *testing.T) {
	cl := redistest.Start(t, 3)
	js := `{"nodes":["` + strings.Join(cl.URLs(), `","`) + `"],"node_timeout_ms":200,"key_prefix":"hostabi:"}`
	h1, err := New(js)
	require.NoError(t, err)
	h2, err := New(js)
	require.NoError(t, err)
	a := hostabitest.New(t, NewAdapter(Handle(h1), 3))
	b := hostabitest.New(t, NewAdapter(Handle(h2), 3))

	d := a.Acquire(engine.AcquireRequest{Resource: "orders:42", TTL: 10 * time.Second})
	require.NoError(t, d.Err)
	require.NotZero(t, d.Lock)
	info, ok := a.E.Lock(d.Lock)
	require.True(t, ok)
	assert.Equal(t, "hostabi:orders:42", info.Key)
	assert.Positive(t, info.Validity)
	holders := func() (n int) {
		for _, node := range cl.Nodes {
			if v, err := node.Do("GET", "hostabi:orders:42"); err == nil && v == info.Token {
				n++
			}
		}
		return n
	}
	assert.GreaterOrEqual(t, holders(), 2, "a quorum holds the token")
	// The engine decides on a quorum; the host's run loop still delivers
	// the third node's reply.
	noKeys := func() bool {
		for _, node := range cl.Nodes {
			if keys, err := node.Keys(); err != nil || len(keys) > 0 {
				return false
			}
		}
		return true
	}

	other := b.Acquire(engine.AcquireRequest{Resource: "orders:42", TTL: time.Second})
	assert.ErrorIs(t, other.Err, engine.ErrNotAcquired)
	assert.Equal(t, NotAcquired, StatusOf(other.Err))

	_, err = a.E.Acquire(engine.AcquireRequest{Resource: "", TTL: time.Second})
	assert.Equal(t, "resource", argName(err))

	require.NoError(t, a.Release(d.Lock).Err)
	require.True(t, a.Run(noKeys, 5*time.Second), "keys left after the release")
	assert.ErrorIs(t, a.Release(d.Lock).Err, engine.ErrUnknownLock)

	d = b.Acquire(engine.AcquireRequest{Resource: "orders:42", TTL: time.Second, Wait: time.Second})
	require.NoError(t, d.Err)
	b.Shutdown() // releases what it holds, on every node, before CLOSED
	assert.True(t, noKeys())
	a.Shutdown()
	require.NoError(t, Free(h1))
	require.NoError(t, Free(h2))
	assert.Equal(t, InvalidHandle, StatusOf(Free(h1)))
}

// awaitings returns the ActAwaiting among acts, as conn → awaiting.
func awaitings(acts []Action) map[engine.ConnID]bool {
	m := map[engine.ConnID]bool{}
	for _, a := range acts {
		if a.Kind == ActAwaiting {
			m[a.Conn] = a.Awaiting
		}
	}
	return m
}

// TestReportAwaiting: after REPORT_AWAITING the engine says each time it
// starts and stops expecting bytes on a connection (a command written, its
// reply read); an engine not asked never emits ActAwaiting.
func TestReportAwaiting(t *testing.T) {
	out := make([]byte, MinOut)
	pair := func(h uint64, watched bool) (all []Action) {
		acts := step(t, h, &Event{Kind: EvAcquire, Resource: "r", TTLms: 1000}, out)
		all = append(all, acts...)
		var conn uint32
		for _, a := range acts {
			if a.Kind == engine.ActOpen {
				conn = uint32(a.Conn)
			}
		}
		require.NotZero(t, conn)
		opened := step(t, h, &Event{Kind: EvOpened, Conn: conn}, out)
		all = append(all, opened...)
		if watched {
			assert.Equal(t, map[engine.ConnID]bool{engine.ConnID(conn): true}, awaitings(opened), "the handshake and the SET went out")
		}
		done := step(t, h, &Event{Kind: EvReceived, Conn: conn, Data: []byte("+PONG\r\n+OK\r\n")}, out)
		all = append(all, done...)
		var lock engine.LockID
		for _, a := range done {
			if a.Kind == engine.ActDone {
				require.NoError(t, a.Err)
				lock = a.Lock
			}
		}
		require.NotZero(t, lock)
		rel := step(t, h, &Event{Kind: EvRelease, Lock: uint64(lock)}, out)
		all = append(all, rel...)
		all = append(all, step(t, h, &Event{Kind: EvReceived, Conn: conn, Data: []byte(":1\r\n")}, out)...)
		return all
	}
	h := newFixed(t, "redis://127.0.0.1:1")
	require.Empty(t, step(t, h, &Event{Kind: EvReportAwaiting}, out))
	var seq []bool
	for _, a := range pair(h, true) {
		if a.Kind == ActAwaiting {
			assert.Equal(t, engine.ConnID(1), a.Conn)
			seq = append(seq, a.Awaiting)
		}
	}
	assert.Equal(t, []bool{true, false, true, false}, seq, "on at the handshake+SET, off at its reply, on at the release, off at its reply")

	quiet := newFixed(t, "redis://127.0.0.1:1")
	assert.Empty(t, awaitings(pair(quiet, false)), "not asked: no ActAwaiting")
}

// The Adapter's extras of a lock (its fence, its read-write mode, a multi
// lock's set) are dropped once the lock ends — released, or forgotten —
// so that a client acquiring and releasing for ever does not grow them.
func TestAdapterDropsEndedLocksExtras(t *testing.T) {
	cl := redistest.Start(t, 3)
	js := `{"nodes":["` + strings.Join(cl.URLs(), `","`) + `"],"node_timeout_ms":200,"key_prefix":"extras:"}`
	h, err := New(js)
	require.NoError(t, err)
	ad := NewAdapter(Handle(h), 3)
	a := hostabitest.New(t, ad)
	reqs := []engine.AcquireRequest{
		{Resource: "fenced", TTL: 10 * time.Second, Fence: true},
		{Resource: "rw", TTL: 10 * time.Second, Mode: engine.ModeRead},
		{Resource: "rw", TTL: 10 * time.Second, Mode: engine.ModeWrite, Fence: true},
		{Resource: "x", Resources: []string{"y"}, TTL: 10 * time.Second},
		{Resource: "x", Resources: []string{"y"}, TTL: 10 * time.Second, Fence: true},
	}
	for i := range 3 {
		for _, r := range reqs {
			d := a.Acquire(r)
			require.NoError(t, d.Err, "%+v", r)
			require.NoError(t, a.Release(d.Lock).Err, "%+v", r)
		}
		// Forgotten locks keep their keys (until their ttl): other names.
		for j, r := range reqs {
			name := "-forgotten-" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
			r.Resource += name
			if len(r.Resources) > 0 {
				r.Resources = []string{"y" + name}
			}
			d := a.Acquire(r)
			require.NoError(t, d.Err, "%+v", r)
			ad.Forget(d.Lock)
		}
	}
	assert.Empty(t, ad.fences, "fences")
	assert.Empty(t, ad.modes, "modes")
	assert.Empty(t, ad.sets, "sets")
}
