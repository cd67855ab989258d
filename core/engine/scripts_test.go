package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScriptSources: scripts_lua.go (go generate ./core/engine) holds the
// .lua files exactly, each in its script, and no .lua file is left out.
// TestScriptHashes checks the SHA-1 constants against the same sources.
// primitiveScripts: the scripts of the primitives beyond the mutex, by
// file, each registered from the primitive's own test file.
var primitiveScripts = map[string]*script{}

func TestScriptSources(t *testing.T) {
	want := map[string]*script{
		"release.lua": releaseScript, "extend.lua": extendScript, "acquire_token.lua": acquireTokenScript,
		"acquire_fence.lua": acquireFenceScript, "fence.lua": fenceScript, "inspect.lua": inspectScript,
		"sem_acquire.lua": semAcquireScript, "sem_release.lua": semReleaseScript, "sem_inspect.lua": semInspectScript,
	}
	for f, sc := range primitiveScripts {
		want[f] = sc
	}
	files, err := filepath.Glob("*.lua")
	require.NoError(t, err)
	assert.Len(t, files, len(want), "the .lua files: %v", files)
	for _, f := range files {
		sc, ok := want[f]
		if !assert.Truef(t, ok, "%s is no script of the engine", f) {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Equalf(t, string(src), sc.src, "%s differs from its constant: run go generate ./core/engine", f)
	}
}
