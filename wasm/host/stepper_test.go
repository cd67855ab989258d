package host_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
)

// TestLargeWriteWhole: a WRITE far larger than the buffers is split over
// several steps, and the host still gets all of it from the one event (the
// stepper answers a step itself only when the last one left room).
func TestLargeWriteWhole(t *testing.T) {
	e := newEngine(t, core.Config{Nodes: []string{"redis://127.0.0.1:1"}, NodeTimeout: time.Minute})
	const n = 300 // × ≥ 1000 bytes: ≈ 2.3 × the 128 KiB output buffer
	var conn engine.ConnID
	for i := range n {
		_, err := e.Acquire(engine.AcquireRequest{Resource: strings.Repeat("x", 1000) + strconv.Itoa(i), TTL: time.Second})
		require.NoError(t, err)
		for a, ok := e.Next(); ok; a, ok = e.Next() {
			if a.Kind == engine.ActOpen {
				conn = a.Conn
			}
		}
	}
	require.NotZero(t, conn)
	e.Opened(conn)
	var ping []byte
	for a, ok := e.Next(); ok; a, ok = e.Next() {
		if a.Kind == engine.ActWrite {
			ping = append(ping, a.Data...)
		}
	}
	require.Equal(t, "*1\r\n$4\r\nINFO\r\n", string(ping), "the handshake")
	e.Received(conn, []byte("$13\r\nrun_id:abcdef\r\n"))
	var data []byte
	writes := 0
	for a, ok := e.Next(); ok; a, ok = e.Next() {
		if a.Kind == engine.ActWrite {
			assert.Equal(t, conn, a.Conn)
			data = append(data, a.Data...)
			writes++
		}
	}
	assert.Greater(t, writes, 2, "split over several steps")
	assert.Greater(t, len(data), 256<<10)
	assert.Equal(t, n, bytes.Count(data, []byte("*6\r\n$3\r\nSET\r\n")), "every SET, whole, from the one event")
	assert.True(t, bytes.HasSuffix(data, []byte("$2\r\nNX\r\n$2\r\nPX\r\n$4\r\n1000\r\n")))
}
