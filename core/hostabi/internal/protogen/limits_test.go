package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The hand-written sources of the bindings and the C ABI, where an argument
// limit must come from the generated tables (LIMITS, P.LIMIT_*, the
// engine's constants), never be copied.
var limitSources = []string{
	"bindings/node/index.js", "bindings/node/lib/*.js",
	"bindings/python/liblock/*.py",
	"capi/*.go",
}

var (
	// A number compared with something: `w > 100`, `100 >= n`.
	comparedNumber = regexp.MustCompile(`(?:[<>]=?\s*(\d+(?:\.\d+)?)\b)|(?:\b(\d+(?:\.\d+)?)\s*[<>]=?)`)
	// A constant named like a limit given a number: `const MAX_VALUE_BYTES = 4096`,
	// `_MAX_WAIT_REPLICAS = 100`.
	limitConstant = regexp.MustCompile(`(?m)^\s*(?:const\s+)?_?(?:[A-Z][A-Z_]*)?(?:MAX|MIN|DEFAULT)[A-Z_]*\s*=\s*(\d+(?:\.\d+)?)\s*;?\s*$`)
)

// copiedLimits returns the lines of src (a file's text) that compare with,
// or name as a constant, one of the spec's limit values: each is a copy of a
// limit that the generated table should give. 1000 (the unit conversion
// between ms and s) and the numbers below 10 are not told from limits.
func copiedLimits(s *Spec, src string) []string {
	values := map[string]bool{}
	for _, l := range s.Limits {
		for _, v := range []float64{l.Min, l.Max} {
			values[num(v)] = true
		}
		if l.Default != nil {
			values[num(*l.Default)] = true
		}
	}
	var out []string
	for i, line := range strings.Split(src, "\n") {
		code := line
		for _, c := range []string{"//", "#"} { // not comments (nor a Python string with #: rare enough)
			if j := strings.Index(code, c); j >= 0 {
				code = code[:j]
			}
		}
		var nums []string
		for _, m := range comparedNumber.FindAllStringSubmatch(code, -1) {
			nums = append(nums, m[1]+m[2])
		}
		for _, m := range limitConstant.FindAllStringSubmatch(code, -1) {
			nums = append(nums, m[1])
		}
		for _, n := range nums {
			if f, err := strconv.ParseFloat(n, 64); err == nil && f >= 10 && f != 1000 && values[n] {
				out = append(out, strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
				break
			}
		}
	}
	return out
}

// TestNoCopiedLimits: no binding (nor capi) keeps a limit of its own: each
// comes from the spec through the generated tables, so that changing the
// spec changes every host.
func TestNoCopiedLimits(t *testing.T) {
	s := spec(t)
	n := 0
	for _, pat := range limitSources {
		files, err := filepath.Glob(filepath.Join(root, pat))
		require.NoError(t, err)
		for _, f := range files {
			if strings.Contains(f, "_gen") || strings.Contains(f, ".gen.") || strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			n++
			rel, _ := filepath.Rel(root, f)
			assert.Empty(t, copiedLimits(s, string(b)), "%s copies a limit of the spec (%s): use the generated table", rel, SpecPath)
		}
	}
	assert.Greater(t, n, 20, "the sources were found")
}

// TestNoCopiedLimitsCatches is TestNoCopiedLimits's negative control: the
// copies this change removed are caught.
func TestNoCopiedLimitsCatches(t *testing.T) {
	s := spec(t)
	for _, src := range []string{
		"const MAX_VALUE_BYTES = 4096; // engine.MaxElectionValue",
		"_MAX_WAIT_REPLICAS = 100  # engine.MaxWaitReplicas",
		"if (w < 0 || w > 100) throw badArg('waitReplicas', 'too many');",
		"    if Buffer.byteLength(resource) > 1024) {",
		"\tif o.PollMS < 0 || o.PollMS > 86400000 {",
	} {
		assert.NotEmpty(t, copiedLimits(s, src), "not caught: %s", src)
	}
	for _, src := range []string{
		"const IN_CAP = 64 * 1024;", "const MIN_OUT = 64 * 1024;", "if (ms >= 1000 && ms % 1000 === 0)",
		"w > LIMITS.wait_replicas.max", "// at most 4096 bytes: w > 4096",
	} {
		assert.Empty(t, copiedLimits(s, src), "a false alarm: %s", src)
	}
}

// TestHeaderLimitsMatchSpec: the LIMITS list of capi/liblock.h (prose for
// C users, hand-written as the C ABI is) says what the spec says, for
// every limit it names by its C name.
func TestHeaderLimitsMatchSpec(t *testing.T) {
	s := spec(t)
	h, err := os.ReadFile(filepath.Join(root, "capi/liblock.h"))
	require.NoError(t, err)
	byC := map[string]Limit{}
	for _, l := range s.Limits {
		if _, dup := byC[l.C]; !dup { // ttl_ms: the lock's, not a campaign's
			byC[l.C] = l
		}
	}
	line := regexp.MustCompile(`(?m)^ \*   ([a-z_]+):\s+(\d+(?:\.\d+)?) \.\. (\d+(?:\.\d+)?)(?:[^\n]*?default (\d+(?:\.\d+)?))?`)
	seen := 0
	for _, m := range line.FindAllStringSubmatch(string(h), -1) {
		l, ok := byC[m[1]]
		if !ok {
			continue
		}
		seen++
		assert.Equal(t, num(l.Min), m[2], "liblock.h: %s's least value", m[1])
		assert.Equal(t, num(l.Max), m[3], "liblock.h: %s's greatest value", m[1])
		if m[4] != "" && assert.NotNil(t, l.Default, "liblock.h: %s has a default the spec lacks", m[1]) {
			assert.Equal(t, num(*l.Default), m[4], "liblock.h: %s's default", m[1])
		}
	}
	assert.GreaterOrEqual(t, seen, 14, "liblock.h's LIMITS list was found")
}
