package remote

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/locktest"
)

// The client is every locktest capability; a child that lacks an op
// answers PROTOCOL, and its host skips those scenarios by name.

func (cl *client) AcquirePermit(ctx context.Context, resource string, permits int, ttl time.Duration, opts ...core.AcquireOption) (locktest.PermitLock, error) {
	l, err := cl.acquire(ctx, map[string]any{"resource": resource, "permits": permits}, ttl, opts)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (cl *client) InspectPermits(ctx context.Context, resource string, permits int) (*core.Inspection, error) {
	if ctx == nil {
		return nil, errors.New("remote: a nil context cannot be sent to a child")
	}
	return cl.inspect(ctx, map[string]any{"op": "inspect", "client": cl.id, "resource": resource, "permits": permits})
}

func (cl *client) AcquireRead(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (locktest.Lock, error) {
	return asLock(cl.acquire(ctx, map[string]any{"resource": resource, "mode": "read"}, ttl, opts))
}

func (cl *client) AcquireWrite(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (locktest.Lock, error) {
	return asLock(cl.acquire(ctx, map[string]any{"resource": resource, "mode": "write"}, ttl, opts))
}

func (cl *client) AcquireAll(ctx context.Context, resources []string, ttl time.Duration, opts ...core.AcquireOption) (locktest.Lock, error) {
	if resources == nil {
		resources = []string{}
	}
	return asLock(cl.acquire(ctx, map[string]any{"resources": resources}, ttl, opts))
}

// leadership is a campaign's lock in the child: its release resigns.
type leadership struct {
	*lock
	term  int64
	value string
}

func (ld *leadership) Term() int64                      { return ld.term }
func (ld *leadership) Value() string                    { return ld.value }
func (ld *leadership) Resign(ctx context.Context) error { return ld.Release(ctx) }

func (cl *client) Campaign(ctx context.Context, name, value string, ttl, wait time.Duration) (locktest.Leadership, error) {
	if ctx == nil {
		return nil, errors.New("remote: a nil context cannot be sent to a child")
	}
	req := map[string]any{"op": "campaign", "client": cl.id, "name": name, "value": value, "ttl": ms(ttl)}
	if wait >= 0 {
		req["wait"] = ms(wait)
	}
	m, err := cl.c.call(ctx, req)
	if err != nil {
		return nil, err
	}
	ld := &leadership{lock: &lock{c: cl.c, lost: make(chan struct{}), ttl: ttl}}
	_ = json.Unmarshal(m["lock"], &ld.id)
	_ = json.Unmarshal(m["term"], &ld.term)
	_ = json.Unmarshal(m["value"], &ld.value)
	ld.fence = ld.term
	cl.c.register(ld.lock)
	return ld, nil
}

// observer is one Observe in the child: the changes, queued by the reader
// goroutine, handed to the caller's channel in order by forward.
type observer struct {
	mu    sync.Mutex
	queue []core.Leader
	ended bool
	wake  chan struct{} // 1-buffered
}

func (c *Child) observed(end bool, m map[string]json.RawMessage) {
	var id int64
	_ = json.Unmarshal(m["observer"], &id)
	c.mu.Lock()
	o := c.observers[id]
	if end {
		delete(c.observers, id)
	}
	c.mu.Unlock()
	if o == nil {
		return
	}
	o.mu.Lock()
	if end {
		o.ended = true
	} else {
		var l core.Leader
		_ = json.Unmarshal(m["name"], &l.Name)
		_ = json.Unmarshal(m["value"], &l.Value)
		_ = json.Unmarshal(m["term"], &l.Term)
		_ = json.Unmarshal(m["owner"], &l.Owner)
		if l.Term != 0 {
			l.Validity = dur(m["validity"])
		}
		o.queue = append(o.queue, l)
	}
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (cl *client) Observe(ctx context.Context, name string) (<-chan core.Leader, error) {
	if ctx == nil {
		return nil, errors.New("remote: a nil context cannot be sent to a child")
	}
	o := &observer{wake: make(chan struct{}, 1)}
	// The observer's id is this side's, registered before the request: the
	// child's first event may come before its answer is read.
	cl.c.mu.Lock()
	cl.c.nextID++
	id := cl.c.nextID
	cl.c.observers[id] = o
	cl.c.mu.Unlock()
	if _, err := cl.c.call(ctx, map[string]any{"op": "observe", "client": cl.id, "name": name, "observer": id}); err != nil {
		cl.c.mu.Lock()
		delete(cl.c.observers, id)
		cl.c.mu.Unlock()
		return nil, err
	}
	ch := make(chan core.Leader)
	go cl.forward(ctx, id, o, ch)
	return ch, nil
}

// forward hands o's changes to ch until the child ends the observation
// (after ctx ended: unobserve, or the client closed).
func (cl *client) forward(ctx context.Context, id int64, o *observer, ch chan core.Leader) {
	defer close(ch)
	done := ctx.Done()
	for {
		o.mu.Lock()
		var next *core.Leader
		if len(o.queue) > 0 {
			next = &o.queue[0]
			o.queue = o.queue[1:]
		}
		ended := o.ended
		o.mu.Unlock()
		if next != nil {
			select {
			case ch <- *next:
				continue
			case <-done:
			}
		} else if ended {
			return
		} else {
			select {
			case <-o.wake:
				continue
			case <-done:
			}
		}
		// ctx ended: stop the observation, then drain until the child says
		// it ended.
		done = nil
		_, _ = cl.c.call(context.Background(), map[string]any{"op": "unobserve", "observer": id})
		for {
			o.mu.Lock()
			o.queue = nil
			ended := o.ended
			o.mu.Unlock()
			if ended {
				return
			}
			<-o.wake
		}
	}
}
