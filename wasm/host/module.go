// Package host runs liblock.wasm (the liblock core built for wasip1) on
// wazero and offers the same API as package core: a Client with Acquire and
// Close, and a Lock with Extend, Release, Key, Token, Validity and Lost. The
// module computes everything (quorum, validity, retries, cleanup,
// auto-extension); the host only does the Redis I/O it asks for, with
// go-redis, every node in parallel, each bounded by the node timeout.
//
// A wasm instance runs one call at a time, and a waiting Acquire sleeps
// inside its call. So a Client keeps a small pool of instances: an Acquire
// takes an idle one (or instantiates one), and a held lock keeps its
// instance until it is released, so that a lock's Extend, Release and
// auto-extension never wait behind another lock's Acquire. See
// wasm/README.md and wasm/PROTOCOL.md.
package host

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Module is a compiled liblock.wasm. Make one per process and share it;
// every Client instantiates it.
type Module struct {
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	// instantiating lets one instantiation run at a time, process-wide for
	// this Module. Instantiating is a burst of CPU (wazero copies the data
	// segments and allocates the memory, then Go's runtime starts inside
	// the module, where the Go scheduler cannot preempt it). Several at
	// once (a burst of concurrent first acquires) filled the run queue of
	// a 2-core machine for 100-200 ms: go-redis goroutines of other calls
	// waited that long to run, their node timeouts fired on loopback, and
	// a release that lost a node that way still succeeded on the quorum but
	// left its key on that node until the ttl ran out.
	instantiating sync.Mutex
	// CompileTime is how long compiling the module took (short when the
	// compilation cache had it).
	CompileTime time.Duration
}

// Options tune Compile.
type Options struct {
	// CacheDir holds wazero's compilation cache across processes; empty
	// means a directory under os.UserCacheDir, "-" means no disk cache.
	CacheDir string
}

// Load reads and compiles a module file, e.g. build/liblock.wasm.
func Load(path string, opts Options) (*Module, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Compile(wasm, opts)
}

// Compile compiles the module's bytes.
func Compile(wasm []byte, opts Options) (*Module, error) {
	ctx := context.Background()
	rc := wazero.NewRuntimeConfig()
	if dir := cacheDir(opts.CacheDir); dir != "" {
		if cache, err := wazero.NewCompilationCacheWithDir(dir); err == nil {
			rc = rc.WithCompilationCache(cache)
		}
	}
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	i32 := api.ValueTypeI32
	_, err := rt.NewHostModuleBuilder("liblock").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostExec), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req", "req_len", "resp", "resp_cap").Export("exec").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostExecTake), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("buf", "buf_len").Export("exec_take").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostInterrupted), nil, []api.ValueType{i32}).
		Export("interrupted").
		Instantiate(ctx)
	if err != nil {
		rt.Close(ctx)
		return nil, err
	}
	start := time.Now()
	compiled, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		rt.Close(ctx)
		return nil, fmt.Errorf("liblock: compile wasm module: %w", err)
	}
	return &Module{rt: rt, compiled: compiled, CompileTime: time.Since(start)}, nil
}

func cacheDir(dir string) string {
	switch dir {
	case "-":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "liblock", "wazero")
	}
	return dir
}

// Close frees the compiled module and the runtime. Close every Client first.
func (m *Module) Close() error { return m.rt.Close(context.Background()) }

// instance is one instantiation of the module, with one guest client in it.
// Its mutex serializes every call into it.
type instance struct {
	mu     sync.Mutex
	mod    api.Module
	mem    api.Memory
	client uint64 // the guest's client handle
	closed bool

	acquire, extend, release, free, info, poll, bufAlloc, bufFree api.Function

	scratch uint32 // 64 bytes: see the offsets below
	in      uint32 // input buffer for strings
	inCap   uint32
	stack   [8]uint64

	pending []byte // the last exec response, for exec_take (reused)
	// lockCtx carries the callState of the calls for held locks (extend,
	// release, poll, free): made once, as those calls need nothing else.
	lockCtx context.Context
}

// Offsets in an instance's scratch buffer.
const (
	offHandle    = 0  // uint64 out handle
	offErr       = 8  // (ptr, len) of an error record
	offInfo      = 16 // (ptr, len) of an info JSON
	offState     = 24 // abi.State, 64 bytes
	scratchSize  = 88
	initialInCap = 4096
)

// InstantiateTime is measured by newInstance, for the benchmark.
var lastInstantiate struct {
	sync.Mutex
	d time.Duration
}

