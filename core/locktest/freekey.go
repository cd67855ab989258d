package locktest

import (
	"context"

	"github.com/liblock/liblock/core"
)

// FreeKeyTransport is a core.Transport that answers every command at once,
// as Redis does for a key nobody else holds: SET → OK, a script → 1. It is
// for the CPU benchmarks only (core's BenchmarkCoreCPU, wasm/host's
// BenchmarkModuleCPU), which measure the code without any I/O; behaviour
// tests run against real redis-servers.
type FreeKeyTransport struct {
	// Addrs are the node names Nodes returns; their number is the node count.
	Addrs []string
}

// Nodes returns Addrs.
func (t FreeKeyTransport) Nodes() []string { return t.Addrs }

// Close does nothing.
func (t FreeKeyTransport) Close() error { return nil }

// Exec answers each command as a free key's node would.
func (t FreeKeyTransport) Exec(_ context.Context, cmds []core.Command) []core.Reply {
	replies := make([]core.Reply, len(cmds))
	for i, c := range cmds {
		switch {
		case c == nil:
		case c[0] == "SET":
			replies[i].Str = "OK"
		default:
			replies[i].Int = 1
		}
	}
	return replies
}
