package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/liblock/liblock/core"
)

// semaphoreStory: eight workers share three permits to a rate-limited API
// (a counting semaphore): three at a time call it, the others wait for a
// permit and are woken as one is released.
func semaphoreStory(ctx context.Context, client *core.Client, say func(string, ...any)) error {
	say("eight workers share 3 permits to a rate-limited API")
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	var failed atomic.Int32
	for w := 1; w <= 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			permit, err := client.Acquire(ctx, "rate-limited-api", 5*time.Second, core.Permits(3), core.Wait(10*time.Second))
			if err != nil {
				say("worker %d: %v", w, err)
				failed.Add(1)
				return
			}
			n := inside.Add(1)
			for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
			}
			say("worker %d: calling the API with permit %d (%d in flight)", w, permit.Slot(), n)
			time.Sleep(20 * time.Millisecond) // the API call
			inside.Add(-1)
			if err := permit.Release(ctx); err != nil {
				say("worker %d: release: %v", w, err)
			}
		}()
	}
	// While they run, anyone can look at who holds the permits.
	time.Sleep(10 * time.Millisecond)
	if in, err := client.Inspect(ctx, "rate-limited-api", core.InspectPermits(3)); err == nil {
		say("inspect: %d of %d permits in use", in.InUse, in.Permits)
	}
	wg.Wait()
	say("all served: at most %d API calls at a time", maxInside.Load())
	if failed.Load() > 0 || maxInside.Load() > 3 || maxInside.Load() < 2 {
		return fmt.Errorf("the semaphore story saw %d failures and %d calls at a time", failed.Load(), maxInside.Load())
	}
	return nil
}
