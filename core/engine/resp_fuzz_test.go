package engine

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The RESP decoder reads bytes from whatever listens on a node's port.
// These targets hold it to: no panic, no reply taken from an incomplete
// input, the same replies however the stream is cut, and whole replies
// whose prefixes are never errors. `go test` runs the seeds in
// testdata/fuzz/<target> (replies captured from real redis-servers);
// `make fuzz` runs each target for FUZZ_TIME.

// respSeeds are replies as redis-server sends them (captured from real
// servers: status, error, integer, bulk, nil, arrays of script tables,
// CLUSTER SHARDS/SLOTS, ROLE, SENTINEL), plus the hostile node's shapes.
var respSeeds = []string{
	"+OK\r\n", "+PONG\r\n", "$-1\r\n", ":1\r\n", ":-1\r\n", ":2\r\n",
	"-NOSCRIPT No matching script. Please use EVAL.\r\n",
	"-MOVED 3999 127.0.0.1:6381\r\n", "-ASK 3999 127.0.0.1:6381\r\n",
	"-READONLY You can't write against a read only replica.\r\n",
	"$36\r\n1b4e28ba-2fa1-11d2-883f-0016d3cca427\r\n",
	"*3\r\n:0\r\n:1\r\n:7\r\n",
	"*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n",
	"*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6379\r\n$9\r\nconnected\r\n:42\r\n",
	"*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6379\r\n",
	"*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$40\r\n0123456789012345678901234567890123456789\r\n",
	"*1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n*14\r\n$2\r\nid\r\n$1\r\nx\r\n$4\r\nport\r\n:7000\r\n$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$6\r\nhealth\r\n$6\r\nonline\r\n",
	"*3\r\n$9\r\nsubscribe\r\n$20\r\nliblock:released:abc\r\n:1\r\n",
	"*3\r\n$7\r\nmessage\r\n$20\r\nliblock:released:abc\r\n$16\r\n0123456789abcdef\r\n",
	"$2147483647\r\n", "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
	"HTTP/1.1 400 Bad Request\r\n\r\n", "\x00\x01\x02", "+OK\r\n$5\r\nhel",
	"*-1\r\n", "$0\r\n\r\n", "+\r\n", "*2\r\n+OK\r\n",
}

// decodeStream decodes the replies of a stream handed over in pieces, as
// a node's connection does (node.received): a reply left incomplete waits
// for the next piece. It stops at the first error.
func decodeStream(pieces ...[]byte) ([]Reply, bool) {
	var got []Reply
	var buf []byte
	for _, p := range pieces {
		buf = append(buf, p...)
		for {
			r, n, err := parseReply(buf)
			if err != nil {
				return got, false
			}
			if n == 0 {
				break
			}
			got = append(got, r)
			buf = buf[n:]
		}
	}
	return got, true
}

// decodeScanned decodes a stream as node.received does: each reply
// scanned (replyScan) before it is decoded, the scan resumed where the
// last piece left it.
func decodeScanned(pieces ...[]byte) ([]Reply, bool) {
	var got []Reply
	var buf []byte
	var s replyScan
	for _, p := range pieces {
		buf = append(buf, p...)
		for {
			n, err := s.scan(buf)
			if err != nil {
				return got, false
			}
			if n == 0 {
				break
			}
			r, k, err := parseReply(buf[:n])
			if err != nil {
				return got, false
			}
			if k != n {
				panic("scanned " + strconv.Itoa(n) + " bytes, decoded " + strconv.Itoa(k))
			}
			got = append(got, r)
			buf = buf[n:]
		}
	}
	return got, true
}

