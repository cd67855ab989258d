package interop

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/locktest/remote"
)

// root is the repository's root.
func root(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// remoteSkips: what every host in another runtime skips, and why.
var remoteSkips = locktest.Skip{
	"OneNodeIdleHoldsNoGoroutine": "about the Go driver's goroutines; a child runs none (the leak check after every scenario measures this proxy's)",
	"BadInput/nil ctx":            "a nil context.Context is Go's; the line protocol has no such value",
	"BadInput/nil option":         "a nil core.AcquireOption is Go's; the line protocol has no such value",
	"BadInput/invalid utf-8":      "JSON lines carry only valid UTF-8 (Go's encoder would send U+FFFD, a valid resource)",
	"BadInput/NaN drift":          "JSON has no NaN",
	"Semaphore/Lock.Slot":         "the Node and Python bindings' locks do not expose a permit's slot (Inspect's holders do; checked there)",
}

func need(t *testing.T, files ...string) {
	if os.Getenv("LIBLOCK_INTEROP_REQUIRED") == "" {
		t.Skip("the shared suite over the Node and Python bindings runs in make test-interop (bindings/interop/run.sh)")
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%s is missing: run make test-interop", f)
		}
	}
}

func runNode(t *testing.T, backend string) {
	r := root(t)
	child := filepath.Join(r, "bindings", "interop", "children", "suite.js")
	need(t, child, filepath.Join(r, "bindings", "node", "node_modules"))
	c := remote.Start(t, "node-"+backend, nil, "node", child, backend)
	locktest.Run(t, c.Factory, remoteSkips)
}

func TestNodeNative(t *testing.T) { runNode(t, "native") }
func TestNodeWasm(t *testing.T)   { runNode(t, "wasm") }

// syncSkips: what the blocking Python API cannot do from the child's
// request threads.
var syncSkips = locktest.Skip{
	"CancelMidWait": "a blocking acquire is canceled only by Ctrl-C (KeyboardInterrupt) in the main thread, and the child runs each request in a thread (bindings/python/tests cover the interrupt)",
}

func runPython(t *testing.T, mode, backend string, skips ...locktest.Skip) {
	r := root(t)
	child := filepath.Join(r, "bindings", "interop", "children", "suite.py")
	py := filepath.Join(r, "build", "venv-python", "bin", "python")
	need(t, child, py)
	c := remote.Start(t, "python-"+mode+"-"+backend, []string{"PYTHONPATH=" + filepath.Join(r, "bindings", "python")}, py, child, mode, backend)
	locktest.Run(t, c.Factory, append([]locktest.Skip{remoteSkips}, skips...)...)
}

func TestPythonAsyncNative(t *testing.T) { runPython(t, "async", "native") }
func TestPythonAsyncWasm(t *testing.T)   { runPython(t, "async", "wasm") }
func TestPythonSyncNative(t *testing.T)  { runPython(t, "sync", "native", syncSkips) }
func TestPythonSyncWasm(t *testing.T)    { runPython(t, "sync", "wasm", syncSkips) }

// TestJava runs the suite through children/Suite.java (the Java binding, bindings/java, by its
// jar and JNA's, whose classpath run.sh writes to build/java-classpath.txt).
func TestJava(t *testing.T) {
	r := root(t)
	child := filepath.Join(r, "bindings", "interop", "children", "Suite.java")
	cpFile := filepath.Join(r, "build", "java-classpath.txt")
	need(t, child, cpFile)
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		t.Fatal(err)
	}
	// C1 only and the serial collector: the child's own CPU (C2 compiler and parallel GC threads)
	// would compete with the redis-servers under test on a small machine; behaviour is the same.
	c := remote.Start(t, "java", []string{"LIBLOCK_PATH=" + filepath.Join(r, "build", "liblock.so")},
		"java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", strings.TrimSpace(string(cp)), child)
	locktest.Run(t, c.Factory, remoteSkips, locktest.Skip{
		"MultiBadInput/empty":       "Java's API names a set as a first resource and AcquireOptions.resources(more): an empty set cannot be said",
		"MultiBadInput/long member": "Java's API names a set as a first resource and AcquireOptions.resources(more): the first member's error names resource",
	})
}
