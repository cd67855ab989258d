package engine

import (
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The read-write lock's scripts, by file (TestScriptSources,
// TestScriptHashes).
func init() {
	primitiveScripts["rw_acquire.lua"] = rwAcquireScript
	primitiveScripts["rw_extend.lua"] = rwExtendScript
	primitiveScripts["rw_release.lua"] = rwReleaseScript
	primitiveScripts["rw_fence.lua"] = rwFenceScript
	primitiveScripts["rw_inspect.lua"] = rwInspectScript
}

// TestRWBadMode: an unknown mode, and a mode with a caller's token, are
// refused naming mode, each with its own reason, with nothing sent.
func TestRWBadMode(t *testing.T) {
	e, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "a:1"}}}, &manualEnv{r: mrand.New(mrand.NewPCG(1, 2))})
	require.NoError(t, err)
	reasons := map[string]bool{}
	for _, r := range []AcquireRequest{
		{Resource: "r", TTL: time.Second, Mode: 9},
		{Resource: "r", TTL: time.Second, Mode: ModeRead, Token: "0123456789abcdef"},
		{Resource: "r", TTL: time.Second, Mode: ModeWrite, Token: "0123456789abcdef"},
	} {
		_, err := e.Acquire(r)
		var ae *ArgumentError
		require.ErrorAs(t, err, &ae, "%+v", r)
		assert.Equal(t, "mode", ae.Arg)
		reasons[ae.Reason] = true
	}
	assert.Len(t, reasons, 2, "an unknown mode and a mode with a token say different things: %v", reasons)
	_, err = e.InspectWith(InspectRequest{Resource: "r", Mode: 9})
	var ae *ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "mode", ae.Arg)
	assert.Empty(t, drainActions(e), "nothing sent")
}
