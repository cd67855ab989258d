//go:build wasip1

package main

import (
	"context"
	"sync"
	"time"
	"unsafe"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/wasm/internal/abi"
)

// hostExec sends a msgpack exec request to the host and lets it write the
// response into resp (respCap bytes). It returns the response's length; when
// that is more than respCap, nothing was written and hostExecTake copies the
// response into a buffer of that size.
//
//go:wasmimport liblock exec
func hostExec(req unsafe.Pointer, reqLen uint32, resp unsafe.Pointer, respCap uint32) uint32

// hostExecTake copies the pending response of the last exec into buf.
//
//go:wasmimport liblock exec_take
func hostExecTake(buf unsafe.Pointer, bufLen uint32) uint32

// hostInterrupted returns nonzero when the host wants the running call to
// stop: its caller gave up (context canceled) or it is closing the client.
//
//go:wasmimport liblock interrupted
func hostInterrupted() int32

// transport is core.Transport over the exec host call.
type transport struct {
	client  uint64 // the client handle, set once the client exists
	nodes   []string
	timeout time.Duration

	mu   sync.Mutex
	req  []byte
	resp []byte
}

func newTransport(cfg core.Config) *transport {
	t := &transport{nodes: make([]string, len(cfg.Nodes)), timeout: cfg.NodeTimeout, resp: make([]byte, 1024)}
	if t.timeout == 0 {
		t.timeout = core.DefaultNodeTimeout
	}
	for i, n := range cfg.Nodes {
		t.nodes[i] = abi.NodeAddr(n)
	}
	return t
}

func (t *transport) Nodes() []string { return t.nodes }

func (t *transport) Close() error { return nil }

func (t *transport) Exec(ctx context.Context, cmds []core.Command) []core.Reply {
	timeout := t.timeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if err := ctx.Err(); err != nil || timeout <= 0 {
		if err == nil {
			err = context.DeadlineExceeded
		}
		return failAll(cmds, err)
	}
	ms := int64((timeout + time.Millisecond - 1) / time.Millisecond)

	t.mu.Lock()
	defer t.mu.Unlock()
	t.req = abi.AppendRequest(t.req[:0], abi.Request{Client: t.client, TimeoutMS: ms, Cmds: cmds})
	req := t.req
	n := hostExec(unsafe.Pointer(&req[0]), uint32(len(req)), unsafe.Pointer(&t.resp[0]), uint32(len(t.resp)))
	if int(n) > len(t.resp) {
		t.resp = make([]byte, n)
		n = hostExecTake(unsafe.Pointer(&t.resp[0]), n)
	}
	replies, err := abi.ParseReplies(t.resp[:n], len(cmds))
	if err != nil {
		return failAll(cmds, err)
	}
	return replies
}

func failAll(cmds []core.Command, err error) []core.Reply {
	replies := make([]core.Reply, len(cmds))
	for i, c := range cmds {
		if c != nil {
			replies[i].Err = err
		}
	}
	return replies
}
