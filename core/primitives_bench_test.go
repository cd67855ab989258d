package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// benchPrimitives adds BenchmarkPair's rows for the primitives beyond the mutex
// beside the group's mutex pair (…/liblock, core.New, one attempt):
// liblock-read and liblock-write (a reader, then the writer, of a
// read-write lock: core.Read, core.Write) and liblock-multi2 and
// liblock-multi8 (AcquireAll over 2 and 8 resources). Each is one
// acquire+release pair per iteration, uncontended, measured like the
// mutex pair (measure: median latency and process CPU per pair);
// benchreport prints each one's ratio to the mutex pair of the same run
// (the semaphore's row, liblock-semaphore3, is in BenchmarkPair itself).
func benchPrimitives(b *testing.B, c *redistest.Cluster, n int) {
	b.Run(fmt.Sprintf("nodes=%d/liblock-read", n), func(b *testing.B) { benchLiblock(b, c, respClient, core.Read()) })
	b.Run(fmt.Sprintf("nodes=%d/liblock-write", n), func(b *testing.B) { benchLiblock(b, c, respClient, core.Write()) })
	for _, k := range []int{2, 8} {
		b.Run(fmt.Sprintf("nodes=%d/liblock-multi%d", n, k), func(b *testing.B) { benchMulti(b, c, k) })
	}
}

// benchMulti measures AcquireAll over k resources and its Release: one
// script per node over the set's k keys each way.
func benchMulti(b *testing.B, c *redistest.Cluster, k int) {
	cl := respClient(b, c)
	defer cl.Close()
	ctx := context.Background()
	resources := make([]string, k)
	for i := range resources {
		resources[i] = fmt.Sprintf("bench-multi:%d", i)
	}
	pair := func() {
		l, err := cl.AcquireAll(ctx, resources, 10*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	measure(b, pair)
}
