package core

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/ownthread"
)

// Client acquires locks over a fixed set of nodes. It is safe for
// concurrent use; make one per set of nodes and share it.
//
// A Client is a driver: the engine (core/engine) makes every decision and
// speaks the Redis protocol; the Client moves its bytes over net.Conn (TLS
// included), keeps its one timer, and turns its results into return values,
// channels and callbacks.
type Client struct {
	eng    Engine
	inline awaiter // set for a one-node Client over an engine that tells (driver.go)
	dial   dialFunc
	// rawDial: dial is the driver's own (New), which a rawConn may replace.
	rawDial bool
	timeout time.Duration
	onClose func() error
	// tel maps the engine's reports onto metrics, spans and logs
	// (otel.go); nil without them. Set before the first operation, used
	// under mu.
	tel *telemetry
	// logger gets the losses at Warn (warnLost); nil: slog.Default().
	logger *slog.Logger

	mu      sync.Mutex
	conns   map[engine.ConnID]*driverConn
	ops     map[engine.OpID]chan opResult
	locks   map[engine.LockID]*Lock
	timer   *time.Timer
	closing bool
	// ownThread: a caller on its own thread (ownthread) has used the
	// Client; from then on its one-node connections are rawConns.
	ownThread    bool
	engineClosed chan struct{}
	wg           sync.WaitGroup // connect and read goroutines, Observe's
	// observers: the elections watched (election.go), by watch.
	observers map[engine.OpID]*observer
	// reports: SetReports's function (reports.go), nil without one;
	// reportTags: the report tags of the tagged operations in flight.
	reports    func(Report)
	reportTags map[engine.OpID]any
}

func newClient(eng Engine, dial dialFunc, timeout time.Duration, onClose func() error) *Client {
	c := &Client{
		eng: eng, dial: dial, timeout: timeout, onClose: onClose,
		conns:        map[engine.ConnID]*driverConn{},
		ops:          map[engine.OpID]chan opResult{},
		locks:        map[engine.LockID]*Lock{},
		engineClosed: make(chan struct{}),
	}
	if a, ok := eng.(awaiter); ok && eng.Quorum() == 1 {
		c.inline = a
	}
	c.timer = time.AfterFunc(time.Hour, c.tick)
	c.timer.Stop()
	c.guard(func() {}) // carry out what the engine did when it was made
	return c
}

// NewWithEngine returns a Client that drives eng over sockets: how the Go
// wasm host (wasm/host) runs liblock.wasm's engine. cfg gives the node
// timeout, which bounds the driver's own dials, and the TLS settings of its
// rediss:// nodes.
func NewWithEngine(eng Engine, cfg Config) (*Client, error) {
	if eng == nil {
		return nil, invalidArg("engine", "must not be nil")
	}
	c := newClient(eng, dialTLS(cfg.TLS, cfg.NodeTLS), cfg.nodeTimeout(), nil)
	// Metrics and spans from whatever reports eng makes (wasm/host asks
	// its module for them unless cfg.NoTelemetry); the node addresses
	// label the node instruments (none when cfg.Nodes does not parse:
	// then those are not recorded).
	nodes, _ := engine.ParseNodes(cfg.Nodes)
	c.tel = newTelemetry(cfg, nodes)
	c.quietReports(cfg)
	c.logger = cfg.Logger
	return c, nil
}

// Quorum returns how many nodes must agree: N/2+1.
func (c *Client) Quorum() int { return c.eng.Quorum() }

// Acquire takes the lock on resource for ttl. Without Wait it makes one
// attempt; with Wait it retries until the wait runs out, ctx ends, or the
// Client is closed. It returns ErrNotAcquired when another owner holds the
// resource, ErrUnavailable when too many nodes failed, and ctx.Err() (wrapped)
// when ctx ended first. No key is left behind on failure.
func (c *Client) Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...AcquireOption) (*Lock, error) {
	if ctx == nil {
		return nil, invalidArg("ctx", "must not be nil")
	}
	o, err := acquireSettings(opts)
	if err != nil {
		return nil, err
	}
	req := engine.AcquireRequest{Resource: resource, TTL: ttl, Wait: o.Wait, AutoExtend: o.AutoExtend, Token: o.Token, Fence: o.Fence, Permits: o.Permits, Mode: o.Mode}
	return c.acquire(ctx, req, strconv.Quote(resource))
}

// acquire runs a validated-here request; label names it in a cancellation's
// error.
func (c *Client) acquire(ctx context.Context, req engine.AcquireRequest, label string) (_ *Lock, err error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, wrap("liblock: acquire "+label, err)
	}
	begin := c.tagged(ctx, func() (engine.OpID, error) { return c.eng.Acquire(req) })
	if c.tel != nil {
		var span trace.Span
		begin, span = c.tel.start(ctx, "acquire", req.Resource, 0, begin)
		defer func() { failedIf(span, err) }()
	}
	op, ch, in, err := c.start(true, ownthread.Is(ctx), begin)
	if err != nil {
		return nil, err
	}
	if r, ok := c.outcome(in, ch, ctx.Done(), ownthread.Is(ctx)); ok {
		return r.lock, r.err
	}
	c.guard(func() { c.eng.Cancel(op) })
	r := <-ch
	if errors.Is(r.err, engine.ErrCanceled) {
		return nil, wrap("liblock: acquire "+label, ctx.Err())
	}
	return r.lock, r.err // it ended before the cancellation did
}

