package host_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// moduleForbidden are packages liblock.wasm must not link, and why. The
// module must stay ≤ 3 MiB (issue #6; wasm/README.md "What keeps the module
// small"): fmt, with reflect, internal/fmtsort and os, took ≈ 430 KB of the
// optimized module while it was only used to format error messages.
var moduleForbidden = map[string]string{
	"fmt":           "build messages with strconv (core/engine/errors.go: invalidArg, wrap); fmt with reflect and os costs ≈ 430 KB",
	"reflect":       "reflect keeps type and method tables alive; encoding/binary imports it, so write byte order by hand (core/engine/hostabi/codec.go)",
	"os":            "os brings internal/poll and io/fs; the module reaches the host through its exports, not files",
	"encoding/json": "encoding/json costs ≈ 0.7 MB; core/engine/hostabi/json.go is the strict parser",
}

// TestModuleLinksNoFmt fails when a package the module must not link
// (fmt, reflect, os) is among its dependencies, naming who imports it.
func TestModuleLinksNoFmt(t *testing.T) {
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "./wasm")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	importers := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		for _, imp := range strings.Fields(imports) {
			importers[imp] = append(importers[imp], pkg)
		}
	}
	if len(importers) == 0 {
		t.Fatalf("go list printed no imports:\n%s", out)
	}
	for pkg, why := range moduleForbidden {
		if by, linked := importers[pkg]; linked {
			t.Errorf("liblock.wasm links %s (imported by %s); the module must stay small: %s", pkg, strings.Join(by, ", "), why)
		}
	}
}
