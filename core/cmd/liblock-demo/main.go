package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/liblock/liblock/core"
)

func main() {
	if replicaMain() { // election.go: this process is a replica
		return
	}
	nodes := strings.Split(os.Getenv("LIBLOCK_NODES"), ",")
	client, err := core.New(core.Config{Nodes: nodes, NodeTimeout: 50 * time.Millisecond, KeyPrefix: "demo:"})
	if err != nil {
		fail(err)
	}
	defer client.Close()
	ctx := context.Background()
	start := time.Now()
	say := func(format string, a ...any) {
		fmt.Printf("[go %6.1fms] %s\n", float64(time.Since(start).Microseconds())/1000, fmt.Sprintf(format, a...))
	}

	say("ten workers want account_id123 at once (%d nodes, quorum %d)", len(nodes), client.Quorum())
	var inside, maxInside atomic.Int32
	balance := 100
	var wg sync.WaitGroup
	for w := 1; w <= 10; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lock, err := client.Acquire(ctx, "account_id123", 5*time.Second, core.Wait(10*time.Second))
			if err != nil {
				say("worker %2d: %v", w, err)
				return
			}
			n := inside.Add(1)
			if n > maxInside.Load() {
				maxInside.Store(n)
			}
			say("worker %2d: got the lock (validity %v), balance %d -> %d", w, lock.Validity().Round(time.Millisecond), balance, balance-10)
			balance -= 10 // safe: we hold the lock
			time.Sleep(5 * time.Millisecond)
			inside.Add(-1)
			if err := lock.Release(ctx); err != nil {
				say("worker %2d: release: %v", w, err)
			}
		}()
	}
	wg.Wait()
	say("all done: balance %d, at most %d holder(s) at a time", balance, maxInside.Load())

	lock, err := client.Acquire(ctx, "nightly-report", 10*time.Second)
	if err != nil {
		fail(err)
	}
	_, err = client.Acquire(ctx, "nightly-report", 10*time.Second)
	say("a second nightly report while one runs: not acquired = %v (%v)", errors.Is(err, core.ErrNotAcquired), err)
	_ = lock.Release(ctx)
	if err := semaphoreStory(ctx, client, say); err != nil {
		fail(err)
	}
	if balance != 0 || maxInside.Load() != 1 {
		fail(fmt.Errorf("the demo saw a broken invariant: balance %d, max holders %d", balance, maxInside.Load()))
	}
	if err := transferStory(ctx, client, say); err != nil { // multi.go
		fail(err)
	}
	if err := electionStory(ctx, client, say); err != nil { // election.go
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "liblock-demo:", err)
	os.Exit(1)
}
