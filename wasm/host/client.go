package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/wasm/internal/abi"
	"github.com/tetratelabs/wazero/api"
)

// maxIdle bounds the instances a Client keeps for later acquires.
const maxIdle = 8

// Client acquires locks through the wasm module. Safe for concurrent use.
type Client struct {
	m       *Module
	cfgJSON string
	prefix  string
	drift   float64 // the configuration's drift factor
	nodes   *nodeSet

	mu      sync.Mutex
	closed  bool
	closing chan struct{}
	all     map[*instance]struct{}
	idle    []*instance
	locks   map[*Lock]struct{}
}

// NewClient validates cfg (in the module, as the C ABI does) and returns a
// Client. It does not connect: connections are made on first use.
func (m *Module) NewClient(cfg core.Config) (*Client, error) {
	cfgJSON, err := configJSON(cfg)
	if err != nil {
		return nil, err
	}
	c := &Client{m: m, cfgJSON: cfgJSON, prefix: cfg.KeyPrefix, drift: core.DefaultDriftFactor, closing: make(chan struct{}), all: map[*instance]struct{}{}, locks: map[*Lock]struct{}{}}
	if cfg.DriftFactor != nil {
		c.drift = *cfg.DriftFactor
	}
	in, err := c.newInstance()
	if err != nil {
		return nil, err
	}
	timeout := cfg.NodeTimeout
	if timeout == 0 {
		timeout = core.DefaultNodeTimeout
	}
	if c.nodes, err = newNodeSet(cfg.Nodes, timeout); err != nil {
		in.close()
		return nil, err
	}
	c.all[in] = struct{}{}
	c.idle = append(c.idle, in)
	return c, nil
}

// configJSON writes cfg in the C ABI's keys.
func configJSON(cfg core.Config) (string, error) {
	obj := map[string]any{"nodes": cfg.Nodes}
	if cfg.Nodes == nil {
		obj["nodes"] = []string{}
	}
	if cfg.NodeTimeout != 0 {
		ms := cfg.NodeTimeout.Milliseconds()
		if cfg.NodeTimeout > 0 && ms == 0 {
			ms = 1
		}
		obj["node_timeout_ms"] = ms
	}
	if d := cfg.DriftFactor; d != nil {
		if math.IsNaN(*d) || math.IsInf(*d, 0) {
			return "", &core.ArgumentError{Arg: "drift_factor", Reason: fmt.Sprintf("must be between 0 and %v, got %v", core.MaxDriftFactor, *d)}
		}
		obj["drift_factor"] = *d
	}
	if cfg.KeyPrefix != "" {
		obj["key_prefix"] = cfg.KeyPrefix
	}
	b, err := json.Marshal(obj)
	return string(b), err
}

// newInstance instantiates the module and creates the guest client.
func (c *Client) newInstance() (*instance, error) {
	in, err := c.m.newInstance()
	if err != nil {
		return nil, err
	}
	in.lockCtx = withState(context.Background(), &callState{client: c, inst: in})
	ptrs, err := in.input(c.cfgJSON)
	if err != nil {
		in.close()
		return nil, err
	}
	f := in.mod.ExportedFunction("lock_client_new")
	st := in.stack[:]
	st[0], st[1] = uint64(ptrs[0][0]), uint64(ptrs[0][1])
	st[2], st[3] = uint64(in.scratch+offHandle), uint64(in.scratch+offErr)
	if err := f.CallWithStack(in.lockCtx, st); err != nil {
		in.close()
		return nil, fmt.Errorf("liblock: wasm lock_client_new: %w", err)
	}
	if status := api.DecodeI32(st[0]); status != abi.OK {
		err := decodeError(status, in.takeBuf(offErr))
		in.close()
		return nil, err
	}
	in.client = in.u64(offHandle)
	return in, nil
}

func (c *Client) isClosing() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

// get takes an idle instance or makes a new one.
func (c *Client) get() (*instance, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, core.ErrClosed
	}
	if n := len(c.idle); n > 0 {
		in := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return in, nil
	}
	c.mu.Unlock()
	in, err := c.newInstance()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		in.close()
		return nil, core.ErrClosed
	}
	c.all[in] = struct{}{}
	return in, nil
}

// put returns an instance to the pool; a broken one is dropped.
func (c *Client) put(in *instance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return // Close frees every instance
	}
	if in.closed || len(c.idle) >= maxIdle {
		delete(c.all, in)
		in.mu.Lock()
		if !in.closed {
			c.freeGuest(in)
		}
		in.mu.Unlock()
		return
	}
	c.idle = append(c.idle, in)
}

// freeGuest closes the guest client (releasing its locks) and the instance.
// in.mu must be held.
func (c *Client) freeGuest(in *instance) {
	in.stack[0] = in.client
	_ = in.free.CallWithStack(in.lockCtx, in.stack[:])
	in.close()
}

