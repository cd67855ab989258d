package hostabi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHandleTable makes engines across the boundary between the handles
// kept in table.small and those in table.m: each is found, counted and
// freed once, and a freed handle names nothing.
func TestHandleTable(t *testing.T) {
	before := Count()
	var hs []uint64
	for range smallHandles + 100 {
		h, err := New(`{"nodes":["redis://127.0.0.1:1"]}`)
		require.NoError(t, err)
		hs = append(hs, h)
	}
	require.Greater(t, hs[len(hs)-1], uint64(smallHandles))
	assert.Equal(t, before+len(hs), Count())
	for i, h := range hs {
		require.True(t, Exists(h))
		if i%2 == 0 {
			require.NoError(t, Free(h))
			require.False(t, Exists(h))
			require.ErrorIs(t, Free(h), ErrInvalidHandle)
			_, err := Step(h, nil, make([]byte, MinOut))
			require.ErrorIs(t, err, ErrInvalidHandle)
		}
	}
	assert.Equal(t, before+len(hs)/2, Count())
	for i, h := range hs {
		require.Equal(t, i%2 != 0, Exists(h))
		if i%2 != 0 {
			n, err := Step(h, nil, make([]byte, MinOut))
			require.NoError(t, err)
			require.Zero(t, n)
			require.NoError(t, Free(h))
		}
	}
	assert.Equal(t, before, Count())
	assert.False(t, Exists(0))
	assert.False(t, Exists(1<<60))
}
