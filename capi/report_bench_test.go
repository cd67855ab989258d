package main

import (
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// BenchmarkPair: a synchronous acquire and release through the ABI's logic
// on 3 nodes, as a C program makes them (no report callback set): its
// allocations say what the report stream costs a program that does not
// use it.
func BenchmarkPair(b *testing.B) { benchPair(b, false) }

// BenchmarkPairReporting: the same with a report function set (a Go one:
// the cost of the stream up to the C callback).
func BenchmarkPairReporting(b *testing.B) { benchPair(b, true) }

func benchPair(b *testing.B, reporting bool) {
	cl := redistest.Start(b, 3)
	id, r := clientNew(configFor(cl))
	if r != nil {
		b.Fatal(r.msg)
	}
	defer freeHandle(id)
	co, _ := lookupClient(id)
	if reporting {
		setReport(co, func(core.Report) {})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h, r := acquire(co, "bench", 10*time.Second, acquireOptions{})
		if r != nil {
			b.Fatal(r.msg)
		}
		lo, _ := lookupLock(h)
		if r := release(lo); r != nil {
			b.Fatal(r.msg)
		}
		freeHandle(h)
	}
}
