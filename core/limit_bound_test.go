package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
)

// TestArgumentBound: the Go driver's rejections of a value out of its
// range say which bound it crossed (the fields the host protocol carries
// to the other languages), before anything is sent (no node is reachable).
func TestArgumentBound(t *testing.T) {
	c, err := core.New(core.Config{Nodes: []string{"redis://127.0.0.1:1"}})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		call  func() error
		arg   string
		bound string
		limit int64
		unit  string
		got   int64
	}{
		{"ttl above", func() error { _, err := c.Acquire(ctx, "r", core.MaxTTL+time.Millisecond); return err }, "ttl", core.BoundMax, core.MaxTTL.Milliseconds(), "ms", core.MaxTTL.Milliseconds() + 1},
		{"resource empty", func() error { _, err := c.Acquire(ctx, "", time.Second); return err }, "resource", core.BoundMin, 1, "bytes", 0},
		{"resource long", func() error { _, err := c.Inspect(ctx, strings.Repeat("r", core.MaxResourceLength+1)); return err }, "resource", core.BoundMax, core.MaxResourceLength, "bytes", core.MaxResourceLength + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var ae *core.ArgumentError
			require.True(t, errors.As(err, &ae), "%v", err)
			assert.True(t, errors.Is(err, core.ErrInvalidArgument))
			assert.Equal(t, tc.arg, ae.Arg)
			assert.Equal(t, tc.bound, ae.Bound)
			assert.Equal(t, tc.limit, ae.Limit)
			assert.Equal(t, tc.unit, ae.Unit)
			assert.Equal(t, tc.got, ae.Got)
		})
	}
}