// LastInstantiateTime is how long the most recent instantiation took
// (module instantiation plus _initialize).
func LastInstantiateTime() time.Duration {
	lastInstantiate.Lock()
	defer lastInstantiate.Unlock()
	return lastInstantiate.d
}

// beforeInstantiate, when set (by tests), runs inside the instantiation's
// critical section.
var beforeInstantiate func()

func (m *Module) newInstance() (*instance, error) {
	ctx := context.Background()
	m.instantiating.Lock()
	defer m.instantiating.Unlock()
	if beforeInstantiate != nil {
		beforeInstantiate()
	}
	start := time.Now()
	mod, err := m.rt.InstantiateModule(ctx, m.compiled, wazero.NewModuleConfig().
		WithName(""). // anonymous: any number of instances
		WithStartFunctions("_initialize").
		WithSysWalltime().WithSysNanotime().WithSysNanosleep().
		WithRandSource(crand.Reader). // wazero's default is a fixed seed
		WithStderr(os.Stderr))
	if err != nil {
		return nil, fmt.Errorf("liblock: instantiate wasm module: %w", err)
	}
	lastInstantiate.Lock()
	lastInstantiate.d = time.Since(start)
	lastInstantiate.Unlock()
	in := &instance{mod: mod, mem: mod.Memory()}
	fns := []struct {
		f    *api.Function
		name string
	}{
		{&in.acquire, "lock_acquire"}, {&in.extend, "lock_extend"}, {&in.release, "lock_release"},
		{&in.free, "lock_free"}, {&in.info, "lock_info"}, {&in.poll, "lock_poll"},
		{&in.bufAlloc, "lock_buf_alloc"}, {&in.bufFree, "lock_buf_free"},
	}
	for _, f := range fns {
		if *f.f = mod.ExportedFunction(f.name); *f.f == nil {
			mod.Close(ctx)
			return nil, fmt.Errorf("liblock: wasm module lacks export %s", f.name)
		}
	}
	if v, err := mod.ExportedFunction("lock_abi_version").Call(ctx); err != nil || api.DecodeI32(v[0]) != 1 {
		mod.Close(ctx)
		return nil, fmt.Errorf("liblock: wasm module has an unsupported ABI version")
	}
	if in.scratch, err = in.alloc(scratchSize); err == nil {
		in.in, err = in.alloc(initialInCap)
		in.inCap = initialInCap
	}
	if err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return in, nil
}

func (in *instance) alloc(n uint32) (uint32, error) {
	in.stack[0] = uint64(n)
	if err := in.bufAlloc.CallWithStack(context.Background(), in.stack[:]); err != nil {
		return 0, err
	}
	p := api.DecodeU32(in.stack[0])
	if p == 0 {
		return 0, fmt.Errorf("liblock: wasm module could not allocate %d bytes", n)
	}
	return p, nil
}

func (in *instance) freeBuf(p uint32) {
	in.stack[0] = uint64(p)
	_ = in.bufFree.CallWithStack(context.Background(), in.stack[:])
}

// input writes up to two strings one after another into the input buffer
// and returns each one's (ptr, len).
func (in *instance) input(strs ...string) (out [2][2]uint32, err error) {
	if len(strs) > len(out) {
		return out, fmt.Errorf("liblock: %d input strings, at most %d", len(strs), len(out))
	}
	total := 0
	for _, s := range strs {
		total += len(s)
	}
	if uint32(total) > in.inCap {
		p, err := in.alloc(uint32(total))
		if err != nil {
			return out, err
		}
		in.freeBuf(in.in)
		in.in, in.inCap = p, uint32(total)
	}
	off := in.in
	for i, s := range strs {
		if !in.mem.WriteString(off, s) {
			return out, fmt.Errorf("liblock: wasm memory write out of range")
		}
		out[i] = [2]uint32{off, uint32(len(s))}
		off += uint32(len(s))
	}
	return out, nil
}

func (in *instance) u32(off uint32) uint32 {
	v, _ := in.mem.ReadUint32Le(in.scratch + off)
	return v
}

func (in *instance) u64(off uint32) uint64 {
	v, _ := in.mem.ReadUint64Le(in.scratch + off)
	return v
}

// takeBuf copies out and frees the buffer whose (ptr, len) is at off.
func (in *instance) takeBuf(off uint32) []byte {
	p, n := in.u32(off), in.u32(off+4)
	if p == 0 {
		return nil
	}
	b, _ := in.mem.Read(p, n)
	b = append([]byte(nil), b...)
	in.freeBuf(p)
	return b
}

func (in *instance) close() {
	in.closed = true
	_ = in.mod.Close(context.Background())
}
