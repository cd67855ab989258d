package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// Two replicas campaign in one election: the first leads, an observer sees
// it, and when it resigns the second takes over with a higher term.
func ExampleClient_Campaign() {
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	changes, err := client.Observe(ctx, "scheduler")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("at first:", (<-changes).Term == 0) // no leader yet

	a, err := client.Campaign(ctx, "scheduler", "replica-a", core.CampaignTTL(5*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("observed:", (<-changes).Value)
	ld, _ := client.Leader(ctx, "scheduler")
	fmt.Println("leader:", ld.Value, ld.Term == a.Term())

	next := make(chan *core.Leadership)
	go func() {
		b, err := client.Campaign(ctx, "scheduler", "replica-b") // waits while a leads
		if err != nil {
			fmt.Println(err)
		}
		next <- b
	}()
	// ... a does the leader's work, passing a.Term() to what it writes to,
	// and stops when <-a.Lost() fires ...
	if err := a.Resign(ctx); err != nil {
		fmt.Println(err)
	}
	b := <-next
	fmt.Println("b leads, with a higher term:", b.Term() > a.Term())
	for l := range changes {
		if l.Value == "replica-b" {
			fmt.Println("observed:", l.Value)
			break
		}
	}
	_ = b.Resign(ctx)
	// Output:
	// at first: true
	// observed: replica-a
	// leader: replica-a true
	// b leads, with a higher term: true
	// observed: replica-b
}
