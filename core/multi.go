package core

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/liblock/liblock/core/engine"
)

// MaxResources is the most resources one AcquireAll takes.
const MaxResources = engine.MaxResources

// AcquireAll takes one lock on all of resources together, or on none of
// them: a multi-resource lock (a transfer between two accounts, a job that
// needs several files). Each resource keeps the key its mutex has, so the
// lock excludes Acquire on any of its resources and every other AcquireAll
// whose set shares one with it, whatever the order the sets are listed in.
//
// Each node is asked once per attempt, with one script over the set's keys
// that sets all of them or, when any is held, none (and names the one
// held): no node ever holds a part of a set, so two clients asking for
// overlapping sets in different orders can neither deadlock nor hold part
// of a set, and a refusal (ErrNotAcquired) says which resource was held.
// The returned Lock covers the whole set: Release, Extend, Lost, OnLost,
// Validity and AutoExtend apply to all its resources at once (a node counts
// for an extension only while it holds every key of the set), and
// Lock.Resources lists them. A release wakes the waiters of every one of
// the resources, and an AcquireAll with Wait wakes on a release of any of
// its resources.
//
// resources: 1 to MaxResources distinct, valid resource names; errors name
// the element ("resources[2]"), a duplicate both of its indexes. Options
// as for Acquire: Wait, AutoExtend, and Fence (one fence for the set,
// greater than every earlier lock's fence on each of its resources).
// WithToken is refused: a set cannot be re-entered or handed over by token.
// No key is left behind on failure.
func (c *Client) AcquireAll(ctx context.Context, resources []string, ttl time.Duration, opts ...AcquireOption) (*Lock, error) {
	if ctx == nil {
		return nil, invalidArg("ctx", "must not be nil")
	}
	if len(resources) == 0 {
		return nil, invalidArg("resources", "must name at least one resource")
	}
	if err := engine.CheckResources(resources[0], resources[1:]); err != nil {
		return nil, err
	}
	o, err := acquireSettings(opts)
	if err != nil {
		return nil, err
	}
	if o.Token != "" {
		return nil, invalidArg("token", "not supported by AcquireAll: a multi-resource lock cannot be re-entered or handed over by token")
	}
	// Permits and a mode go to the engine, which refuses them with a set
	// in the words every host's caller meets.
	req := engine.AcquireRequest{Resource: resources[0], TTL: ttl, Wait: o.Wait, AutoExtend: o.AutoExtend, Fence: o.Fence, Permits: o.Permits, Mode: o.Mode}
	if len(resources) > 1 {
		req.Resources = append([]string(nil), resources[1:]...)
	}
	return c.acquire(ctx, req, setLabel(resources))
}

// setLabel names a set in errors: ["a" "b"].
func setLabel(resources []string) string {
	q := make([]string, len(resources))
	for i, r := range resources {
		q[i] = strconv.Quote(r)
	}
	return "[" + strings.Join(q, " ") + "]"
}

// Resources returns the resources the lock holds: the set an AcquireAll
// took, in the order it listed them, or the one resource of Acquire.
func (l *Lock) Resources() []string {
	if l.resources == nil {
		return []string{l.resource}
	}
	return append([]string(nil), l.resources...)
}
