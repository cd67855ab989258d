package abi

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/liblock/liblock/core"
)

// netURLNodeAddr and netURLCheckDB are NodeAddr and checkDB as they were
// written with net/url, the reference for the module's own reading.
func netURLNodeAddr(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(malformed URL)"
	}
	if u.Scheme == "unix" {
		return u.Path
	}
	if u.Port() == "" {
		return u.Hostname() + ":6379"
	}
	return u.Host
}

func netURLCheckDB(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return nil
	}
	p := strings.TrimPrefix(u.Path, "/")
	if p == "" {
		return nil
	}
	if n, err := strconv.Atoi(p); err != nil || n < 0 {
		return fmt.Errorf("invalid database number %q", p)
	}
	return nil
}

var nodeURLs = []string{
	"redis://h:1", "REDIS://H:1", "redis://h", "redis://h:", "rediss://u:p@h:6380/2", "redis://u:p@ss@h:1/0",
	"redis://[::1]:6379", "redis://[::1]", "redis://[::1]:", "redis://[fe80::1%25en0]:1", "redis://[fe80::1%25en0]",
	"redis://h%C3%BC:1", "redis://h%25:1", "redis://a,b:1,c:2", "redis://a:1:2", "redis://h:1/x", "redis://h:1/-1",
	"redis://h:1/%31", "redis://h:1/0?db=3", "redis://h:1/0#x", "redis://h:1?x/y#z", "redis://h:1/", "redis://h:1//",
	"unix:///tmp/r.sock", "unix:/tmp/r.sock", "unix://h/tmp/r%20x.sock", "unix:///tmp/r.sock?db=2", "UNIX:///x",
	"redis://u%40x:p%3A@h:1", "redis://h:1/1/2", "redis://h:00001", "rediss://h", "redis://1.2.3.4:5/6",
}

func sameNodeReading(t *testing.T, raw string) {
	t.Helper()
	if (core.Config{Nodes: []string{raw}}).Validate() != nil {
		return // the module never reads such a URL
	}
	if got, want := NodeAddr(raw), netURLNodeAddr(raw); got != want {
		t.Fatalf("NodeAddr(%q) = %q, net/url reads %q", raw, got, want)
	}
	if got, want := fmt.Sprint(checkDB(raw)), fmt.Sprint(netURLCheckDB(raw)); got != want {
		t.Fatalf("checkDB(%q) = %s, net/url reads %s", raw, got, want)
	}
}

// TestNodeURLReadingMatchesNetURL: NodeAddr and checkDB, written without
// net/url for the module's size, read valid node URLs as net/url does.
func TestNodeURLReadingMatchesNetURL(t *testing.T) {
	for _, raw := range nodeURLs {
		sameNodeReading(t, raw)
	}
	for _, tmpl := range []string{"redis://u:p@h%s:1/0", "redis://%s@h:1", "redis://h:1/%s", "redis://[::1%25%s]", "unix:///t%s"} {
		for b := 0; b < 256; b++ {
			for _, ins := range []string{string([]byte{byte(b)}), fmt.Sprintf("%%%02X", b), fmt.Sprintf("%%%02x", b)} {
				sameNodeReading(t, strings.Replace(tmpl, "%s", ins, 1))
			}
		}
	}
}

// FuzzNodeURLReading compares them on any input: go test -fuzz FuzzNodeURLReading ./wasm/internal/abi/
func FuzzNodeURLReading(f *testing.F) {
	for _, raw := range nodeURLs {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) { sameNodeReading(t, raw) })
}
