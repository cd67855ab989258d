package engine

import (
	"errors"
	"strconv"
)

// The few bits of RESP2 the engine needs: commands go out as arrays of bulk
// strings; replies come back as status, error, integer, bulk string or
// (never for our commands, but skipped so a connection stays in step)
// arrays.

// Reply is one node's answer to one command.
type Reply struct {
	// Err is set when the node could not be reached, timed out, or answered
	// with an error reply (whose text then starts with the Redis error code,
	// e.g. "NOSCRIPT ...").
	Err   error
	Nil   bool    // a nil reply (SET NX on an existing key)
	Int   int64   // an integer reply
	Str   string  // a status or bulk-string reply
	Elems []Reply // an array reply's elements (a script's table, a pub/sub message)
	// Kind is the reply's RESP type byte as it came ('+', '-', ':', '$',
	// '*'); 0 for a failure made by the engine. Whether a reply has the
	// shape its command answers with (shape.go) depends on it: "+OK",
	// ":0" and "$0" all leave Int 0.
	Kind byte
}

// RedisError is an error reply. Its text is the reply's, so it starts with
// the Redis error code ("NOSCRIPT ...", "WRONGTYPE ...").
type RedisError string

func (e RedisError) Error() string { return string(e) }

// errProtocol marks a reply this reader does not understand; the connection
// that sent it is closed.
var errProtocol = errors.New("redis protocol error")

// maxReply bounds the bytes a node's connection holds of a reply still
// arriving: the largest bulk string with its header. A node that sends more
// without completing a reply (an endless array) is failed. The other bounds
// (maxReplyLine, maxBulk, maxDepth, maxElems) are the spec's reply_limits,
// in limits_gen.go.
const maxReply = maxBulk + maxReplyLine

// replyScan finds where the reply at the front of a node's buffer ends
// before it is decoded, remembering how far it got: a reply that arrives in
// many pieces is scanned once, not once per piece as decoding it from the
// start each time would (quadratic in its size), and nothing is allocated
// for it until it is whole. It checks the bounds (maxBulk, maxDepth,
// maxElems, maxReplyLine) as it goes.
type replyScan struct {
	conn  ConnID  // the connection whose buffer it scans
	off   int     // bytes of the reply's whole values scanned so far
	left  []int64 // elements still due in each array open at off, outermost first
	elems int64   // values counted so far
}

func (s *replyScan) reset(c ConnID) {
	s.conn, s.off, s.left, s.elems = c, 0, s.left[:0], 0
}

// scan returns the length of the whole reply at the front of b, 0 when b
// holds only part of it (s then remembers how far it got in b, which must
// keep those bytes at its front), or an error when b cannot be a reply.
// Once it returned a length, s starts again at the next reply.
func (s *replyScan) scan(b []byte) (int, error) {
	for {
		if s.off > 0 && len(s.left) == 0 {
			n := s.off
			s.reset(s.conn)
			return n, nil
		}
		line, n, err := replyLine(b[s.off:])
		if n == 0 || err != nil {
			return 0, err
		}
		s.elems++
		if s.elems > maxElems {
			return 0, protocolError("a reply of more than " + strconv.Itoa(maxElems) + " values")
		}
		size := n
		switch line[0] {
		case '+', '-':
		case ':', '$', '*':
			v, err := parseInt(line[1:])
			if err != nil {
				return 0, err
			}
			switch {
			case line[0] == '$' && v > maxBulk:
				return 0, protocolError("bulk string of " + strconv.FormatInt(v, 10) + " bytes")
			case line[0] == '$' && v >= 0:
				size += int(v) + 2
				if s.off+size > len(b) {
					return 0, nil
				}
				if end := s.off + size; b[end-2] != '\r' || b[end-1] != '\n' {
					return 0, protocolError("bulk string not followed by CRLF")
				}
			case line[0] == '*' && v >= 0 && len(s.left) >= maxDepth:
				return 0, protocolError("arrays nested too deep")
			case line[0] == '*' && v > 0:
				s.off += n
				s.left = append(s.left, v)
				continue
			}
		default:
			return 0, protocolError("unexpected reply type " + strconv.QuoteRune(rune(line[0])))
		}
		s.off += size
		// A whole value: it may complete the arrays around it.
		for k := len(s.left) - 1; k >= 0; k-- {
			s.left[k]--
			if s.left[k] > 0 {
				break
			}
			s.left = s.left[:k]
		}
	}
}

