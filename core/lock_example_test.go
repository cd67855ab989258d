package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// A mutex: one holder at a time. A second acquire without a wait budget is
// refused while the first holds the lock, and succeeds once it is released.
func ExampleClient_Acquire() {
	nodes, err := redistest.StartCluster(3, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nodes.Close()
	client, err := core.New(core.Config{Nodes: nodes.URLs()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx := context.Background()

	lock, err := client.Acquire(ctx, "orders:42", 10*time.Second, core.Wait(5*time.Second), core.AutoExtend())
	if err != nil {
		fmt.Println(err) // ErrNotAcquired, ErrUnavailable (naming each failed node), or ctx's error
		return
	}
	fmt.Println("held:", lock.Validity() > 0)

	_, err = client.Acquire(ctx, "orders:42", 10*time.Second) // one attempt
	fmt.Println("a second holder:", errors.Is(err, core.ErrNotAcquired))

	// ... work on orders:42, stopping if <-lock.Lost() fires ...
	if err := lock.Release(ctx); err != nil {
		fmt.Println(err)
	}
	again, err := client.Acquire(ctx, "orders:42", 10*time.Second)
	fmt.Println("after the release:", err == nil)
	_ = again.Release(ctx)
	// Output:
	// held: true
	// a second holder: true
	// after the release: true
}

// Inspect looks at a resource without taking it: held on a quorum, for how
// long at least, by which owner label.
func ExampleClient_Inspect() {
	nodes, err := redistest.StartCluster(3, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nodes.Close()
	client, err := core.New(core.Config{Nodes: nodes.URLs(), Owner: "worker-7"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx := context.Background()

	before, err := client.Inspect(ctx, "orders:42")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held before:", before.Held)

	lock, err := client.Acquire(ctx, "orders:42", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lock.Release(ctx)
	in, err := client.Inspect(ctx, "orders:42")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", in.Held, "by", in.Owner, "valid:", in.Validity > 0, "nodes:", len(in.Nodes))
	// Output:
	// held before: false
	// held: true by worker-7 valid: true nodes: 3
}

// A lock handed to another process by its token: the worker re-enters the
// scheduler's lock, and a release by either ends it for both.
func ExampleWithToken() {
	// One node: with three, Acquire returns at a quorum of two while the
	// third grant is on its way, and the re-entry may reach that node first.
	nodes, err := redistest.StartCluster(1, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nodes.Close()
	// A node timeout of a second: the example's output must not depend on
	// a busy machine answering within the default 50 ms.
	cfg := core.Config{Nodes: nodes.URLs(), NodeTimeout: time.Second}
	scheduler, err := core.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer scheduler.Close()
	worker, err := core.New(cfg) // another process, in real life
	if err != nil {
		fmt.Println(err)
		return
	}
	defer worker.Close()
	ctx := context.Background()

	lock, err := scheduler.Acquire(ctx, "job:17", 10*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	handed, err := worker.Acquire(ctx, "job:17", 30*time.Second, core.WithToken(lock.Token()))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("re-entered:", handed.Reentered())
	if err := handed.Release(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println("the scheduler's copy, released already:", errors.Is(lock.Release(ctx), core.ErrLost))
	// Output:
	// re-entered: true
	// the scheduler's copy, released already: true
}