// await starts a lock operation and waits for its outcome, or for ctx when
// cancelable (else the operation still ends within the node timeout).
func (c *Client) await(ctx context.Context, cancelable bool, start func() (engine.OpID, error)) (error, bool) {
	_, ch, in, err := c.start(false, ownthread.Is(ctx), start)
	if err != nil {
		return err, false
	}
	var done <-chan struct{}
	if cancelable {
		done = ctx.Done()
	}
	if r, ok := c.outcome(in, ch, done, ownthread.Is(ctx)); ok {
		return r.err, true
	}
	return ctx.Err(), false
}

// start begins an operation under the driver's lock (refused with
// ErrClosed once the client closes, when refuseClosed) and returns the
// channel its outcome arrives on, and with Client.inline the connection the
// caller is to read its reply from (readInline), if there is one.
func (c *Client) start(refuseClosed, ownThread bool, begin func() (engine.OpID, error)) (engine.OpID, chan opResult, *inlineRead, error) {
	ch := make(chan opResult, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ownThread {
		c.ownThread = true
	}
	if refuseClosed && c.closing {
		return 0, nil, nil, ErrClosed
	}
	c.levelReports()
	if c.inline != nil && !skipCheckIdle {
		c.checkIdle()
	}
	op, err := begin()
	if err == nil {
		c.ops[op] = ch
	}
	c.carryOut()
	var in *inlineRead
	if err == nil {
		if id, dc := c.claim(); dc != nil {
			in = &inlineRead{id: id, dc: dc}
		}
	}
	if c.inline != nil {
		c.startReaders()
	}
	return op, ch, in, err
}

// inlineRead is the connection a caller reads its reply from itself.
type inlineRead struct {
	id engine.ConnID
	dc *driverConn
}

// outcome waits for an operation's outcome on the caller's goroutine: it
// reads the reply itself when start gave it a connection, and then waits
// for ch or done (nil: no cancellation). ok is false when done came first.
// ownThread: the caller waits on a thread Go did not create (ownthread),
// which reads in a poll(2) of its own rather than on Go's netpoller.
func (c *Client) outcome(in *inlineRead, ch chan opResult, done <-chan struct{}, ownThread bool) (r opResult, ok bool) {
	if in != nil {
		read := readNetpoller
		if ownThread {
			read = readPolling
		}
		if r, got := c.readInline(in.id, in.dc, ch, read); got {
			return r, true
		}
	}
	select {
	case r = <-ch:
		return r, true
	case <-done:
		return r, false
	}
}

func (c *Client) newLock(id engine.LockID) *Lock {
	info, _ := c.eng.Lock(id)
	l := &Lock{
		c: c, id: id, resource: info.Resource, key: info.Key, token: info.Token,
		ttl: info.TTL, autoExtend: info.AutoExtend, lost: make(chan struct{}),
		fence: info.Fence, reentered: info.Reentered, resources: info.Resources, permits: info.Permits, slot: info.Slot, mode: info.Mode,
	}
	c.locks[id] = l
	return l
}

// Inspection is what Inspect reports about a resource.
type Inspection = engine.Inspection

// NodeState is one node's part of an Inspection.
type NodeState = engine.NodeState

// NoExpiry is Inspection.Validity (and NodeState.TTL) of a key without an
// expiry: one set by another program without PX.
const NoExpiry = engine.NoExpiry

// Inspect reports whether resource is held on a quorum, how long it
// certainly stays held, and the holder's owner label (Config.Owner), with
// each node's answer, without taking it. ErrUnavailable means too many
// nodes failed to tell. When ctx ends first it returns ctx's error. With
// InspectPermits it inspects a semaphore instead (semaphore.go), with
// InspectReadWrite a read-write lock (rwlock.go).
func (c *Client) Inspect(ctx context.Context, resource string, opts ...InspectOption) (*Inspection, error) {
	if ctx == nil {
		return nil, invalidArg("ctx", "must not be nil")
	}
	req, err := inspectRequest(resource, opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, wrap("liblock: inspect "+strconv.Quote(resource), err)
	}
	_, ch, in, err := c.start(true, ownthread.Is(ctx), func() (engine.OpID, error) {
		if ie, ok := c.eng.(interface {
			InspectWith(engine.InspectRequest) (engine.OpID, error)
		}); ok && (req.Permits != 0 || req.Mode != engine.ModeExclusive) {
			return ie.InspectWith(req) // a semaphore or read-write lock: engines that know InspectWith
		} else if req.Permits != 0 || req.Mode != engine.ModeExclusive {
			return 0, invalidArg("opts", "this engine inspects only mutexes")
		}
		return c.eng.Inspect(resource)
	})
	if err != nil {
		return nil, err
	}
	if r, ok := c.outcome(in, ch, ctx.Done(), ownthread.Is(ctx)); ok {
		return r.inspection, r.err
	}
	return nil, wrap("liblock: inspect "+strconv.Quote(resource), ctx.Err())
}

// Close releases every lock this Client still holds (each bounded by the
// node timeout), makes waiting Acquire calls return ErrClosed, waits for
// calls in flight, and closes the connections. Calling it twice is harmless.
func (c *Client) Close() error {
	c.mu.Lock()
	first := !c.closing
	if first {
		c.closing = true
		c.eng.Close()
		c.drain()
	}
	c.mu.Unlock()
	<-c.engineClosed
	if !first {
		return nil
	}
	c.mu.Lock()
	for _, l := range c.locks {
		l.released = true
	}
	c.locks = map[engine.LockID]*Lock{}
	for id, dc := range c.conns { // dials the engine no longer waits for
		delete(c.conns, id)
		dc.cancel()
		if dc.nc != nil {
			dc.nc.Close()
		}
	}
	c.timer.Stop()
	c.mu.Unlock()
	c.wg.Wait()
	if c.onClose != nil {
		return c.onClose()
	}
	return nil
}
