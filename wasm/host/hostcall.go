package host

import (
	"context"
	"fmt"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/wasm/internal/abi"
	"github.com/tetratelabs/wazero/api"
)

// callState travels in the context of every call into an instance, to the
// host functions the call makes.
type callState struct {
	user   context.Context // the caller's context: ends a waiting acquire
	client *Client
	inst   *instance

	// For lock_acquire: what the host sees of the attempts, so that it
	// need not ask the module (lock_poll) after a success. token is the
	// token of the last SET the module sent; attempt is a time no later
	// than the module's start of that attempt (the end of the exec before
	// it, or the call's start); lastEnd is when the last exec ended.
	token            string
	attempt, lastEnd time.Time
}

type stateKey struct{}

func withState(ctx context.Context, st *callState) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

// hostExec is liblock.exec(req, req_len, resp, resp_cap) -> resp_len.
func hostExec(ctx context.Context, m api.Module, stack []uint64) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	reqPtr, reqLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	respPtr, respCap := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
	mem := m.Memory()
	raw, ok := mem.Read(reqPtr, reqLen)
	if st == nil || !ok {
		panic("liblock.exec: called outside a host call or out of range") // traps the call
	}
	in := st.inst
	req, err := abi.ParseRequest(raw)
	if err != nil {
		panic("liblock.exec: malformed request: " + err.Error())
	}
	if token, ok := setNXToken(req.Cmds); ok {
		st.token, st.attempt = token, st.lastEnd
	}
	replies := st.client.nodes.exec(time.Duration(req.TimeoutMS)*time.Millisecond, req.Cmds)
	st.lastEnd = time.Now()
	in.pending = abi.AppendReplies(in.pending[:0], req.Cmds, replies)
	if uint32(len(in.pending)) <= respCap {
		mem.Write(respPtr, in.pending)
	}
	stack[0] = api.EncodeU32(uint32(len(in.pending)))
}

// setNXToken returns the token of an acquire attempt's SET key token NX PX
// ttl (PROTOCOL.md §5), the same command on every node it is sent to.
func setNXToken(cmds []core.Command) (string, bool) {
	for _, c := range cmds {
		if c != nil {
			if len(c) == 6 && c[0] == "SET" && c[3] == "NX" && c[4] == "PX" {
				return c[2], true
			}
			return "", false
		}
	}
	return "", false
}

// hostExecTake is liblock.exec_take(buf, buf_len) -> copied.
func hostExecTake(ctx context.Context, m api.Module, stack []uint64) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	p, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if st == nil {
		panic("liblock.exec_take: called outside a host call")
	}
	b := st.inst.pending
	if uint32(len(b)) > n {
		b = b[:n]
	}
	m.Memory().Write(p, b)
	stack[0] = api.EncodeU32(uint32(len(b)))
}

// hostInterrupted is liblock.interrupted() -> 0 go on, 1 the caller's
// context ended, 2 the client is closing.
func hostInterrupted(ctx context.Context, _ api.Module, stack []uint64) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	var v uint32
	switch {
	case st == nil:
	case st.user != nil && st.user.Err() != nil:
		v = 1
	case st.client.isClosing():
		v = 2
	}
	stack[0] = api.EncodeU32(v)
}

// nodeSet is the host's Redis I/O: core's own go-redis transport, so the
// host keeps exactly the native timeouts, dialing and tuning.
type nodeSet struct {
	t core.Transport
}

func newNodeSet(urls []string, timeout time.Duration) (*nodeSet, error) {
	t, err := core.DialTransport(core.Config{Nodes: urls, NodeTimeout: timeout})
	if err != nil {
		return nil, err
	}
	return &nodeSet{t: t}, nil
}

// exec runs cmds[i] on node i, all at once, each within timeout.
func (ns *nodeSet) exec(timeout time.Duration, cmds []core.Command) []core.Reply {
	if n := len(ns.t.Nodes()); len(cmds) != n {
		replies := make([]core.Reply, len(cmds))
		for i := range replies {
			replies[i].Err = fmt.Errorf("liblock host: %d commands for %d nodes", len(cmds), n)
		}
		return replies
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return ns.t.Exec(ctx, cmds)
}

func (ns *nodeSet) close() {
	if ns != nil && ns.t != nil {
		_ = ns.t.Close()
	}
}
