package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moduleForbidden are packages liblock.wasm, as wasm/scripts/build.sh builds
// it (GOOS=wasip1, -tags liblockwasm), must not link, and why: each was
// measured in the module (wasm/README.md "What keeps the module small").
var moduleForbidden = map[string]string{
	"fmt":              "build messages with strconv (core/engine/errors.go: invalidArg, wrap); fmt with reflect and os costs ≈ 430 KB",
	"reflect":          "reflect keeps type and method tables alive; encoding/binary imports it, so write byte order by hand (core/hostabi/codec_gen.go)",
	"os":               "os brings internal/poll and io/fs; the module reaches the host through its exports, not files",
	"encoding/json":    "encoding/json costs ≈ 0.7 MB; core/hostabi/json.go is the strict parser",
	"time":             "≈ 240 KB with internal/godebug, internal/bisect and the runtime's metrics: core/internal/xtime",
	"internal/godebug": "comes with time",
	"context":          "imports time: hostabi/status_context.go is native only",
	"embed":            "imports io/fs and time: the Lua scripts are constants (core/engine/scripts_lua.go)",
	"io/fs":            "comes with embed",
	"sort":             "sort.Slice brings reflectlite's Swapper: core/internal/xsort",
	"slices":           "comes with sort",
	"syscall":          "its init and tables cost ≈ 39 KB: random_wasip1.go imports random_get itself",
	"crypto/rand":      "its FIPS DRBG costs ≈ 200 KB: random_wasip1.go reads random_get",
}

// TestModuleDeps fails when the module links a package of moduleForbidden,
// naming who imports it.
func TestModuleDeps(t *testing.T) {
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.Command(goTool, "list", "-deps", "-tags", "liblockwasm", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go list:\n%s", out)
	importers := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		for _, imp := range strings.Fields(imports) {
			importers[imp] = append(importers[imp], pkg)
		}
	}
	require.NotEmpty(t, importers["github.com/liblock/liblock/core/hostabi"], "go list did not list the module's imports:\n%s", out)
	for pkg, why := range moduleForbidden {
		by, linked := importers[pkg]
		assert.False(t, linked, "liblock.wasm links %s (imported by %s): %s", pkg, strings.Join(by, ", "), why)
	}
}
