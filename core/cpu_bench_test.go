package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
)

// instantTransport answers every command at once, as a node granting it
// would (SET -> OK, scripts -> 1): BenchmarkCoreCPU measures the core's own
// work per pair without any I/O, the native counterpart of wasm/host's
// BenchmarkModuleCPU (the same code compiled for wasip1 and run by wazero).
// It is a benchmark's stand-in only; behaviour tests use real redis-servers.
type instantTransport struct{ nodes []string }

func (t instantTransport) Nodes() []string { return t.nodes }
func (t instantTransport) Close() error    { return nil }
func (t instantTransport) Exec(_ context.Context, cmds []core.Command) []core.Reply {
	r := make([]core.Reply, len(cmds))
	for i, c := range cmds {
		switch {
		case c == nil:
		case c[0] == "SET":
			r[i].Str = "OK"
		default:
			r[i].Int = 1
		}
	}
	return r
}

// BenchmarkCoreCPU reports ns per acquire+release pair of the native core
// with instant replies, on 1 and 5 nodes.
func BenchmarkCoreCPU(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			t := instantTransport{}
			for i := range n {
				t.nodes = append(t.nodes, fmt.Sprintf("127.0.0.1:%d", 1+i))
			}
			c, err := core.NewWithTransport(t, core.Config{NodeTimeout: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				l, err := c.Acquire(ctx, "bench", 10*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
