package host_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/hostabi"
	"github.com/liblock/liblock/core/testkit/hostabitest"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/wasm/host"
)

// mod is the module built from this tree by TestMain (so the tests never
// run a stale build/liblock.wasm).
var mod *host.Module

// wasmPath is the module file TestMain built.
var wasmPath string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "liblock-wasm-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	wasmPath = filepath.Join(dir, "liblock.wasm")
	// The same build as the Makefile's, wasm-opt included.
	cmd := exec.Command("bash", filepath.Join("..", "scripts", "build.sh"), wasmPath)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build liblock.wasm:", err)
		return 1
	}
	mod, err = host.Load(wasmPath, host.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer mod.Close()
	return m.Run()
}

func newEngine(t testing.TB, cfg core.Config) *host.Engine {
	t.Helper()
	e, err := mod.NewEngine(cfg)
	require.NoError(t, err)
	t.Cleanup(e.Free)
	return e
}

// The module exports exactly PROTOCOL.md's functions and imports nothing
// but WASI.
func TestExportsAndImports(t *testing.T) {
	wasm, err := os.ReadFile(wasmPath)
	require.NoError(t, err)
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wasm)
	require.NoError(t, err)
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		assert.Equal(t, "wasi_snapshot_preview1", mod, "import %s.%s", mod, name)
	}
	var exports []string
	for name := range cm.ExportedFunctions() {
		if name != "_initialize" {
			exports = append(exports, name)
		}
	}
	assert.ElementsMatch(t, host.Exports, exports)
}

// TestEngineAgainstRedis drives the wasm engine, the test acting as its
// host over net.Conn, against real redis-servers.
func TestEngineAgainstRedis(t *testing.T) {
	cl := redistest.Start(t, 3)
	cfg := core.Config{Nodes: cl.URLs(), NodeTimeout: 200 * time.Millisecond, KeyPrefix: "wasm:"}
	a := hostabitest.New(t, newEngine(t, cfg))
	b := hostabitest.New(t, newEngine(t, cfg))

	d := a.Acquire(engine.AcquireRequest{Resource: "r", TTL: 10 * time.Second, AutoExtend: true})
	require.NoError(t, d.Err)
	info, ok := a.E.Lock(d.Lock)
	require.True(t, ok)
	assert.Equal(t, "wasm:r", info.Key)
	assert.True(t, info.AutoExtend)
	assert.Len(t, info.Token, 36)

	other := b.Acquire(engine.AcquireRequest{Resource: "r", TTL: time.Second})
	assert.ErrorIs(t, other.Err, engine.ErrNotAcquired)

	_, err := a.E.Acquire(engine.AcquireRequest{Resource: "r", TTL: 0})
	var ae *engine.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "ttl", ae.Arg)
	_, err = a.E.Release(999)
	assert.ErrorIs(t, err, engine.ErrUnknownLock)

	// b waits; a's release lets it in.
	op, err := b.E.Acquire(engine.AcquireRequest{Resource: "r", TTL: time.Second, Wait: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, a.Release(d.Lock).Err)
	d2 := b.Wait(op)
	require.NoError(t, d2.Err)

	b.Shutdown()
	a.Shutdown()
	noKeys := func() bool {
		for _, n := range cl.Nodes {
			if keys, err := n.Keys(); err != nil || len(keys) > 0 {
				return false
			}
		}
		return true
	}
	// CLOSED comes once every request was answered or timed out: a node
	// may still run a timed-out release; wait for it, with a deadline.
	assert.True(t, poll.Wait(5*time.Second, noKeys), "keys left on the nodes")
	// After CLOSED the instance is gone; requests fail as on a closed engine.
	_, err = a.E.Acquire(engine.AcquireRequest{Resource: "r", TTL: time.Second})
	assert.ErrorIs(t, err, engine.ErrClosed)
}

// An unreachable node set ends an acquire with ErrUnavailable and the
// per-node causes, rebuilt from the module's bytes.
func TestUnavailable(t *testing.T) {
	h := hostabitest.New(t, newEngine(t, core.Config{Nodes: []string{"redis://127.0.0.1:1", "redis://127.0.0.1:2"}, NodeTimeout: 100 * time.Millisecond}))
	d := h.Acquire(engine.AcquireRequest{Resource: "r", TTL: time.Second})
	var ue *engine.UnavailableError
	require.ErrorAs(t, d.Err, &ue)
	assert.Equal(t, "acquire", ue.Op)
	// With 2 nodes the first refusal makes a quorum impossible: decided at once.
	require.NotEmpty(t, ue.Nodes)
	assert.Contains(t, ue.Nodes[0].Err.Error(), "refused")
}

