package core

import (
	"context"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// Retry delays while waiting: randomized (jitter breaks split votes between
// contenders) and growing, so that a long wait does not hammer the nodes.
const (
	minRetryDelay = 2 * time.Millisecond
	maxRetryDelay = 50 * time.Millisecond
	// clockPrecision is Redis's expiry precision, added to the drift.
	clockPrecision = 2 * time.Millisecond
)

// Client acquires locks over a fixed set of nodes. It is safe for
// concurrent use; make one per set of nodes and share it.
type Client struct {
	t          Transport
	prefix     string
	drift      float64
	quorum     int
	nodeTimout time.Duration

	mu      sync.Mutex
	closed  bool
	done    chan struct{}        // closed by Close: stops waits
	locks   map[*Lock]struct{}   // held locks, released by Close
	waiters map[string][]*waiter // per key: local waiters, oldest first
	pending sync.WaitGroup       // Acquire calls in flight
}

// waiter is one Acquire waiting for a key. A release of that key by a lock
// of this Client wakes the oldest waiter only: waking them all would make
// them split the vote and all back off.
type waiter struct {
	ch chan struct{} // buffered: a wake is never lost, never blocks
}

// NewWithTransport returns a Client that runs over t. cfg.Nodes is ignored
// (t knows its nodes); cfg.NodeTimeout should be the timeout t enforces, and
// is used to bound cleanup after a canceled acquire.
func NewWithTransport(t Transport, cfg Config) (*Client, error) {
	if t == nil {
		return nil, invalidArg("transport", "must not be nil")
	}
	if err := cfg.validateOptions(); err != nil {
		return nil, err
	}
	n := len(t.Nodes())
	if n == 0 || n > MaxNodes {
		return nil, invalidArg("nodes", "between 1 and "+strconv.Itoa(MaxNodes)+" nodes, got "+strconv.Itoa(n))
	}
	return &Client{
		t:          t,
		prefix:     cfg.KeyPrefix,
		drift:      cfg.driftFactor(),
		quorum:     n/2 + 1,
		nodeTimout: cfg.nodeTimeout(),
		done:       make(chan struct{}),
		locks:      map[*Lock]struct{}{},
		waiters:    map[string][]*waiter{},
	}, nil
}

// Quorum returns how many nodes must agree: N/2+1.
func (c *Client) Quorum() int { return c.quorum }

// Acquire takes the lock on resource for ttl. Without Wait it makes one
// attempt; with Wait it retries until the wait runs out, ctx ends, or the
// Client is closed. It returns ErrNotAcquired when another owner holds the
// resource, ErrUnavailable when too many nodes failed, and ctx.Err() (wrapped)
// when ctx ended first. No key is left behind on failure.
func (c *Client) Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...AcquireOption) (*Lock, error) {
	if ctx == nil {
		return nil, invalidArg("ctx", "must not be nil")
	}
	if err := checkResource(resource); err != nil {
		return nil, err
	}
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	var o acquireOptions
	for _, opt := range opts {
		if opt == nil {
			return nil, invalidArg("opts", "nil AcquireOption")
		}
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if !c.enter() {
		return nil, ErrClosed
	}
	defer c.pending.Done()

	key := c.prefix + resource
	token := newToken() // 128 random bits
	deadline := time.Now().Add(o.wait)
	var wake <-chan struct{} // nil, never ready, without a wait
	if o.wait > 0 {
		// Queue before the first attempt, so a release between an attempt
		// and the sleep after it is not missed.
		w := c.subscribe(key)
		defer c.unsubscribe(key, w)
		wake = w.ch
	}
	delay := minRetryDelay
	for {
		if err := ctx.Err(); err != nil {
			return nil, wrap("liblock: acquire "+strconv.Quote(resource), err)
		}
		validUntil, err := c.tryAcquire(ctx, resource, key, token, ttl)
		if err == nil {
			return c.newLock(resource, key, token, ttl, validUntil, o.autoExtend)
		}
		remaining := time.Until(deadline)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, wrap("liblock: acquire "+strconv.Quote(resource), ctxErr)
		}
		if remaining <= 0 {
			return nil, err
		}
		// Only the oldest local waiter polls the nodes; the others wait to
		// be woken (by a local release, or by becoming the oldest), so a
		// thousand waiters on one key cost one poller, not a thousand.
		sleep := remaining
		if c.isOldest(key, wake) {
			sleep = min(delay/2+mrand.N(delay/2+1), remaining)
			delay = min(2*delay, maxRetryDelay)
		}
		timer := time.NewTimer(sleep)
		select {
		case <-timer.C:
		case <-wake:
		case <-ctx.Done():
		case <-c.done:
			timer.Stop()
			return nil, ErrClosed
		}
		timer.Stop()
	}
}

