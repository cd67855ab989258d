package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Core builds its messages without fmt (the wasm module must stay small);
// these tests hold them to the text fmt's verbs gave, which the C, Python
// and Node suites compare byte for byte.

// oddStrings need quoting or escaping: %q and strconv.Quote must agree.
var oddStrings = []string{"", "orders:42", `a"b\c`, "tab\there\nnl", "☃ snow", "\x00\x7f\xff", "\u2028", strings.Repeat("x", 300)}

var oneNode = []Node{{Network: "tcp", Addr: "h:1"}}

func TestArgumentMessagesMatchFmt(t *testing.T) {
	neg := -0.5
	for _, tc := range []struct {
		err  error
		want string
	}{
		{Config{Nodes: oneNode, NodeTimeout: -time.Nanosecond}.Validate(),
			fmt.Sprintf("liblock: invalid argument: %s: %s", "node_timeout", fmt.Sprintf("must be > 0 and at most %v, got %v", MaxNodeTimeout, -time.Nanosecond))},
		{Config{Nodes: oneNode, NodeTimeout: 90 * time.Second}.Validate(),
			fmt.Sprintf("liblock: invalid argument: node_timeout: must be > 0 and at most %v, got %v", MaxNodeTimeout, 90*time.Second)},
		{Config{Nodes: oneNode, DriftFactor: &neg}.Validate(),
			fmt.Sprintf("liblock: invalid argument: drift_factor: must be between 0 and %v, got %v", MaxDriftFactor, neg)},
		{Config{Nodes: oneNode, KeyPrefix: strings.Repeat("k", MaxKeyPrefix+1)}.Validate(),
			fmt.Sprintf("liblock: invalid argument: key_prefix: longer than %d bytes", MaxKeyPrefix)},
		{Config{Nodes: make([]Node, MaxNodes+1)}.Validate(),
			fmt.Sprintf("liblock: invalid argument: nodes: at most %d nodes, got %d", MaxNodes, MaxNodes+1)},
		{CheckResource(strings.Repeat("r", MaxResourceLength+1)),
			fmt.Sprintf("liblock: invalid argument: resource: longer than %d bytes", MaxResourceLength)},
		{CheckTTL(0), fmt.Sprintf("liblock: invalid argument: ttl: must be between %v and %v, got %v", MinTTL, MaxTTL, time.Duration(0))},
		{CheckTTL(25*time.Hour + 1500*time.Microsecond),
			fmt.Sprintf("liblock: invalid argument: ttl: must be between %v and %v, got %v", MinTTL, MaxTTL, 25*time.Hour+1500*time.Microsecond)},
		{CheckWait(-time.Millisecond),
			fmt.Sprintf("liblock: invalid argument: wait: must be between 0 and %v, got %v", MaxWait, -time.Millisecond)},
	} {
		assert.EqualError(t, tc.err, tc.want, "want %q", tc.want)
	}
}

// FormatFloat(f, 'g', -1, 64) stands in for %v of a drift factor.
func TestDriftFactorFormatMatchesFmt(t *testing.T) {
	for _, f := range []float64{-0.5, 0.30000000000000004, 0.10000000000000002, -1e-7, 1e21, 123456789, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.SmallestNonzeroFloat64} {
		d := f
		err := Config{Nodes: oneNode, DriftFactor: &d}.Validate()
		want := fmt.Sprintf("liblock: invalid argument: drift_factor: must be between 0 and %v, got %v", MaxDriftFactor, f)
		assert.EqualError(t, err, want, "drift %v: want %q", f, want)
	}
}

func TestErrorTypesMatchFmt(t *testing.T) {
	cause := errors.New("dial tcp 127.0.0.1:1: connection refused")
	for _, res := range oddStrings {
		for _, tc := range []struct{ got, want string }{
			{(&NodeError{Node: 3, Addr: res, Err: cause}).Error(), fmt.Sprintf("node %d (%s): %v", 3, res, cause)},
			{(&NodeError{Node: 0, Addr: res}).Error(), fmt.Sprintf("node %d (%s): %v", 0, res, error(nil))},
			{(&opError{op: "acquire", resource: res, kind: ErrNotAcquired}).Error(), fmt.Sprintf("%v (%s %q)", ErrNotAcquired, "acquire", res)},
			{(&opError{op: "release", resource: res, kind: ErrLost, detail: "held on only 1 of 3 nodes when released"}).Error(),
				fmt.Sprintf("%v: %s (%s %q)", ErrLost, "held on only 1 of 3 nodes when released", "release", res)},
			{(&UnavailableError{Op: "extend", Reason: res, Nodes: []*NodeError{{Node: 1, Addr: "a:1", Err: cause}, {Node: 2, Addr: "b:2", Err: cause}}}).Error(),
				fmt.Sprintf("liblock: %s: unavailable: %s; %v; %v", "extend", res, &NodeError{Node: 1, Addr: "a:1", Err: cause}, &NodeError{Node: 2, Addr: "b:2", Err: cause})},
			{wrap("liblock: acquire "+quote(res), context.Canceled).Error(), fmt.Errorf("liblock: acquire %q: %w", res, context.Canceled).Error()},
		} {
			assert.Equal(t, tc.want, tc.got, "message")
		}
	}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// wrap keeps what fmt.Errorf's %w gave: errors.Is and errors.As see the
// cause.
func TestWrapUnwraps(t *testing.T) {
	err := wrap("liblock: extend \"r\"", context.DeadlineExceeded)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var ae *ArgumentError
	err = wrap("outer", invalidArg("ttl", "bad"))
	if assert.ErrorAs(t, err, &ae, "errors.As through wrap") {
		assert.Equal(t, "ttl", ae.Arg, "errors.As through wrap: %v", err)
	}
	assert.ErrorIs(t, err, ErrInvalidArgument, "errors.Is through wrap")
}
