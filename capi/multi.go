package main

import (
	"context"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
)

// Multi-resource locks in the C ABI: lock_acquire and lock_acquire_async
// take the set as the resource argument and the options key "resources"
// (the further resources, parsed by hostabi.ParseOptions). Errors name an
// element by its index in the whole set: the resource argument is
// resources[0] (liblock.h).

// checkMulti checks a set before anything starts (so that the async form
// refuses bad input at once, as it does a bad resource).
func checkMulti(res string, o acquireOptions) error {
	if o.Resources == nil {
		return nil
	}
	if err := engine.CheckResources(res, o.Resources); err != nil {
		return err
	}
	if o.Token != "" {
		return argErr("token", "not with \"resources\": a multi-resource lock cannot be re-entered or handed over by token")
	}
	return nil
}

// coreAcquire is the Go driver's Acquire, or AcquireAll for a set.
func coreAcquire(ctx context.Context, c *core.Client, res string, ttl time.Duration, o acquireOptions) (*core.Lock, error) {
	if o.Resources == nil {
		return c.Acquire(ctx, res, ttl, coreOptions(o)...)
	}
	set := append([]string{res}, o.Resources...)
	return c.AcquireAll(ctx, set, ttl, coreOptions(o)...)
}

// multiInfo is lock_info's "resources": the set, or nil (left out) for a
// one-resource lock.
func multiInfo(l *core.Lock) []string {
	if rs := l.Resources(); len(rs) > 1 {
		return rs
	}
	return nil
}
