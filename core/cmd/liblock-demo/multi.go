package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/liblock/liblock/core"
)

// transferStory is the multi-resource lock's story: transfers between three
// accounts, each taking both of its accounts with one AcquireAll, listed in
// whatever order the transfer names them (alice→bob and bob→alice at once
// would deadlock with two mutexes taken in turn). Money is conserved and no
// balance is ever read while another transfer writes it.
func transferStory(ctx context.Context, client *core.Client, say func(string, ...any)) error {
	balances := map[string]int{"alice": 100, "bob": 100, "carol": 100}
	var mu sync.Mutex // guards the map itself (Go's race detector); the lock guards the accounts
	holders := map[string]int{}
	overlaps := 0
	transfers := []struct {
		from, to string
		amount   int
	}{
		{"alice", "bob", 30}, {"bob", "alice", 20}, {"bob", "carol", 10}, {"carol", "alice", 40},
		{"alice", "carol", 5}, {"carol", "bob", 15}, {"bob", "alice", 25}, {"alice", "bob", 35},
	}
	say("%d transfers between alice, bob and carol at once, each locking both its accounts in its own order", len(transfers))
	var wg sync.WaitGroup
	for i, tr := range transfers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lock, err := client.AcquireAll(ctx, []string{"account:" + tr.from, "account:" + tr.to}, 5*time.Second, core.Wait(10*time.Second))
			if err != nil {
				say("transfer %d: %v", i+1, err)
				return
			}
			mu.Lock()
			for _, a := range []string{tr.from, tr.to} {
				holders[a]++
				if holders[a] > 1 {
					overlaps++
				}
			}
			mu.Unlock()
			mu.Lock()
			from, to := balances[tr.from], balances[tr.to]
			mu.Unlock()
			time.Sleep(2 * time.Millisecond) // the transfer's work, with both accounts held
			mu.Lock()
			balances[tr.from], balances[tr.to] = from-tr.amount, to+tr.amount
			holders[tr.from]--
			holders[tr.to]--
			mu.Unlock()
			say("transfer %d: %s -> %s %3d  (held %v)", i+1, tr.from, tr.to, tr.amount, lock.Resources())
			if err := lock.Release(ctx); err != nil {
				say("transfer %d: release: %v", i+1, err)
			}
		}()
	}
	wg.Wait()
	total := balances["alice"] + balances["bob"] + balances["carol"]
	say("balances: alice %d, bob %d, carol %d; total %d (was 300)", balances["alice"], balances["bob"], balances["carol"], total)

	lock, err := client.AcquireAll(ctx, []string{"account:bob", "account:carol"}, 5*time.Second)
	if err != nil {
		return err
	}
	_, err = client.Acquire(ctx, "account:carol", time.Second)
	say("carol alone while bob+carol are locked: not acquired = %v", errors.Is(err, core.ErrNotAcquired))
	_, err = client.AcquireAll(ctx, []string{"account:alice", "account:bob"}, time.Second)
	say("alice+bob while bob+carol are locked: %v", err)
	_ = lock.Release(ctx)
	if total != 300 || overlaps != 0 {
		return fmt.Errorf("the transfer story saw a broken invariant: total %d, %d overlaps", total, overlaps)
	}
	return nil
}