// AppendCommand appends args as one RESP2 command (an array of bulk
// strings) to buf.
func AppendCommand(buf []byte, args ...string) []byte {
	buf = append(buf, '*')
	buf = appendLen(buf, len(args))
	buf = append(buf, '\r', '\n')
	for _, arg := range args {
		buf = append(buf, '$')
		buf = appendLen(buf, len(arg))
		buf = append(buf, '\r', '\n')
		buf = append(buf, arg...)
		buf = append(buf, '\r', '\n')
	}
	return buf
}

// appendLen appends n ≥ 0 in decimal, as strconv.AppendInt does. The
// lengths and counts of the engine's commands mostly have one or two
// digits, written here without strconv's calls, which cost in liblock.wasm
// (several per command).
func appendLen(b []byte, n int) []byte {
	switch {
	case n < 10:
		return append(b, byte('0'+n))
	case n < 100:
		return append(b, byte('0'+n/10), byte('0'+n%10))
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// parseReply reads one whole reply from the front of b. It returns the
// reply and how many bytes it took, 0 when b holds only part of a reply,
// or an error when b cannot be a reply (the connection is out of step).
func parseReply(b []byte) (Reply, int, error) {
	return parseValue(b, 0)
}

func parseValue(b []byte, depth int) (Reply, int, error) {
	line, n, err := replyLine(b)
	if n == 0 || err != nil {
		return Reply{}, 0, err
	}
	switch line[0] {
	case '+':
		return Reply{Str: statusText(line[1:]), Kind: '+'}, n, nil
	case '-':
		return Reply{Err: RedisError(line[1:]), Kind: '-'}, n, nil
	case ':':
		v, err := parseInt(line[1:])
		if err != nil {
			return Reply{}, 0, err
		}
		return Reply{Int: v, Kind: ':'}, n, nil
	case '$':
		size, err := parseInt(line[1:])
		switch {
		case err != nil:
			return Reply{}, 0, err
		case size < 0:
			return Reply{Nil: true, Kind: '$'}, n, nil
		case size > maxBulk:
			return Reply{}, 0, protocolError("bulk string of " + strconv.FormatInt(size, 10) + " bytes")
		}
		end := n + int(size) + 2
		if len(b) < end {
			return Reply{}, 0, nil
		}
		if b[end-2] != '\r' || b[end-1] != '\n' {
			return Reply{}, 0, protocolError("bulk string not followed by CRLF")
		}
		return Reply{Str: string(b[n : end-2]), Kind: '$'}, end, nil
	case '*':
		count, err := parseInt(line[1:])
		if err != nil {
			return Reply{}, 0, err
		}
		if count < 0 {
			return Reply{Nil: true, Kind: '*'}, n, nil
		}
		if depth >= maxDepth {
			return Reply{}, 0, protocolError("arrays nested too deep")
		}
		off := n
		elems := make([]Reply, 0, min(count, 16))
		for range count {
			r, k, err := parseValue(b[off:], depth+1)
			if k == 0 || err != nil {
				return Reply{}, 0, err
			}
			elems = append(elems, r)
			off += k
		}
		return Reply{Elems: elems, Kind: '*'}, off, nil
	}
	return Reply{}, 0, protocolError("unexpected reply type " + strconv.QuoteRune(rune(line[0])))
}

// statusText is a status reply's text. The engine's usual ones are
// constants: converting them would cost an allocation per reply.
func statusText(b []byte) string {
	switch string(b) { // compared without a conversion
	case "OK":
		return "OK"
	case "PONG":
		return "PONG"
	}
	return string(b)
}

// replyLine returns the header line at the front of b without its CRLF and
// the bytes it takes with the CRLF; 0 when the line is not complete.
func replyLine(b []byte) ([]byte, int, error) {
	for i := 0; i < len(b); i++ {
		if b[i] == '\n' {
			if i < 2 || b[i-1] != '\r' {
				return nil, 0, protocolError("malformed reply line " + strconv.Quote(string(b[:i+1])))
			}
			return b[:i-1], i + 1, nil
		}
		if i >= maxReplyLine {
			return nil, 0, protocolError("reply line longer than " + strconv.Itoa(maxReplyLine) + " bytes")
		}
	}
	return nil, 0, nil
}

// parseInt parses a RESP integer without allocating.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, protocolError("bad integer " + strconv.Quote(string(b)))
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, protocolError("bad integer " + strconv.Quote(string(b)))
		}
		n = n*10 + int64(c-'0')
	}
	if n < 0 { // overflowed
		return 0, protocolError("integer out of range " + strconv.Quote(string(b)))
	}
	if neg {
		n = -n
	}
	return n, nil
}