// Acquire takes the lock on resource for ttl, as core.Client.Acquire does.
func (c *Client) Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (*Lock, error) {
	if ctx == nil {
		return nil, &core.ArgumentError{Arg: "ctx", Reason: "must not be nil"}
	}
	if err := checkTTL(ttl); err != nil {
		return nil, err
	}
	wait, autoExtend, err := core.AcquireSettings(opts...)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("liblock: acquire %q: %w", resource, err)
	}
	var optJSON string
	if wait > 0 || autoExtend {
		optJSON = `{"wait_ms":` + strconv.FormatInt(int64((wait+time.Millisecond-1)/time.Millisecond), 10) +
			`,"auto_extend":` + strconv.FormatBool(autoExtend) + `}`
	}
	in, err := c.get()
	if err != nil {
		return nil, err
	}
	in.mu.Lock()
	h, status, rec, seen, callErr := c.callAcquire(ctx, in, resource, ttl, optJSON)
	if callErr != nil {
		in.close() // a trapped instance is not used again
	}
	var l *Lock
	if status == abi.OK && callErr == nil {
		l = &Lock{c: c, in: in, h: h, resource: resource, lost: make(chan struct{})}
		if autoExtend || !l.primeLocked(seen, ttl, time.Now()) {
			l.refreshLocked()
		}
	}
	in.mu.Unlock()

	switch {
	case callErr != nil:
		c.put(in)
		return nil, callErr
	case l == nil:
		c.put(in)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("liblock: acquire %q: %w", resource, ctxErr)
		}
		if status == abi.Canceled {
			return nil, core.ErrClosed
		}
		return nil, decodeError(status, rec)
	}
	c.mu.Lock()
	if c.closed {
		// Close frees this instance's guest client, which releases the lock.
		c.mu.Unlock()
		return nil, core.ErrClosed
	}
	c.locks[l] = struct{}{}
	c.mu.Unlock()
	l.mu.Lock()
	l.scheduleLocked()
	l.mu.Unlock()
	return l, nil
}

// callAcquire calls lock_acquire; seen is what the host saw of its attempts.
func (c *Client) callAcquire(ctx context.Context, in *instance, resource string, ttl time.Duration, optJSON string) (h uint64, status int32, rec []byte, seen *callState, err error) {
	if in.closed {
		return 0, 0, nil, nil, core.ErrClosed
	}
	ptrs, err := in.input(resource, optJSON)
	if err != nil {
		return 0, 0, nil, nil, err
	}
	st := in.stack[:]
	st[0] = in.client
	st[1], st[2] = uint64(ptrs[0][0]), uint64(ptrs[0][1])
	st[3] = uint64(ttl.Milliseconds())
	st[4], st[5] = 0, 0 // NULL options
	if optJSON != "" {
		st[4], st[5] = uint64(ptrs[1][0]), uint64(ptrs[1][1])
	}
	st[6], st[7] = uint64(in.scratch+offHandle), uint64(in.scratch+offErr)
	seen = &callState{user: ctx, client: c, inst: in, lastEnd: time.Now()}
	if err := in.acquire.CallWithStack(withState(ctx, seen), st); err != nil {
		return 0, 0, nil, nil, fmt.Errorf("liblock: wasm lock_acquire: %w", err)
	}
	status = api.DecodeI32(st[0])
	if status != abi.OK {
		return 0, status, in.takeBuf(offErr), seen, nil
	}
	return in.u64(offHandle), status, nil, seen, nil
}

func checkTTL(ttl time.Duration) error {
	if ttl < core.MinTTL || ttl > core.MaxTTL {
		return &core.ArgumentError{Arg: "ttl", Reason: fmt.Sprintf("must be between %v and %v, got %v", core.MinTTL, core.MaxTTL, ttl)}
	}
	return nil
}

// Close releases every lock the Client still holds, makes waiting Acquire
// calls return core.ErrClosed, waits for calls in flight, frees the
// instances and closes the connections. Calling it twice is harmless.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.closing)
	insts := make([]*instance, 0, len(c.all))
	for in := range c.all {
		insts = append(insts, in)
	}
	locks := make([]*Lock, 0, len(c.locks))
	for l := range c.locks {
		locks = append(locks, l)
	}
	c.all, c.idle, c.locks = nil, nil, nil
	c.mu.Unlock()

	var wg sync.WaitGroup
	for _, in := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in.mu.Lock() // waits for the call in flight, told to stop
			defer in.mu.Unlock()
			if !in.closed {
				c.freeGuest(in) // releases the guest's locks
			}
		}()
	}
	wg.Wait()
	for _, l := range locks {
		l.mu.Lock()
		l.done, l.released = true, true
		l.stopTimerLocked()
		l.mu.Unlock()
	}
	c.nodes.close()
	return nil
}

// decodeError rebuilds an error of the module as core's error types, with
// the Go API's argument names.
func decodeError(status int32, recJSON []byte) error {
	var rec abi.ErrorRecord
	if err := json.Unmarshal(recJSON, &rec); err != nil || rec.Message == "" {
		rec.Message = fmt.Sprintf("liblock: wasm: status %d: %s", status, recJSON)
	}
	switch status {
	case abi.OK:
		return nil
	case abi.InvalidArgument:
		arg := rec.Arg
		switch arg {
		case "node_timeout_ms":
			arg = "node_timeout"
		case "ttl_ms":
			arg = "ttl"
		case "wait_ms":
			arg = "wait"
		}
		return &core.ArgumentError{Arg: arg, Reason: rec.Reason}
	case abi.Unavailable:
		ue := &core.UnavailableError{Op: rec.Op, Reason: rec.Reason}
		for _, n := range rec.Nodes {
			ue.Nodes = append(ue.Nodes, &core.NodeError{Node: n.Node, Addr: n.Addr, Err: errors.New(n.Error)})
		}
		return ue
	case abi.NotAcquired:
		return &kindError{msg: rec.Message, kind: core.ErrNotAcquired}
	case abi.Lost:
		return &kindError{msg: rec.Message, kind: core.ErrLost}
	case abi.Canceled:
		return &kindError{msg: rec.Message, kind: context.Canceled}
	}
	return fmt.Errorf("liblock: wasm: status %d: %s", status, rec.Message)
}

// kindError carries the module's message and the sentinel it stands for.
type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }
