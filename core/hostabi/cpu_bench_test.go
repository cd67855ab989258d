package hostabi

import (
	"strconv"
	"testing"

	"github.com/liblock/liblock/core/engine"
	time "github.com/liblock/liblock/core/internal/xtime"
	"github.com/liblock/liblock/core/testkit/hostabitest"
	"github.com/stretchr/testify/require"
)

// BenchmarkStepCPU is wasm/host's BenchmarkModuleCPU without the module:
// an acquire+release pair through the Adapter and Step, natively, with a
// host that answers every command at once as for a free key. What Step
// allocates here it allocates in liblock.wasm too, where an allocation
// costs far more.
func BenchmarkStepCPU(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run("nodes="+strconv.Itoa(n), func(b *testing.B) {
			js := `{"nodes":[`
			for i := range n {
				if i > 0 {
					js += ","
				}
				js += `"redis://127.0.0.1:` + strconv.Itoa(1+i) + `"`
			}
			h, err := New(js + `],"node_timeout_ms":1000}`)
			require.NoError(b, err)
			defer Free(h)
			a := NewAdapter(Handle(h), n)
			host := &hostabitest.Instant{E: a}
			pair := func() {
				if _, err := host.Pair("bench"); err != nil {
					b.Fatal(err)
				}
			}
			for range 200 {
				pair()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				pair()
			}
		})
	}
}

// BenchmarkCodec: the codec alone, both ways, on the actions and events of
// a lock's life (an ACQUIRE, a WRITE, its DONE, a RELEASE's DONE with an
// error, an INSPECTED of three nodes).
func BenchmarkCodec(b *testing.B) {
	ev := Event{Kind: EvAcquire, Resource: "orders:42", TTLms: 10000, WaitMS: 2500, AutoExtend: true, Token: "0123456789abcdef"}
	in := &engine.Inspection{Held: true, Validity: 900 * time.Millisecond, Owner: "me", Nodes: []engine.NodeState{
		{Node: 0, Addr: "127.0.0.1:1", Locked: true, Holder: true, Owner: "me", TTL: time.Second},
		{Node: 1, Addr: "127.0.0.1:2", Locked: true, Holder: true, Owner: "me", TTL: time.Second},
		{Node: 2, Addr: "127.0.0.1:3", Err: engine.ErrNoAnswer},
	}}
	acts := []Action{
		{Action: engine.Action{Kind: ActWrite, Conn: 1, Data: []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n")}},
		{Action: engine.Action{Kind: ActDone, Op: 1, Lock: 2}},
		{Action: engine.Action{Kind: ActDone, Op: 3, Err: engine.ErrNotAcquired}},
		{Action: engine.Action{Kind: ActInspected, Op: 4, Inspection: in}},
	}
	buf := make([]byte, 0, MinOut)
	var dst []Action
	b.ReportAllocs()
	for range b.N {
		if _, err := DecodeEvent(AppendEvent(buf[:0], ev)); err != nil {
			b.Fatal(err)
		}
		out := buf[:0]
		for i := range acts {
			a := acts[i]
			out, _ = appendAction(out, &a, MinOut-len(out))
		}
		var err error
		if dst, err = Decode(dst[:0], out); err != nil || len(dst) != len(acts) {
			b.Fatal(err, len(dst))
		}
	}
}
