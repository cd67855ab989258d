package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/liblock/liblock/core"
)

func main() {
	nodes := strings.Split(os.Getenv("LIBLOCK_NODES"), ",")
	client, err := core.New(core.Config{Nodes: nodes, NodeTimeout: 50 * time.Millisecond, KeyPrefix: "demo:", Owner: "report"})
	if err != nil {
		fail(err)
	}
	defer client.Close()
	start := time.Now()
	say := func(format string, a ...any) {
		fmt.Printf("[go-rw %6.1fms] %s\n", float64(time.Since(start).Microseconds())/1000, fmt.Sprintf(format, a...))
	}
	ctx, stop := context.WithCancel(context.Background())
	var readers, writers, maxReaders, served atomic.Int32
	var broken atomic.Bool
	var wg sync.WaitGroup
	say("four readers serve the catalog back to back (%d nodes, quorum %d)", len(nodes), client.Quorum())
	for r := 1; r <= 4; r++ {
		// Each reader is a process of its own (a client): only the writer's
		// intent on the nodes holds them back, not a queue in one client.
		rc, err := core.New(core.Config{Nodes: nodes, NodeTimeout: 50 * time.Millisecond, KeyPrefix: "demo:", Owner: fmt.Sprintf("reader%d", r)})
		if err != nil {
			fail(err)
		}
		defer rc.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				l, err := rc.Acquire(ctx, "catalog", 2*time.Second, core.Read(), core.Wait(5*time.Second))
				if err != nil {
					continue
				}
				n := readers.Add(1)
				if writers.Load() != 0 {
					broken.Store(true)
				}
				for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
				}
				served.Add(1)
				time.Sleep(30 * time.Millisecond) // serving a page
				readers.Add(-1)
				_ = l.Release(context.Background())
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // let the readers' stream run for a while: the story's timing
	before := served.Load()
	say("%d pages served so far, up to %d readers at once; the nightly report asks for the writer", before, maxReaders.Load())
	asked := time.Now()
	w, err := client.Acquire(context.Background(), "catalog", 5*time.Second, core.Write(), core.Fence(), core.Wait(10*time.Second))
	if err != nil {
		fail(err)
	}
	writers.Add(1)
	if readers.Load() != 0 {
		broken.Store(true)
	}
	say("report: writer after %v (fence %d): the readers inside finished, new ones waited behind its intent", time.Since(asked).Round(time.Millisecond), w.Fence())
	in, err := client.Inspect(context.Background(), "catalog", core.InspectReadWrite())
	if err == nil {
		say("inspect: writer held=%v owner=%q, %d readers", in.Held, in.Owner, len(in.Readers))
	}
	time.Sleep(100 * time.Millisecond) // writing the report
	writers.Add(-1)
	_ = w.Release(context.Background())
	after := served.Load()
	time.Sleep(200 * time.Millisecond)
	say("report done; the readers went on: %d more pages", served.Load()-after)
	stop()
	wg.Wait()
	if broken.Load() || maxReaders.Load() < 2 {
		fail(fmt.Errorf("the demo saw a broken invariant (a writer with readers: %v) or no sharing (max readers %d)", broken.Load(), maxReaders.Load()))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "liblock-demo-rw:", err)
	os.Exit(1)
}
