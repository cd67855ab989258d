package faultproxy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A pattern is found whichever way the stream is cut, and only once it is
// complete; bytes that only resemble it never match.
func TestMatcherAcrossChunks(t *testing.T) {
	stream := "*7\r\n$7\r\nEVALSHA\r\n$40\r\n" + FenceSHA + "\r\n$1\r\n2\r\n"
	end := len("*7\r\n$7\r\nEVALSHA\r\n$40\r\n") + len(FenceSHA)
	for cut := 1; cut < len(stream); cut++ {
		for step := 1; step <= 7; step++ {
			m := matcher{patterns: FencePatterns()}
			at := -1
			for i := 0; i < len(stream) && at < 0; {
				j := min(i+step, len(stream))
				if i == 0 {
					j = cut
				}
				if m.feed([]byte(stream[i:j])) {
					at = j
				}
				i = j
			}
			require.GreaterOrEqual(t, at, end, "cut %d step %d: matched before the pattern's end", cut, step)
			require.LessOrEqual(t, at, end+step+cut, "cut %d step %d: matched late (the pattern ends at %d)", cut, step, end)
		}
	}
	m := matcher{patterns: FencePatterns()}
	for _, chunk := range []string{FenceSHA[:39], "x" + FenceSHA[1:], "if fence < cu", "r then"[1:]} {
		require.False(t, m.feed([]byte(chunk)), "matched %q", chunk)
	}
}
