package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/hostabi"
)

// root is the repository's root, from this package's directory.
const root = "../../../.."

// TestGeneratedUpToDate runs the generator in memory and fails when a
// committed file differs: run `go generate ./core/hostabi` after editing
// the spec (or the generator), and commit what it writes.
func TestGeneratedUpToDate(t *testing.T) {
	files, err := GenerateFrom(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range sortedKeys(files) {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s: %v (run go generate ./core/hostabi)", name, err)
			continue
		}
		if !bytes.Equal(got, files[name]) {
			t.Errorf("%s is stale: it differs from what %s generates (run go generate ./core/hostabi and commit it)", name, SpecPath)
		}
	}
}

func spec(t *testing.T) *Spec {
	b, err := os.ReadFile(filepath.Join(root, SpecPath))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSpec(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHeaderMatchesSpec: capi/liblock.h's status codes and ABI version
// stay hand-written (the C ABI v1 is a promise) and must say what the spec
// says.
func TestHeaderMatchesSpec(t *testing.T) {
	s := spec(t)
	h, err := os.ReadFile(filepath.Join(root, "capi/liblock.h"))
	if err != nil {
		t.Fatal(err)
	}
	defs := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#define\s+(LOCK_[A-Z_]+|LIBLOCK_ABI_VERSION)\s+(\d+)\b`).FindAllSubmatch(h, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		defs[string(m[1])] = n
	}
	for _, st := range s.Statuses {
		n, ok := defs[st.C]
		if !ok {
			t.Errorf("liblock.h does not define %s", st.C)
		} else if n != st.Status {
			t.Errorf("liblock.h: %s is %d, the spec says %d", st.C, n, st.Status)
		}
		delete(defs, st.C)
	}
	if v := defs["LIBLOCK_ABI_VERSION"]; v != s.ABIVersion {
		t.Errorf("liblock.h: LIBLOCK_ABI_VERSION is %d, the spec says %d", v, s.ABIVersion)
	}
	delete(defs, "LIBLOCK_ABI_VERSION")
	if v := defs["LOCK_ENGINE_PROTOCOL_VERSION"]; v != s.ProtocolVersion {
		t.Errorf("liblock.h: LOCK_ENGINE_PROTOCOL_VERSION is %d, the spec says %d", v, s.ProtocolVersion)
	}
	delete(defs, "LOCK_ENGINE_PROTOCOL_VERSION")
	if v := defs["LOCK_ENGINE_MIN_OUT"]; v != hostabi.MinOut {
		t.Errorf("liblock.h: LOCK_ENGINE_MIN_OUT is %d, hostabi.MinOut %d", v, hostabi.MinOut)
	}
	delete(defs, "LOCK_ENGINE_MIN_OUT")
	for name := range defs {
		t.Errorf("liblock.h defines %s, which the spec does not have", name)
	}
}

// TestEngineMatchesSpec: the engine's sentinel errors carry the spec's
// default messages.
func TestEngineMatchesSpec(t *testing.T) {
	s := spec(t)
	for status, err := range map[int]error{
		1: engine.ErrNotAcquired, 2: engine.ErrLost, 3: engine.ErrInvalidArgument,
		5: engine.ErrUnavailable, 6: engine.ErrCanceled,
	} {
		if got, want := err.Error(), s.Statuses[status].Message; got != want {
			t.Errorf("status %s: the engine's error says %q, the spec %q", s.Statuses[status].Name, got, want)
		}
	}
}