func protocolError(detail string) error { return Wrap(errProtocol.Error(), errors.New(detail)) }

// Command kinds: the engine's few commands are encoded straight into the
// connection's buffer, without an argument slice per request.
const (
	cmdRaw     = iota // a handshake step, already written
	cmdSet            // SET key a1 NX PX px
	cmdEvalSHA        // EVALSHA sha numkeys key [key2] [a1 [a2]]
	cmdEval           // EVAL src numkeys key [key2] [a1 [a2]]: after NOSCRIPT
	cmdArgs           // args, as they are (rare commands: SUBSCRIBE, ...)
)

type command struct {
	kind   uint8
	nargs  uint8 // a script's arguments: a1, a2
	sc     *script
	key    string
	key2   string // a script's second key, if any
	a1, a2 string
	px     int64
	args   []string // cmdArgs: the command; a script: its arguments after a1, a2
	// multi: a script's keys then its arguments, the first nkeys of them
	// keys (a multi-resource lock's scripts, which take any number of
	// keys); key, key2, a1 and a2 are then unused.
	multi []string
	nkeys int
}

func (c *command) appendTo(b []byte) []byte {
	switch c.kind {
	case cmdArgs:
		return AppendCommand(b, c.args...)
	case cmdSet:
		b = append(b, "*6\r\n$3\r\nSET\r\n"...)
		b = appendBulk(b, c.key)
		b = appendBulk(b, c.a1)
		b = append(b, "$2\r\nNX\r\n$2\r\nPX\r\n"...)
		var num [20]byte
		return appendBulkBytes(b, strconv.AppendInt(num[:0], c.px, 10))
	case cmdEvalSHA, cmdEval:
		if c.multi != nil {
			return c.appendMulti(b)
		}
		keys := 1
		if c.key2 != "" {
			keys = 2
		}
		b = append(b, '*')
		b = appendLen(b, 3+keys+int(c.nargs)+len(c.args))
		b = append(b, '\r', '\n')
		if c.kind == cmdEvalSHA {
			b = append(b, "$7\r\nEVALSHA\r\n"...)
			b = appendBulk(b, c.sc.sha)
		} else {
			b = append(b, "$4\r\nEVAL\r\n"...)
			b = appendBulk(b, c.sc.src)
		}
		b = append(b, '$', '1', '\r', '\n', byte('0'+keys), '\r', '\n')
		b = appendBulk(b, c.key)
		if c.key2 != "" {
			b = appendBulk(b, c.key2)
		}
		if c.nargs > 0 {
			b = appendBulk(b, c.a1)
		}
		if c.nargs > 1 {
			b = appendBulk(b, c.a2)
		}
		for _, a := range c.args { // a semaphore script's further arguments
			b = appendBulk(b, a)
		}
	}
	return b
}

func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = appendLen(b, len(s))
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

func appendBulkBytes(b, s []byte) []byte {
	b = append(b, '$')
	b = appendLen(b, len(s))
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}
