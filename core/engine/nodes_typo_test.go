package engine

import (
	"strings"
	"testing"
)

// TestNodeURLNoScheme: a URL without "://" gets a suggestion that is itself
// a valid node URL, or none; never a broken one like redis://redis//h:p.
func TestNodeURLNoScheme(t *testing.T) {
	for _, tc := range []struct{ raw, want, not string }{
		{"127.0.0.1:6379", "write redis://127.0.0.1:6379 ", ""},
		{"redis//127.0.0.1:6379", "write redis://127.0.0.1:6379 ", "redis://redis"},
		{"redis:/127.0.0.1:6379", "write redis://127.0.0.1:6379 ", "redis://redis"},
		{"rediss//h:6380", "write rediss://h:6380 ", "redis://rediss"},
		{"unix//tmp/redis.sock", "write unix:///tmp/redis.sock ", "redis://unix"},
		{"h:6379/0", "write redis://h:6379/0 ", ""},
		{"h:6379//x", "is not a node URL: write redis://host:port", "redis://h:6379//x"},
		{"redis//:sekret@h:6379", "write redis://:xxxxx@h:6379 ", "sekret"},
	} {
		_, err := ParseNodes([]string{tc.raw})
		if err == nil {
			t.Fatalf("%q: accepted", tc.raw)
		}
		msg := err.Error()
		if !strings.Contains(msg, "nodes[0]: no scheme") || !strings.Contains(msg, tc.want) {
			t.Errorf("%q: %q, want it to say %q", tc.raw, msg, tc.want)
		}
		if tc.not != "" && strings.Contains(msg, tc.not) {
			t.Errorf("%q: %q says %q", tc.raw, msg, tc.not)
		}
		// The suggestion parses.
		if i := strings.Index(msg, "write "); i >= 0 && !strings.Contains(msg, "host:port") {
			suggested := strings.Fields(msg[i+len("write "):])[0]
			if strings.Contains(suggested, "xxxxx") {
				continue
			}
			if _, err := ParseNodes([]string{suggested}); err != nil {
				t.Errorf("%q: the suggestion %q does not parse: %v", tc.raw, suggested, err)
			}
		}
	}
}
