package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A node that passes the handshake and then sends a reply that never ends
// is failed once the decoder's bound is crossed, holding no more than that
// bound: the bytes fed to the engine, its buffer's capacity and the cause
// are checked, piece by piece as a host hands them over.
func TestEndlessReplyIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name, header, chunk, cause string
		limit                      int // bytes the node may be fed before it fails
	}{
		{"endless array", "*2147483647\r\n", ":1234567\r\n", "a reply of more than " + strconv.Itoa(maxElems) + " values", maxElems * 10},
		{"endless array of long strings", "*2147483647\r\n", "$100\r\n" + strings.Repeat("x", 100) + "\r\n", "a reply longer than " + strconv.Itoa(maxReply) + " bytes", maxReply},
		{"bulk string of the bound", "$" + strconv.Itoa(maxBulk) + "\r\n", "x", "bulk string not followed by CRLF", maxBulk + 2},
		{"endless line", "+", "y", "reply line longer than", maxReplyLine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &fakeEnv{}
			e, err := New(Config{Nodes: oneNode, NodeTimeout: time.Minute}, env)
			require.NoError(t, err)
			op, err := e.Acquire(AcquireRequest{Resource: "r", TTL: time.Minute})
			require.NoError(t, err)
			var conn ConnID
			var done *Action
			drain := func() {
				for {
					a, ok := e.Next()
					if !ok {
						return
					}
					switch a.Kind {
					case ActOpen:
						conn = a.Conn
						e.Opened(conn)
					case ActDone:
						if a.Op == op {
							done = &a
						}
					}
				}
			}
			drain()
			e.Received(conn, []byte("+PONG\r\n"+tc.header))
			drain()
			piece := []byte(strings.Repeat(tc.chunk, (64<<10)/len(tc.chunk)))
			fed, maxCap := 0, 0
			for done == nil && fed <= tc.limit+len(piece) {
				e.Received(conn, piece)
				fed += len(piece)
				maxCap = max(maxCap, cap(e.nodes[0].rbuf))
				drain()
			}
			require.NotNil(t, done, "the node was not failed after %d bytes", fed)
			require.Error(t, done.Err)
			assert.Contains(t, done.Err.Error(), tc.cause)
			assert.LessOrEqual(t, fed, tc.limit+len(piece), "bytes fed before the node failed")
			// append doubles a buffer: at most twice what it held.
			assert.LessOrEqual(t, maxCap, 2*(maxReply+len(piece)), "the node's buffer")
			assert.Empty(t, e.nodes[0].rbuf, "the failed connection's buffer is dropped")
		})
	}
}

// The scan of a reply in pieces resumes where it stopped: each byte of an
// array arriving in small pieces is scanned a bounded number of times, not
// once per piece (which made a 64 MiB reply cost terabytes of work).
func TestReplyScanResumes(t *testing.T) {
	const elems = 100000
	var s replyScan
	b := []byte("*" + strconv.Itoa(elems) + "\r\n")
	n, err := s.scan(b)
	require.NoError(t, err)
	require.Zero(t, n)
	for i := range elems {
		b = append(b, ":"+strconv.Itoa(i)+"\r\n"...)
		n, err = s.scan(b)
		require.NoError(t, err)
		if n > 0 {
			require.Equal(t, elems-1, i, "whole only with its last element")
			break
		}
		// Everything it was handed was whole values: the next scan
		// starts after them.
		require.Equal(t, len(b), s.off)
	}
	require.Equal(t, len(b), n)
	r, k, err := parseReply(b)
	require.NoError(t, err)
	assert.Equal(t, n, k)
	assert.Len(t, r.Elems, elems)
}
