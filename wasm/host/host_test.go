package host_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/locktest"
	"github.com/liblock/liblock/core/redistest"
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
	os.Setenv("LIBLOCK_TEST_WASM", wasmPath) // for the package's internal tests
	mod, err = host.Load(wasmPath, host.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer mod.Close()
	return m.Run()
}

// factory is the locktest.Factory of the wasm backend.
func factory(tb testing.TB, cfg core.Config) (locktest.Client, error) {
	c, err := mod.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	return client{c}, nil
}

type client struct{ *host.Client }

func (c client) Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (locktest.Lock, error) {
	l, err := c.Client.Acquire(ctx, resource, ttl, opts...)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// TestBehaviour runs the shared behaviour suite through the wasm module.
func TestBehaviour(t *testing.T) {
	locktest.Run(t, factory)
}

// TestTokensAreRandom: every instance seeds its randomness from the host
// (wazero's default would be a fixed seed, giving every instance the same
// tokens).
func TestTokensAreRandom(t *testing.T) {
	c := redistest.Start(t, 1)
	ctx := context.Background()
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		cl, err := mod.NewClient(core.Config{Nodes: c.URLs()})
		if err != nil {
			t.Fatal(err)
		}
		l, err := cl.Acquire(ctx, fmt.Sprint("r", i), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if seen[l.Token()] {
			t.Fatalf("token %q repeated across instances", l.Token())
		}
		seen[l.Token()] = true
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
	}
	c.AssertNoKeys(t)
}