// TestTokensAreRandom: every instance seeds its randomness from the host
// (wazero's default would be a fixed seed, giving every instance the same
// tokens).
func TestTokensAreRandom(t *testing.T) {
	cl := redistest.Start(t, 1)
	seen := map[string]bool{}
	for i := range 3 {
		h := hostabitest.New(t, newEngine(t, core.Config{Nodes: cl.URLs()}))
		d := h.Acquire(engine.AcquireRequest{Resource: fmt.Sprint("r", i), TTL: time.Second})
		require.NoError(t, d.Err)
		info, ok := h.E.Lock(d.Lock)
		require.True(t, ok)
		assert.False(t, seen[info.Token], "token repeated across instances")
		seen[info.Token] = true
		h.Shutdown()
	}
}

// The raw exports reject bad input with the documented negative status.
func TestRawABI(t *testing.T) {
	ctx := context.Background()
	m, err := mod.Runtime().InstantiateModule(ctx, mod.Compiled(), wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
	require.NoError(t, err)
	defer m.Close(ctx)
	call := func(name string, args ...uint64) int64 {
		v, err := m.ExportedFunction(name).Call(ctx, args...)
		require.NoError(t, err, name)
		return int64(v[0])
	}
	in := uint64(uint32(call("lock_buffer", hostabi.MinOut)))
	out := uint64(uint32(call("lock_buffer", hostabi.MinOut)))
	require.NotZero(t, in)
	assert.Zero(t, call("lock_buffer", 0))
	assert.Zero(t, call("lock_buffer", api.EncodeI32(-1)))
	assert.EqualValues(t, 1, call("lock_abi_version"))
	assert.EqualValues(t, hostabi.ProtocolVersion, call("lock_engine_protocol_version"))

	write := func(p []byte) uint64 { require.True(t, m.Memory().Write(uint32(in), p)); return uint64(len(p)) }
	msg := func() string {
		n, _ := m.Memory().ReadUint32Le(uint32(out))
		b, _ := m.Memory().Read(uint32(out)+4, n)
		return string(b)
	}
	n := write([]byte(`{"nodes":["redis://127.0.0.1:1"],"bogus":1}`))
	assert.EqualValues(t, -hostabi.InvalidArgument, call("lock_engine_new", in, n, out, hostabi.MinOut))
	assert.Contains(t, msg(), "bogus")
	n = write([]byte(`{"nodes":["redis://127.0.0.1:1"]}`))
	h := call("lock_engine_new", in, n, out, hostabi.MinOut)
	require.Positive(t, h)

	acq := hostabi.AppendEvent(nil, hostabi.Event{Kind: hostabi.EvAcquire, Resource: "r", TTLms: 1000})
	n = write(acq)
	assert.EqualValues(t, -hostabi.InvalidHandle, call("lock_engine_step", 0, in, n, out, hostabi.MinOut))
	assert.EqualValues(t, -hostabi.InvalidHandle, call("lock_engine_step", uint64(h)+99, in, n, out, hostabi.MinOut))
	assert.EqualValues(t, -hostabi.InvalidArgument, call("lock_engine_step", uint64(h), in, n-1, out, hostabi.MinOut), "truncated")
	assert.EqualValues(t, -hostabi.InvalidArgument, call("lock_engine_step", uint64(h), in, n, out, 100), "tiny out_cap")
	assert.EqualValues(t, -hostabi.InvalidArgument, call("lock_engine_step", uint64(h), in, api.EncodeI32(-1), out, hostabi.MinOut))
	assert.Zero(t, call("lock_engine_step", uint64(h), in, 0, out, hostabi.MinOut), "a rejected event did something")
	got := call("lock_engine_step", uint64(h), in, n, out, hostabi.MinOut)
	require.Positive(t, got)
	b, _ := m.Memory().Read(uint32(out), uint32(got))
	acts, err := hostabi.Decode(nil, b)
	require.NoError(t, err)
	assert.Equal(t, hostabi.ActStarted, acts[0].Kind)
	assert.EqualValues(t, hostabi.OK, call("lock_engine_free", uint64(h)))
	assert.EqualValues(t, hostabi.InvalidHandle, call("lock_engine_free", uint64(h)))
	n = write([]byte(strings.Repeat(" ", 10)))
	assert.EqualValues(t, -hostabi.InvalidArgument, call("lock_engine_new", in, n, out, hostabi.MinOut))
	assert.True(t, strings.HasPrefix(msg(), "liblock: invalid argument: config"), msg())
}
