package host

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/hostabi"
)

// Engine is one liblock engine inside its own module instance, with the
// method set of *engine.Engine (package core's Engine interface). Like an
// engine it is not safe for concurrent use. Once it has emitted ActClosed
// (after Close) its instance is freed; requests then fail with
// engine.ErrClosed and events are ignored. Free frees it at once.
type Engine struct {
	a     *hostabi.Adapter
	in    *instance
	h     uint64
	once  sync.Once
	freed bool
}

// NewEngine makes an engine of cfg in a new instance of m. cfg is passed
// to the module as lock_client_new's JSON (durations in whole
// milliseconds, rounded up).
func (m *Module) NewEngine(cfg core.Config) (*Engine, error) {
	js, err := configJSON(cfg)
	if err != nil {
		return nil, err
	}
	in, err := m.newInstance()
	if err != nil {
		return nil, err
	}
	h, err := in.newEngine(js)
	if err != nil {
		in.close()
		return nil, err
	}
	e := &Engine{a: hostabi.NewAdapter(&stepper{in: in, h: h}, len(cfg.Nodes)), in: in, h: h}
	// The Go driver leaves a one-node client's idle connection unread and
	// reads replies on the caller's goroutine; it asks Awaiting when. With
	// more nodes it keeps a reader per connection and never asks, so the
	// module is spared the report (≈ 1 µs per pair on 5 nodes in wazero).
	if len(cfg.Nodes) == 1 {
		e.a.ReportAwaiting()
	}
	return e, nil
}

func configJSON(cfg core.Config) ([]byte, error) {
	c := map[string]any{"nodes": cfg.Nodes}
	if cfg.Nodes == nil {
		c["nodes"] = []string{}
	}
	if cfg.NodeTimeout != 0 {
		ms := (cfg.NodeTimeout + time.Millisecond - 1) / time.Millisecond
		if cfg.NodeTimeout < 0 {
			ms = -1
		}
		c["node_timeout_ms"] = int64(ms)
	}
	if cfg.DriftFactor != nil {
		c["drift_factor"] = *cfg.DriftFactor
	}
	if cfg.Owner != "" {
		c["owner"] = cfg.Owner
	}
	if cfg.KeyPrefix != "" {
		c["key_prefix"] = cfg.KeyPrefix
	}
	if cfg.WaitReplicas != nil {
		c["wait_replicas"] = *cfg.WaitReplicas
	}
	if !cfg.NoTelemetry {
		c["report"] = true // the Go driver maps the reports (core/otel.go)
	}
	return json.Marshal(c)
}

// Free frees the engine and its instance at once (no I/O: use Close and
// wait for ActClosed for an orderly end). Later calls are harmless.
func (e *Engine) Free() {
	e.once.Do(func() {
		e.freed = true
		e.in.close()
	})
}

// SetReports sets which reports the module's engine makes from now on.
func (e *Engine) SetReports(level engine.ReportLevel) {
	if !e.freed {
		e.a.SetReports(level)
	}
}

// Quorum returns N/2+1.
func (e *Engine) Quorum() int { return e.a.Quorum() }

func (e *Engine) Acquire(r engine.AcquireRequest) (engine.OpID, error) {
	if e.freed {
		if err := r.Validate(); err != nil {
			return 0, err
		}
		return 0, engine.ErrClosed
	}
	return e.a.Acquire(r)
}

func (e *Engine) Inspect(resource string) (engine.OpID, error) {
	if e.freed {
		if err := engine.CheckResource(resource); err != nil {
			return 0, err
		}
		return 0, engine.ErrClosed
	}
	return e.a.Inspect(resource)
}

// InspectWith starts an inspection of a semaphore or other lock kind.
func (e *Engine) InspectWith(r engine.InspectRequest) (engine.OpID, error) {
	if e.freed {
		if err := r.Validate(); err != nil {
			return 0, err
		}
		return 0, engine.ErrClosed
	}
	return e.a.InspectWith(r)
}

func (e *Engine) Extend(l engine.LockID, ttl time.Duration) (engine.OpID, error) {
	if e.freed {
		return 0, engine.ErrUnknownLock
	}
	return e.a.Extend(l, ttl)
}

func (e *Engine) Release(l engine.LockID) (engine.OpID, error) {
	if e.freed {
		return 0, engine.ErrUnknownLock
	}
	return e.a.Release(l)
}

func (e *Engine) Cancel(op engine.OpID) bool { return !e.freed && e.a.Cancel(op) }

func (e *Engine) Forget(l engine.LockID) {
	if !e.freed {
		e.a.Forget(l)
	}
}

func (e *Engine) Lock(l engine.LockID) (engine.LockInfo, bool) {
	if e.freed {
		return engine.LockInfo{}, false
	}
	return e.a.Lock(l)
}

func (e *Engine) Close() {
	if !e.freed {
		e.a.Close()
	}
}

func (e *Engine) Opened(c engine.ConnID) {
	if !e.freed {
		e.a.Opened(c)
	}
}

func (e *Engine) Received(c engine.ConnID, p []byte) {
	if !e.freed {
		e.a.Received(c, p)
	}
}

func (e *Engine) ConnFailed(c engine.ConnID, err error) {
	if !e.freed {
		e.a.ConnFailed(c, err)
	}
}

// Awaiting reports whether the engine expects bytes on connection c.
func (e *Engine) Awaiting(c engine.ConnID) bool { return !e.freed && e.a.Awaiting(c) }

func (e *Engine) Tick() {
	if !e.freed {
		e.a.Tick()
	}
}

// Next returns the next action; after ActClosed the instance is freed.
func (e *Engine) Next() (engine.Action, bool) {
	a, ok := e.a.Next()
	if ok && a.Kind == engine.ActClosed {
		e.Free()
	}
	return a, ok
}

// NewClient returns a *core.Client — the Go driver, the same one core.New
// returns — running an engine of cfg in a new instance of m: one driver,
// two engines. Close frees the instance.
func (m *Module) NewClient(cfg core.Config) (*core.Client, error) {
	// Checked here first, by the same engine code the module runs, so that
	// errors name the Go API's fields (node_timeout, not node_timeout_ms).
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e, err := m.NewEngine(cfg)
	if err != nil {
		return nil, err
	}
	return core.NewWithEngine(e, cfg)
}
