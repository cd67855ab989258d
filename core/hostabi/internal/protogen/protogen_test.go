package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/hostabi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's root, from this package's directory.
const root = "../../../.."

// TestGeneratedUpToDate runs the generator in memory and fails when a
// committed file differs: run `go generate ./core/hostabi` after editing
// the spec (or the generator), and commit what it writes.
func TestGeneratedUpToDate(t *testing.T) {
	files, err := GenerateFrom(root)
	require.NoError(t, err)
	for _, name := range sortedKeys(files) {
		got, err := os.ReadFile(filepath.Join(root, name))
		if !assert.NoError(t, err, "%s (run go generate ./core/hostabi)", name) {
			continue
		}
		// Not assert.Equal: a whole file; the message says how to fix it.
		assert.True(t, bytes.Equal(got, files[name]), "%s is stale: it differs from what %s generates (run go generate ./core/hostabi and commit it)", name, SpecPath)
	}
}

func spec(t *testing.T) *Spec {
	b, err := os.ReadFile(filepath.Join(root, SpecPath))
	require.NoError(t, err)
	s, err := ParseSpec(b)
	require.NoError(t, err)
	return s
}

// TestHeaderMatchesSpec: capi/liblock.h's status codes and ABI version
// stay hand-written (the C ABI v1 is a promise) and must say what the spec
// says; its report kinds and node outcomes what the engine says.
func TestHeaderMatchesSpec(t *testing.T) {
	s := spec(t)
	h, err := os.ReadFile(filepath.Join(root, "capi/liblock.h"))
	require.NoError(t, err)
	defs := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#define\s+(LOCK_[A-Z_]+|LIBLOCK_ABI_VERSION)\s+(\d+)\b`).FindAllSubmatch(h, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		defs[string(m[1])] = n
	}
	for _, st := range s.Statuses {
		n, ok := defs[st.C]
		if assert.True(t, ok, "liblock.h does not define %s", st.C) {
			assert.Equal(t, st.Status, n, "liblock.h: %s (expected: the spec's)", st.C)
		}
		delete(defs, st.C)
	}
	assert.Equal(t, s.ABIVersion, defs["LIBLOCK_ABI_VERSION"], "liblock.h: LIBLOCK_ABI_VERSION (expected: the spec's)")
	delete(defs, "LIBLOCK_ABI_VERSION")
	assert.Equal(t, s.ProtocolVersion, defs["LOCK_ENGINE_PROTOCOL_VERSION"], "liblock.h: LOCK_ENGINE_PROTOCOL_VERSION (expected: the spec's)")
	delete(defs, "LOCK_ENGINE_PROTOCOL_VERSION")
	assert.EqualValues(t, hostabi.MinOut, defs["LOCK_ENGINE_MIN_OUT"], "liblock.h: LOCK_ENGINE_MIN_OUT (expected: hostabi.MinOut)")
	delete(defs, "LOCK_ENGINE_MIN_OUT")
	// The report stream's kinds and node outcomes are the engine's.
	for name, want := range map[string]int{
		"LOCK_REPORT_ACQUIRE_START": int(engine.RepAcquireStart), "LOCK_REPORT_ACQUIRE_END": int(engine.RepAcquireEnd),
		"LOCK_REPORT_WAIT_START": int(engine.RepWaitStart), "LOCK_REPORT_WAIT_END": int(engine.RepWaitEnd),
		"LOCK_REPORT_HAND_OFF": int(engine.RepHandOff), "LOCK_REPORT_EXTEND_START": int(engine.RepExtendStart),
		"LOCK_REPORT_EXTEND_END": int(engine.RepExtendEnd), "LOCK_REPORT_RELEASE_START": int(engine.RepReleaseStart),
		"LOCK_REPORT_RELEASE_END": int(engine.RepReleaseEnd), "LOCK_REPORT_LOST": int(engine.RepLost),
		"LOCK_REPORT_HOLD": int(engine.RepHold), "LOCK_REPORT_NODE": int(engine.RepNode), "LOCK_REPORT_FENCE": int(engine.RepFence),
		"LOCK_NODE_OK": int(engine.NodeOK), "LOCK_NODE_TIMEOUT": int(engine.NodeTimeout),
		"LOCK_NODE_CONNECTION": int(engine.NodeConnection), "LOCK_NODE_ERROR_REPLY": int(engine.NodeReplyError),
	} {
		n, ok := defs[name]
		if assert.True(t, ok, "liblock.h does not define %s", name) {
			assert.Equal(t, want, n, "liblock.h: %s (expected: the engine's)", name)
		}
		delete(defs, name)
	}
	assert.Empty(t, defs, "liblock.h defines these, which the spec does not have")
}

// TestEngineMatchesSpec: the engine's sentinel errors carry the spec's
// default messages.
func TestEngineMatchesSpec(t *testing.T) {
	s := spec(t)
	for status, err := range map[int]error{
		1: engine.ErrNotAcquired, 2: engine.ErrLost, 3: engine.ErrInvalidArgument,
		5: engine.ErrUnavailable, 6: engine.ErrCanceled,
	} {
		assert.EqualError(t, err, s.Statuses[status].Message, "status %s: the engine's error (actual), the spec's message (expected)", s.Statuses[status].Name)
	}
}

// TestDefaultsChecked: a host's own default needs its why, and a word
// default one of its words; each binding's generated table carries its own
// value (the spec's unless it differs).
func TestDefaultsChecked(t *testing.T) {
	base := `{"limits": [{"name": "wait", "min": 0, "max": 10, "default": 5, "unit": "ms"}], "defaults": [%s]}`
	for _, tc := range []struct{ defaults, err string }{
		{`{"name": "wait", "limit": "wait", "hosts": {"go": {"value": 0}}}`, "without a why"},
		{`{"name": "wait", "limit": "nope"}`, "has no default"},
		{`{"name": "telemetry", "value": "maybe"}`, "not one of"},
		{`{"name": "telemetry", "value": "on", "hosts": {"rust": {"value": "off", "why": "w"}}}`, "unknown host"},
		{`{"name": "wait", "limit": "wait", "hosts": {"c": {"value": "soon", "why": "w"}}}`, "not a number"},
	} {
		_, err := ParseSpec([]byte(strings.Replace(base, "%s", tc.defaults, 1)))
		if assert.Error(t, err, tc.defaults) {
			assert.Contains(t, err.Error(), tc.err)
		}
	}
	s := spec(t)
	files, err := Generate(s)
	require.NoError(t, err)
	assert.Contains(t, string(files["core/defaults_gen.go"]), "defaultWait = 0 * time.Millisecond")
	assert.Contains(t, string(files["bindings/node/lib/protocol.gen.js"]), "const DEFAULTS = Object.freeze({ wait: 10000,")
	assert.Contains(t, string(files["bindings/python/liblock/_proto_gen.py"]), "\nDEFAULT_TELEMETRY = \"off\"\n")
	assert.NotContains(t, string(files["bindings/java/src/main/java/io/github/liblock/Spec.java"]), "DEFAULT_CAMPAIGN_TTL", "required in Java")
}