// tryAcquire makes one Redlock attempt and returns when the lock's
// validity ends. On failure it cleans up every node that may hold the token.
func (c *Client) tryAcquire(ctx context.Context, resource, key, token string, ttl time.Duration) (time.Time, error) {
	nodes := c.t.Nodes()
	cmd := setNXCommand(key, token, ttl)
	cmds := make([]Command, len(nodes))
	for i := range cmds {
		cmds[i] = cmd
	}
	start := time.Now()
	replies := c.t.Exec(ctx, cmds)
	validity := c.validity(ttl, time.Since(start))

	granted := 0
	var failed []*NodeError
	cleanup := make([]bool, len(replies))
	for i, r := range replies {
		switch {
		case r.Err != nil:
			failed = append(failed, &NodeError{Node: i, Addr: nodes[i], Err: r.Err})
			cleanup[i] = true // it may have set the key before failing
		case r.Nil:
			// The key exists: the one reply that proves our token is not there.
		default:
			granted++
			cleanup[i] = true
		}
	}
	if granted >= c.quorum && validity > 0 {
		return start.Add(validity), nil
	}
	// Not held: drop our token wherever it may be, even when ctx is
	// canceled, bounded by the node timeout.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.nodeTimout)
	releaseScript.run(cctx, c.t, cleanup, key, token)
	cancel()

	switch {
	case len(failed) > len(nodes)-c.quorum:
		return time.Time{}, &UnavailableError{Op: "acquire", Reason: strconv.Itoa(len(failed)) + " of " + strconv.Itoa(len(nodes)) + " nodes failed, quorum is " + strconv.Itoa(c.quorum), Nodes: failed}
	case granted >= c.quorum:
		return time.Time{}, &UnavailableError{Op: "acquire", Reason: "granted by a quorum but too slowly: no validity left of a " + ttl.String() + " ttl", Nodes: failed}
	}
	return time.Time{}, &opError{op: "acquire", resource: resource, kind: ErrNotAcquired,
		detail: "granted by " + strconv.Itoa(granted) + " of " + strconv.Itoa(len(nodes)) + " nodes, quorum is " + strconv.Itoa(c.quorum)}
}

// validity is what is left of ttl after an operation that took elapsed.
func (c *Client) validity(ttl, elapsed time.Duration) time.Duration {
	drift := time.Duration(float64(ttl)*c.drift) + clockPrecision
	return ttl - elapsed - drift
}

func (c *Client) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.pending.Add(1)
	return true
}

// subscribe queues a waiter for key.
func (c *Client) subscribe(key string) *waiter {
	w := &waiter{ch: make(chan struct{}, 1)}
	c.mu.Lock()
	c.waiters[key] = append(c.waiters[key], w)
	c.mu.Unlock()
	return w
}

// isOldest reports whether the waiter listening on wake is the oldest on
// key: the one that polls the nodes.
func (c *Client) isOldest(key string, wake <-chan struct{}) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.waiters[key]
	return len(q) > 0 && (<-chan struct{})(q[0].ch) == wake
}

// unsubscribe removes w; a wake it got but did not use goes to the next,
// and when w was the oldest the next oldest is woken to take over polling.
func (c *Client) unsubscribe(key string, w *waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.waiters[key]
	wasOldest := len(q) > 0 && q[0] == w
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(c.waiters, key)
	} else {
		c.waiters[key] = q
	}
	select {
	case <-w.ch:
		c.wakeLocked(key)
		return
	default:
	}
	if wasOldest && len(q) > 0 {
		select {
		case q[0].ch <- struct{}{}:
		default: // already woken
		}
	}
}

// wake tells the oldest local waiter on key, not yet woken, that the key
// may be free.
func (c *Client) wake(key string) {
	c.mu.Lock()
	c.wakeLocked(key)
	c.mu.Unlock()
}

func (c *Client) wakeLocked(key string) {
	for _, w := range c.waiters[key] {
		select {
		case w.ch <- struct{}{}:
			return
		default: // already woken and not yet retried: try the next
		}
	}
}

func (c *Client) newLock(resource, key, token string, ttl time.Duration, validUntil time.Time, autoExtend bool) (*Lock, error) {
	l := &Lock{
		c: c, resource: resource, key: key, token: token, ttl: ttl,
		autoExtend: autoExtend, validUntil: validUntil, lost: make(chan struct{}),
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = l.Release(context.Background())
		return nil, ErrClosed
	}
	c.locks[l] = struct{}{}
	c.mu.Unlock()
	l.mu.Lock()
	l.scheduleLocked(time.Now())
	l.mu.Unlock()
	return l, nil
}

func (c *Client) forget(l *Lock) {
	c.mu.Lock()
	delete(c.locks, l)
	c.mu.Unlock()
}

// Close releases every lock this Client still holds (each bounded by the
// node timeout), makes waiting Acquire calls return ErrClosed, waits for
// calls in flight, and closes the connections. Calling it twice is harmless.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	locks := make([]*Lock, 0, len(c.locks))
	for l := range c.locks {
		locks = append(locks, l)
	}
	c.mu.Unlock()

	var wg sync.WaitGroup
	for _, l := range locks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = l.Release(context.Background())
		}()
	}
	wg.Wait()
	c.pending.Wait()
	return c.t.Close()
}
