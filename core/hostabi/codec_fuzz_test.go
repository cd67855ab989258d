package hostabi

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/liblock/liblock/core/engine"
)

// The host protocol's decoder reads what a host hands lock_engine_step
// (and the wasm module's step export): a malformed, truncated or oversized
// event is an argument error naming "in", never a panic, a hang or a read
// past the buffer. `go test` runs the seeds in testdata/fuzz; `make fuzz`
// runs each target for FUZZ_TIME.

// eventSeeds are events as the Node and Python hosts encode them.
func eventSeeds() [][]byte {
	evs := []Event{
		{Kind: EvAcquire, Resource: "orders:42", TTLms: 30000, WaitMS: 1000, AutoExtend: true, Fence: true},
		{Kind: EvAcquire, Resource: "r", TTLms: 10, Token: "0123456789abcdef0123"},
		{Kind: EvAcquire, Resource: "s", TTLms: 1000, Permits: 3},
		{Kind: EvAcquire, Resource: "rw", TTLms: 1000, Mode: engine.ModeRead},
		{Kind: EvAcquire, Resource: "a", TTLms: 1000, Resources: []string{"b", "c"}},
		{Kind: EvAcquire, Resource: "leader", TTLms: 1000, Election: true, Value: "me"},
		{Kind: EvInspect, Resource: "s", Permits: 3},
		{Kind: EvWatch, Resource: "leader", PollMS: 100},
		{Kind: EvUnwatch, Op: 7}, {Kind: EvReports, Level: 1},
		{Kind: EvExtend, Lock: 1, TTLms: 5000}, {Kind: EvRelease, Lock: 1}, {Kind: EvForget, Lock: 1},
		{Kind: EvCancel, Op: 3}, {Kind: EvClose}, {Kind: EvTick}, {Kind: EvReportAwaiting}, {Kind: EvLockInfo, Lock: 1},
		{Kind: EvOpened, Conn: 1}, {Kind: EvReceived, Conn: 1, Data: []byte("+PONG\r\n+OK\r\n")},
		{Kind: EvConnFailed, Conn: 1, Message: "connection refused"},
	}
	var out [][]byte
	for _, ev := range evs {
		out = append(out, AppendEvent(nil, ev))
	}
	return append(out, nil, []byte{8, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}, []byte{1, 0xff, 0xff, 0xff, 0xff})
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range eventSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// A copy with no room after it: a read past the end panics.
		in := append(make([]byte, 0, len(b)), b...)
		ev, err := DecodeEvent(in)
		if err != nil {
			return
		}
		// What decodes re-encodes to an event that decodes to the same.
		b2 := AppendEvent(nil, ev)
		ev2, err := DecodeEvent(b2)
		if err != nil {
			t.Fatalf("%x decoded, re-encoded as %x, which does not decode: %v", b, b2, err)
		}
		if b3 := AppendEvent(nil, ev2); !bytes.Equal(b2, b3) {
			t.Fatalf("re-encoding is not stable: %x then %x", b2, b3)
		}
	})
}

// FuzzDecodeActions: the hosts' decoder of the engine's actions (the Go
// host's; Node and Python have generated twins) on any bytes.
func FuzzDecodeActions(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{byte(engine.ActTimer), 1, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{byte(engine.ActWrite), 1, 0, 0, 0, 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'})
	f.Add([]byte{byte(engine.ActDone), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		in := append(make([]byte, 0, len(b)), b...)
		_, _ = Decode(nil, in)
	})
}

// fuzzEnv is a clock the fuzz target moves, and fixed randomness.
type fuzzEnv struct{ now time.Duration }

func (f *fuzzEnv) Now() time.Duration { return f.now }
func (f *fuzzEnv) Random(p []byte) {
	for i := range p {
		p[i] = byte(i)
	}
}

// FuzzStep hands an engine a run of events, each cut from the input by a
// u16 length, as lock_engine_step receives them: each is either applied or
// refused with an argument error naming "in"; what the engine answers
// always decodes; the engine frees cleanly.
func FuzzStep(f *testing.F) {
	frame := func(evs ...[]byte) []byte {
		var b []byte
		for _, ev := range evs {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(ev)))
			b = append(b, ev...)
		}
		return b
	}
	seeds := eventSeeds()
	f.Add(frame(seeds...))
	f.Add(frame(seeds[0], AppendEvent(nil, Event{Kind: EvOpened, Conn: 1}),
		AppendEvent(nil, Event{Kind: EvReceived, Conn: 1, Data: []byte("+PONG\r\n$2147483647\r\n")}),
		AppendEvent(nil, Event{Kind: EvTick}), AppendEvent(nil, Event{Kind: EvClose})))
	f.Fuzz(func(t *testing.T, b []byte) {
		env := &fuzzEnv{}
		cfg, err := ParseConfig(`{"nodes":["redis://127.0.0.1:1","redis://127.0.0.1:2","redis://127.0.0.1:3"],"node_timeout_ms":50}`)
		if err != nil {
			t.Fatal(err)
		}
		before := Count()
		h, err := NewWithEnv(cfg, env)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, MinOut)
		for len(b) >= 2 {
			n := int(binary.LittleEndian.Uint16(b))
			b = b[2:]
			n = min(n, len(b))
			in := append(make([]byte, 0, n), b[:n]...)
			b = b[n:]
			env.now += time.Millisecond
			k, err := Step(h, in, out)
			if err != nil {
				var ae *engine.ArgumentError
				if !errors.As(err, &ae) || ae.Arg != "in" {
					t.Fatalf("step refused %x with %v, not an argument error naming in", in, err)
				}
				continue
			}
			if _, err := Decode(nil, out[:k]); err != nil {
				t.Fatalf("the engine's own actions do not decode: %v", err)
			}
		}
		// Drain: time passes, the engine closes, nothing is left.
		env.now += time.Hour
		for _, ev := range []Event{{Kind: EvTick}, {Kind: EvClose}, {Kind: EvTick}} {
			if _, err := Step(h, AppendEvent(nil, ev), out); err != nil {
				t.Fatal(err)
			}
		}
		if err := Free(h); err != nil {
			t.Fatal(err)
		}
		if Count() != before {
			t.Fatalf("%d engines left, want %d", Count(), before)
		}
	})
}
