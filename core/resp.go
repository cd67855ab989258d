//go:build !wasip1

package core

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The few bits of RESP2 the core needs: commands go out as arrays of bulk
// strings; replies come back as status, error, integer, bulk string or
// (never for our commands, but read so that a connection stays in step)
// array.

// redisError is an error reply. Its text is the reply's, so it starts with
// the Redis error code ("NOSCRIPT ...", "WRONGTYPE ...").
type redisError string

func (e redisError) Error() string { return string(e) }

// errProtocol marks a reply this reader does not understand; the connection
// that sent it is closed.
var errProtocol = errors.New("redis protocol error")

// maxReplyLine bounds a reply's header line (status, error, lengths); Redis
// error texts are short.
const maxReplyLine = 64 << 10

// maxBulk bounds a bulk-string reply; ours are tokens and script sums.
const maxBulk = 64 << 20

// appendCommand appends cmd in RESP2 form to buf.
func appendCommand(buf []byte, cmd Command) []byte {
	buf = append(buf, '*')
	buf = strconv.AppendInt(buf, int64(len(cmd)), 10)
	buf = append(buf, '\r', '\n')
	for _, arg := range cmd {
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(len(arg)), 10)
		buf = append(buf, '\r', '\n')
		buf = append(buf, arg...)
		buf = append(buf, '\r', '\n')
	}
	return buf
}

// readReply reads one whole reply. A Redis error reply comes back as
// Reply.Err with a nil error; the error result is an I/O or protocol
// failure, after which the connection is out of step and must be closed.
func readReply(r *bufio.Reader) (Reply, error) {
	line, err := readLine(r)
	if err != nil {
		return Reply{}, err
	}
	switch line[0] {
	case '+':
		return Reply{Str: string(line[1:])}, nil
	case '-':
		return Reply{Err: redisError(line[1:])}, nil
	case ':':
		n, err := parseInt(line[1:])
		if err != nil {
			return Reply{}, err
		}
		return Reply{Int: n}, nil
	case '$':
		n, err := parseInt(line[1:])
		switch {
		case err != nil:
			return Reply{}, err
		case n < 0:
			return Reply{Nil: true}, nil
		case n > maxBulk:
			return Reply{}, fmt.Errorf("%w: bulk string of %d bytes", errProtocol, n)
		}
		s, err := readBulk(r, int(n))
		if err != nil {
			return Reply{}, err
		}
		return Reply{Str: s}, nil
	case '*':
		n, err := parseInt(line[1:])
		if err != nil {
			return Reply{}, err
		}
		if n < 0 {
			return Reply{Nil: true}, nil
		}
		// Not a reply to any command the core sends; read it whole and
		// render it as go-redis's transport did (fmt.Sprint of the values).
		items := make([]any, 0, min(n, 64))
		for range n {
			item, err := readReply(r)
			if err != nil {
				return Reply{}, err
			}
			switch {
			case item.Err != nil:
				items = append(items, item.Err)
			case item.Nil:
				items = append(items, nil)
			case item.Str != "":
				items = append(items, item.Str)
			default:
				items = append(items, item.Int)
			}
		}
		return Reply{Str: fmt.Sprint(items)}, nil
	}
	return Reply{}, fmt.Errorf("%w: unexpected reply type %q", errProtocol, line[0])
}

// readLine returns a reply's header line without its CRLF. The slice is
// only valid until the next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A long error text: collect it.
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull && len(long) <= maxReplyLine {
			line, err = r.ReadSlice('\n')
			long = append(long, line...)
		}
		if err == bufio.ErrBufferFull {
			return nil, fmt.Errorf("%w: reply line longer than %d bytes", errProtocol, maxReplyLine)
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: malformed reply line %q", errProtocol, line)
	}
	return line[:len(line)-2], nil
}

// readBulk reads n bytes and the CRLF after them.
func readBulk(r *bufio.Reader, n int) (string, error) {
	if n+2 <= r.Size() {
		b, err := r.Peek(n + 2)
		if err != nil {
			return "", err
		}
		if b[n] != '\r' || b[n+1] != '\n' {
			return "", fmt.Errorf("%w: bulk string not followed by CRLF", errProtocol)
		}
		s := string(b[:n])
		_, _ = r.Discard(n + 2)
		return s, nil
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	if b[n] != '\r' || b[n+1] != '\n' {
		return "", fmt.Errorf("%w: bulk string not followed by CRLF", errProtocol)
	}
	return string(b[:n]), nil
}

// parseInt parses a RESP integer without allocating.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, fmt.Errorf("%w: bad integer %q", errProtocol, b)
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: bad integer %q", errProtocol, b)
		}
		n = n*10 + int64(c-'0')
	}
	if n < 0 { // overflowed
		return 0, fmt.Errorf("%w: integer out of range %q", errProtocol, b)
	}
	if neg {
		n = -n
	}
	return n, nil
}