func FuzzParseReply(f *testing.F) {
	for _, s := range respSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := parseReply(b)
		switch {
		case err != nil && n != 0:
			t.Fatalf("an error with %d bytes taken", n)
		case n < 0 || n > len(b):
			t.Fatalf("took %d of %d bytes", n, len(b))
		case err != nil && !strings.HasPrefix(err.Error(), errProtocol.Error()):
			t.Fatalf("error %q is not a protocol error", err)
		}
		if n > 0 {
			// The reply alone parses the same, and none of its prefixes
			// is a reply or an error: a reply cut short waits for more.
			r2, n2, err2 := parseReply(b[:n])
			if err2 != nil || n2 != n || !reflect.DeepEqual(r, r2) {
				t.Fatalf("the reply alone parsed as %+v, %d, %v; want %+v, %d", r2, n2, err2, r, n)
			}
			for i := range n {
				if _, k, err := parseReply(b[:i]); k != 0 || err != nil {
					t.Fatalf("a prefix of %d of a %d-byte reply gave %d, %v", i, n, k, err)
				}
			}
			checkKinds(t, r)
		}
		// However the stream is cut, the same replies, and an error at the
		// same place.
		whole, ok := decodeStream(b)
		if len(b) > 2048 {
			return // the cuts below are quadratic
		}
		for i := 0; i <= len(b); i++ {
			got, ok2 := decodeStream(b[:i], b[i:])
			if ok2 != ok || !reflect.DeepEqual(got, whole) {
				t.Fatalf("cut at %d: %d replies (ok %v), want %d (ok %v)", i, len(got), ok2, len(whole), ok)
			}
			got, ok2 = decodeScanned(b[:i], b[i:])
			if ok2 != ok || !reflect.DeepEqual(got, whole) {
				t.Fatalf("scanned, cut at %d: %d replies (ok %v), want %d (ok %v)", i, len(got), ok2, len(whole), ok)
			}
		}
		// One byte at a time, as a slow or hostile node sends.
		pieces := make([][]byte, len(b))
		for i := range b {
			pieces[i] = b[i : i+1]
		}
		if got, ok2 := decodeStream(pieces...); ok2 != ok || !reflect.DeepEqual(got, whole) {
			t.Fatalf("byte by byte: %d replies (ok %v), want %d (ok %v)", len(got), ok2, len(whole), ok)
		}
		if got, ok2 := decodeScanned(pieces...); ok2 != ok || !reflect.DeepEqual(got, whole) {
			t.Fatalf("scanned byte by byte: %d replies (ok %v), want %d (ok %v)", len(got), ok2, len(whole), ok)
		}
	})
}

// checkKinds: every decoded reply says its RESP type, and only the fields
// of that type are set.
func checkKinds(t *testing.T, r Reply) {
	t.Helper()
	switch r.Kind {
	case '+', '$':
		if r.Err != nil || r.Int != 0 || r.Elems != nil || (r.Nil && r.Str != "") {
			t.Fatalf("a %q reply with other fields: %+v", r.Kind, r)
		}
	case '-':
		if r.Err == nil || r.Str != "" || r.Elems != nil {
			t.Fatalf("an error reply without its error: %+v", r)
		}
	case ':':
		if r.Str != "" || r.Elems != nil || r.Nil || r.Err != nil {
			t.Fatalf("an integer reply with other fields: %+v", r)
		}
	case '*':
		for _, x := range r.Elems {
			checkKinds(t, x)
		}
	default:
		t.Fatalf("reply of kind %q", r.Kind)
	}
}

// FuzzCommandRoundTrip: what the engine writes is what a RESP reader reads
// back, whatever the arguments' bytes (CRLF, NUL, '$' inside a key).
func FuzzCommandRoundTrip(f *testing.F) {
	f.Add("SET\x00k\x00tok\x00NX\x00PX\x0030000", int64(30000))
	f.Add("EVALSHA\x00"+ReleaseSHA+"\x001\x00lock:a\x00tok", int64(1))
	f.Add("\r\n$3\r\n\x00*1\r\n\x00", int64(-1))
	f.Add("", int64(0))
	f.Fuzz(func(t *testing.T, joined string, px int64) {
		args := strings.Split(joined, "\x00")
		wire := AppendCommand(nil, args...)
		roundTrip(t, wire, args)
		// The engine's own encodings of SET and of a script.
		if len(args) < 2 {
			return
		}
		c := command{kind: cmdSet, key: args[0], a1: args[1], px: px}
		roundTrip(t, c.appendTo(nil), []string{"SET", args[0], args[1], "NX", "PX", strconv.FormatInt(px, 10)})
		sc := &script{src: "return 1", sha: ReleaseSHA}
		c = command{kind: cmdEvalSHA, sc: sc, key: args[0], key2: args[1], nargs: 2, a1: joined, a2: args[len(args)-1], args: args}
		want := append([]string{"EVALSHA", ReleaseSHA, "2", args[0], args[1], joined, args[len(args)-1]}, args...)
		if args[1] == "" { // an empty key2 is no second key
			want = append([]string{"EVALSHA", ReleaseSHA, "1", args[0], joined, args[len(args)-1]}, args...)
		}
		roundTrip(t, c.appendTo(nil), want)
	})
}

func roundTrip(t *testing.T, wire []byte, args []string) {
	t.Helper()
	r, n, err := parseReply(wire)
	if err != nil || n != len(wire) || r.Kind != '*' || len(r.Elems) != len(args) {
		t.Fatalf("%q: parsed %+v, %d of %d bytes, %v", wire, r, n, len(wire), err)
	}
	for i, a := range args {
		if r.Elems[i].Kind != '$' || r.Elems[i].Str != a {
			t.Fatalf("argument %d: %q, want %q", i, r.Elems[i].Str, a)
		}
	}
}
