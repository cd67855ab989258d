package nodeurl

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allowedImports are the only packages the package's non-test code may
// import: it is linked into liblock.wasm, which must stay ≤ 3 MiB
// (wasm/README.md "What keeps the module small"; wasm/module/deps_test.go).
// The module links all of them already.
var allowedImports = map[string]bool{
	"errors": true, "strconv": true, "strings": true, "unicode/utf8": true,
	"github.com/liblock/liblock/core/internal/xtime": true, // package time, or its part the module links
}

// forbiddenDeps must not be linked even indirectly, and why.
var forbiddenDeps = map[string]string{
	"fmt":                        "fmt with reflect and os costs ≈ 430 KB of the module",
	"reflect":                    "reflect keeps type and method tables alive",
	"os":                         "os brings internal/poll and io/fs",
	"net":                        "the engine does no I/O",
	"net/url":                    "net/url with net/netip adds ≈ 200 KB to the module; url.go is its port",
	"net/netip":                  "with unique, it adds to the module; parseAddr is its port",
	"encoding/":                  "encoding/binary imports reflect; encoding/json, hex, ... are not needed",
	"github.com/redis/go-redis/": "go-redis is the reference of the tests, not a dependency of the engine",
}

func goList(t *testing.T, env []string, args ...string) []string {
	t.Helper()
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoErrorf(t, err, "go list %s:\n%s", strings.Join(args, " "), out)
	fields := strings.Fields(string(out))
	require.NotEmpty(t, fields, "go list printed nothing")
	return fields
}

// TestImportsAreAllowed fails when the package imports anything but
// allowedImports, or links a forbidden package, natively or for wasip1.
func TestImportsAreAllowed(t *testing.T) {
	for _, env := range [][]string{nil, {"GOOS=wasip1", "GOARCH=wasm"}} {
		for _, imp := range goList(t, env, "-f", `{{join .Imports " "}}`, ".") {
			assert.Truef(t, allowedImports[imp], "%v: nodeurl imports %s; allowed: errors, strconv, strings, unicode/utf8, internal/xtime", env, imp)
		}
		deps := goList(t, env, "-deps", ".")
		for _, dep := range deps {
			for bad, why := range forbiddenDeps {
				if dep == strings.TrimSuffix(bad, "/") || strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad) {
					assert.Failf(t, "forbidden dependency", "%v: nodeurl links %s: %s", env, dep, why)
				}
			}
		}
		assert.Contains(t, deps, "time", "go list -deps lists the dependencies")
	}
}
