package host

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/liblock/liblock/core/hostabi"
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
	// this Module: instantiating is a burst of CPU (wazero copies the data
	// segments, then Go's runtime starts inside the module, where the Go
	// scheduler cannot preempt it), and several at once starved the other
	// goroutines of a 2-core machine.
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

// Exports are the module's functions, PROTOCOL.md's list.
var Exports = []string{"lock_engine_new", "lock_engine_step", "lock_engine_free", "lock_buffer", "lock_abi_version", "lock_engine_protocol_version"}

// bufSize is the size of an instance's input and output buffers: twice
// the smallest output buffer, so that a step that leaves at least MinOut
// of it unwritten has written every pending action (see stepper.drained).
const bufSize = 2 * hostabi.MinOut

// instance is one instantiation of the module.
type instance struct {
	mod              api.Module
	mem              api.Memory
	newFn, step, fre api.Function
	in, out          uint32 // lock_buffer pointers, bufSize each
	inCap            uint32
	stack            [5]uint64
}

func (m *Module) newInstance() (*instance, error) {
	ctx := context.Background()
	m.instantiating.Lock()
	defer m.instantiating.Unlock()
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
	fail := func(err error) (*instance, error) {
		mod.Close(ctx)
		return nil, err
	}
	for _, name := range Exports {
		if mod.ExportedFunction(name) == nil {
			return fail(fmt.Errorf("liblock: wasm module lacks export %s", name))
		}
	}
	in.newFn, in.step, in.fre = mod.ExportedFunction("lock_engine_new"), mod.ExportedFunction("lock_engine_step"), mod.ExportedFunction("lock_engine_free")
	if v, err := mod.ExportedFunction("lock_abi_version").Call(ctx); err != nil || api.DecodeI32(v[0]) != hostabi.ABIVersion {
		return fail(fmt.Errorf("liblock: wasm module has an unsupported ABI version"))
	}
	if v, err := mod.ExportedFunction("lock_engine_protocol_version").Call(ctx); err != nil || api.DecodeI32(v[0]) != hostabi.ProtocolVersion {
		return fail(fmt.Errorf("liblock: wasm module speaks another engine protocol than this host's %d", hostabi.ProtocolVersion))
	}
	buf := mod.ExportedFunction("lock_buffer")
	for _, p := range []*uint32{&in.in, &in.out} {
		v, err := buf.Call(ctx, api.EncodeI32(bufSize))
		if err != nil || v[0] == 0 {
			return fail(fmt.Errorf("liblock: lock_buffer: %v", err))
		}
		*p = uint32(v[0])
	}
	in.inCap = bufSize
	return in, nil
}

// newEngine calls lock_engine_new.
func (in *instance) newEngine(configJSON []byte) (uint64, error) {
	ctx := context.Background()
	if err := in.ensureIn(len(configJSON)); err != nil {
		return 0, err
	}
	in.mem.Write(in.in, configJSON)
	v, err := in.newFn.Call(ctx, uint64(in.in), uint64(len(configJSON)), uint64(in.out), bufSize)
	if err != nil {
		return 0, fmt.Errorf("liblock: lock_engine_new: %w", err)
	}
	if h := int64(v[0]); h > 0 {
		return uint64(h), nil
	}
	n, _ := in.mem.ReadUint32Le(in.out)
	msg, _ := in.mem.Read(in.out+4, min(n, bufSize-4))
	return 0, fmt.Errorf("%s", msg)
}

// ensureIn makes the input buffer at least n bytes.
func (in *instance) ensureIn(n int) error {
	if n <= int(in.inCap) {
		return nil
	}
	if n > hostabi.MaxEvent+hostabi.MaxJSONLength {
		return fmt.Errorf("liblock: input of %d bytes is too large", n)
	}
	v, err := in.mod.ExportedFunction("lock_buffer").Call(context.Background(), uint64(n))
	if err != nil || v[0] == 0 {
		return fmt.Errorf("liblock: lock_buffer(%d): %v", n, err)
	}
	in.in, in.inCap = uint32(v[0]), uint32(n)
	return nil
}

// stepper is lock_engine_step of engine h.
type stepper struct {
	in *instance
	h  uint64
	// drained: the last step left at least MinOut of its output buffer
	// unwritten, so nothing was left pending. A step writes the pending
	// actions in order until one does not fit whole, and every action fits
	// in MinOut but a WRITE, which is split to fill what is left
	// (PROTOCOL.md); and only an event makes new ones. The step without an
	// event that a host makes to collect the rest (hostabi.Adapter after
	// every step that wrote something) would return 0: it is answered here,
	// without a call into the module (≈ 0.3 µs each in wazero, half the
	// steps of an acquire or release).
	drained bool
}

func (s *stepper) Step(p, out []byte) (int, error) {
	in := s.in
	if len(p) == 0 && s.drained {
		return 0, nil
	}
	s.drained = false
	if err := in.ensureIn(len(p)); err != nil {
		return 0, err
	}
	if len(p) > 0 && !in.mem.Write(in.in, p) {
		return 0, fmt.Errorf("liblock: write to module memory failed")
	}
	outCap := min(len(out), bufSize)
	in.stack = [5]uint64{s.h, uint64(in.in), uint64(len(p)), uint64(in.out), uint64(outCap)}
	if err := in.step.CallWithStack(context.Background(), in.stack[:]); err != nil {
		return 0, fmt.Errorf("liblock: lock_engine_step: %w", err)
	}
	n := int64(in.stack[0])
	if n < 0 {
		return 0, fmt.Errorf("liblock: lock_engine_step: status %d", -n)
	}
	b, ok := in.mem.Read(in.out, uint32(n))
	if !ok {
		return 0, fmt.Errorf("liblock: lock_engine_step: %d bytes out of range", n)
	}
	s.drained = int64(outCap)-n >= hostabi.MinOut
	return copy(out, b), nil
}

func (in *instance) close() { in.mod.Close(context.Background()) }

// Runtime and Compiled expose the wazero runtime and compiled module (for
// tests of the raw exports).
func (m *Module) Runtime() wazero.Runtime         { return m.rt }
func (m *Module) Compiled() wazero.CompiledModule { return m.compiled }
