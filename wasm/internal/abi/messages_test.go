package abi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/liblock/liblock/core"
)

// The module builds its messages without fmt (size); these tests hold them
// to the text fmt's verbs gave, which the hosts' suites compare.

func TestHexByteMatchesFmt(t *testing.T) {
	for c := 0; c < 256; c++ {
		if got, want := hexByte(byte(c)), fmt.Sprintf("0x%02x", c); got != want {
			t.Errorf("hexByte(%d) = %q, want %q", c, got, want)
		}
	}
}

func TestArgMessagesMatchFmt(t *testing.T) {
	arg := func(a, reason string) string { return fmt.Sprintf("liblock: invalid argument: %s: %s", a, reason) }
	cfgErr := func(s string) error { _, err := ParseConfig(s); return err }
	optErr := func(s string) error { _, err := ParseOptions(s, false); return err }
	ttlErr := func(ms int64) error { _, err := TTLFromMillis(ms); return err }
	for _, tc := range []struct {
		err  error
		want string
	}{
		{cfgErr(strings.Repeat(" ", MaxJSONLength+1)), arg("config", fmt.Sprintf("longer than %d bytes", MaxJSONLength))},
		{cfgErr(`{"nodes":`), arg("config", fmt.Sprintf("malformed JSON: %v", "unexpected end of input"))},
		{cfgErr(`{"no\"d\u00e9\ts":1}`), arg("config", fmt.Sprintf("unknown key %q", "no\"dé\ts"))},
		{optErr(`{"wait_ms":1,"wait_ms":2}`), arg("options", fmt.Sprintf("duplicate key %q", "wait_ms"))},
		{optErr(`{"wait_ms":86400001}`), arg("wait_ms", fmt.Sprintf("must be at most %d ms", core.MaxWait.Milliseconds()))},
		{cfgErr(`{"nodes":[` + strings.Repeat(`"x",`, core.MaxNodes) + `"x"]}`), arg("nodes", fmt.Sprintf("at most %d nodes, got %d", core.MaxNodes, core.MaxNodes+1))},
		{cfgErr(`{"nodes":["redis://h:1",7]}`), arg(fmt.Sprintf("nodes[%d]", 1), "must be a string")},
		{cfgErr(`{"nodes":["redis://h:1"],"drift_factor":0.5}`), arg("drift_factor", fmt.Sprintf("must be between 0 and %v, got %v", core.MaxDriftFactor, 0.5))},
		{cfgErr(`{"nodes":["redis://h:1"],"drift_factor":1e300}`), arg("drift_factor", fmt.Sprintf("must be between 0 and %v, got %v", core.MaxDriftFactor, 1e300))},
		{cfgErr(`{"nodes":["redis://h:1","redis://h:2/d\"b"]}`), arg(fmt.Sprintf("nodes[%d]", 1), fmt.Errorf("invalid database number %q", `d"b`).Error())},
		{ttlErr(0), arg("ttl_ms", fmt.Sprintf("must be between %d and %d, got %d", core.MinTTL.Milliseconds(), core.MaxTTL.Milliseconds(), 0))},
		{ttlErr(-1 << 63), arg("ttl_ms", fmt.Sprintf("must be between %d and %d, got %d", core.MinTTL.Milliseconds(), core.MaxTTL.Milliseconds(), int64(-1<<63)))},
	} {
		if tc.err == nil {
			t.Errorf("no error, want %q", tc.want)
			continue
		}
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("message\n got %q\nwant %q", got, tc.want)
		}
	}
}

func TestExecResponseMessagesMatchFmt(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		n    int
		want string
	}{
		{[]byte{0xa1, 'x'}, 1, fmt.Sprintf("msgpack: want an array, got 0x%02x", 0xa1)},
		{[]byte{0x92}, 3, fmt.Sprintf("exec response: %d replies for %d nodes", 2, 3)},
		{[]byte{0x91, 0x93}, 1, fmt.Sprintf("exec response: reply %d is an array of %d, want 2", 0, 3)},
		{[]byte{0x91, 0x92, 0xa0}, 1, fmt.Sprintf("msgpack: want an integer, got 0x%02x", 0xa0)},
		{[]byte{0x91, 0x92, ReplyNil, 0x05}, 1, fmt.Sprintf("exec response: reply %d: nil kind with value 0x%02x", 0, 5)},
		{[]byte{0x91, 0x92, ReplyString, 0x05}, 1, fmt.Sprintf("msgpack: want a string, got 0x%02x", 5)},
		{[]byte{0x91, 0x92, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xc0}, 1, fmt.Sprintf("exec response: reply %d has kind %d", 0, int64(-1<<63))},
	} {
		_, err := ParseReplies(tc.b, tc.n)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseReplies(% x, %d) = %v, want %s", tc.b, tc.n, err, tc.want)
		}
	}
}
