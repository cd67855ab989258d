package host

import (
	"os"
	"testing"
)

// loadTestModule loads the module the package's TestMain built, for tests
// that drive instances directly; the module is closed when the test ends.
func loadTestModule(t testing.TB) *Module {
	t.Helper()
	path := os.Getenv("LIBLOCK_TEST_WASM")
	if path == "" {
		t.Fatal("LIBLOCK_TEST_WASM is not set: run the package's tests with go test (TestMain builds the module)")
	}
	m, err := Load(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// newTestInstance instantiates m; the instance is closed when the test ends.
func newTestInstance(t *testing.T, m *Module) *instance {
	t.Helper()
	in, err := m.newInstance()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.close)
	return in
}
