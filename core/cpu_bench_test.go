package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/locktest"
)

// BenchmarkCoreCPU reports ns per acquire+release pair of the native core
// with instantly answered I/O (locktest.FreeKeyTransport), on 1 and 5
// nodes: the native counterpart of wasm/host's BenchmarkModuleCPU (the same
// code compiled for wasip1 and run by wazero).
func BenchmarkCoreCPU(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			t := locktest.FreeKeyTransport{}
			for i := range n {
				t.Addrs = append(t.Addrs, fmt.Sprintf("127.0.0.1:%d", 1+i))
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
