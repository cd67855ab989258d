package engine

import (
	"crypto/sha1"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scripts are run by the sums stored as constants: they must be the
// SHA-1 of the sources (scripts_lua.go, the .lua files).
func TestScriptHashes(t *testing.T) {
	for _, sc := range []*script{releaseScript, extendScript, acquireTokenScript, acquireFenceScript, fenceScript, inspectScript,
		semAcquireScript, semReleaseScript, semInspectScript} {
		sum := sha1.Sum([]byte(sc.src))
		assert.Equal(t, hex.EncodeToString(sum[:]), sc.sha, "SHA-1 of %q", sc.src)
	}
	for _, sc := range primitiveScripts {
		sum := sha1.Sum([]byte(sc.src))
		assert.Equal(t, hex.EncodeToString(sum[:]), sc.sha, "SHA-1 of %q", sc.src)
	}
}

// Replies arrive in pieces of any size: every split of a stream of replies
// parses to the same replies, and an incomplete reply is never taken.
func TestParseReplySplitAnywhere(t *testing.T) {
	stream := "+OK\r\n-NOSCRIPT No matching script\r\n:1\r\n:-42\r\n$-1\r\n$5\r\nhello\r\n$0\r\n\r\n*2\r\n$1\r\na\r\n:3\r\n*-1\r\n"
	want := []Reply{{Str: "OK", Kind: '+'}, {Err: RedisError("NOSCRIPT No matching script"), Kind: '-'}, {Int: 1, Kind: ':'}, {Int: -42, Kind: ':'}, {Nil: true, Kind: '$'},
		{Str: "hello", Kind: '$'}, {Str: "", Kind: '$'}, {Elems: []Reply{{Str: "a", Kind: '$'}, {Int: 3, Kind: ':'}}, Kind: '*'}, {Nil: true, Kind: '*'}}
	for split := 0; split <= len(stream); split++ {
		var got []Reply
		var buf []byte
		for _, piece := range []string{stream[:split], stream[split:]} {
			buf = append(buf, piece...)
			for {
				r, n, err := parseReply(buf)
				require.NoError(t, err, "split at %d", split)
				if n == 0 {
					break
				}
				got = append(got, r)
				buf = buf[n:]
			}
		}
		assert.Equal(t, want, got, "split at %d", split)
		assert.Empty(t, buf)
	}
}

// A stream that cannot be RESP is an error, never a reply or a hang.
func TestParseReplyRejectsGarbage(t *testing.T) {
	for _, bad := range []string{"?\r\n", "+OK\n", ":12x\r\n", ":\r\n", "$3\r\nabcd\r\n", "$99999999999\r\n", ":99999999999999999999\r\n"} {
		_, n, err := parseReply([]byte(bad))
		assert.Error(t, err, "%q", bad)
		assert.Zero(t, n, "%q", bad)
	}
	_, _, err := parseReply([]byte("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n"))
	assert.Error(t, err, "nesting is bounded")
}

// Commands are arrays of bulk strings, byte for byte what Redis expects.
func TestCommandEncoding(t *testing.T) {
	assert.Equal(t, "*2\r\n$4\r\nAUTH\r\n$3\r\np\xffw\r\n", string(AppendCommand(nil, "AUTH", "p\xffw")))
	set := command{kind: cmdSet, key: "k", a1: "tok", px: 1500}
	assert.Equal(t, "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\ntok\r\n$2\r\nNX\r\n$2\r\nPX\r\n$4\r\n1500\r\n", string(set.appendTo(nil)))
	ext := command{kind: cmdEvalSHA, sc: extendScript, key: "k", a1: "tok", a2: "10", nargs: 2}
	assert.Equal(t, string(AppendCommand(nil, "EVALSHA", ExtendSHA, "1", "k", "tok", "10")), string(ext.appendTo(nil)))
	rel := command{kind: cmdEval, sc: releaseScript, key: "k", a1: "tok", a2: "id", nargs: 2}
	assert.Equal(t, string(AppendCommand(nil, "EVAL", releaseSrc, "1", "k", "tok", "id")), string(rel.appendTo(nil)))
	two := command{kind: cmdEvalSHA, sc: fenceScript, key: "k", key2: FenceKey("k"), a1: "tok", a2: "7", nargs: 2}
	assert.Equal(t, string(AppendCommand(nil, "EVALSHA", FenceSHA, "2", "k", "k\xfffence", "tok", "7")), string(two.appendTo(nil)))
	none := command{kind: cmdEvalSHA, sc: inspectScript, key: "k"}
	assert.Equal(t, string(AppendCommand(nil, "EVALSHA", InspectSHA, "1", "k")), string(none.appendTo(nil)))
}
