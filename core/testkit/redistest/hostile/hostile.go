package hostile

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Behavior is what the node answers after the handshake.
type Behavior string

const (
	// Garbage: bytes that are no RESP at all (an HTTP error page).
	Garbage Behavior = "garbage"
	// WrongType: a well-formed reply of a type no lock command answers
	// with (an array of a bulk string and an integer).
	WrongType Behavior = "wrongtype"
	// EndlessBulk: the header of a 2 GiB bulk string ($2147483647), then
	// bytes for as long as the connection lasts.
	EndlessBulk Behavior = "endlessbulk"
	// MaxBulk: the header of a bulk string of exactly the decoder's bound
	// (64 MiB), then bytes for as long as the connection lasts, never the
	// end: the decoder holds it until the node timeout.
	MaxBulk Behavior = "maxbulk"
	// DeepNesting: an array nested 1000 deep.
	DeepNesting Behavior = "deepnesting"
	// EndlessArray: an array of 2^31-1 integers, sent for as long as the
	// connection lasts.
	EndlessArray Behavior = "endlessarray"
	// Silent: nothing, ever (the connection stays open).
	Silent Behavior = "silent"
	// CloseMidReply: the first half of a bulk string reply, then the
	// connection is closed.
	CloseMidReply Behavior = "closemidreply"
)

// Behaviors lists every behaviour.
var Behaviors = []Behavior{Garbage, WrongType, EndlessBulk, MaxBulk, DeepNesting, EndlessArray, Silent, CloseMidReply}

// MaxBulkSize is the engine's bound on a bulk string (maxBulk in
// core/engine/resp.go).
const MaxBulkSize = 64 << 20

// Server is a hostile node listening on a loopback port.
type Server struct {
	b      Behavior
	ln     net.Listener
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	// Hostile counts the commands answered with the misbehaviour, and
	// Sent the bytes written after a handshake.
	Hostile, Sent atomic.Int64
}

// Start listens on a free loopback port and serves b until Close.
func Start(b Behavior) (*Server, error) {
	ok := false
	for _, x := range Behaviors {
		ok = ok || x == b
	}
	if !ok {
		return nil, errors.New("hostile: unknown behaviour " + strconv.Quote(string(b)))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{b: b, ln: ln, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Conns is how many connections are open now.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Close stops listening, closes every connection and waits for the
// server's goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

// serve answers the handshake's commands as Redis does and every other
// command with the behaviour.
func (s *Server) serve(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		var reply string
		switch strings.ToUpper(args[0]) {
		case "PING":
			reply = "+PONG\r\n"
		case "INFO": // no run_id: the engine's identity check has nothing to compare
			reply = "$10\r\n# Server\r\n\r\n"
		case "AUTH", "SELECT", "CLIENT":
			reply = "+OK\r\n"
		case "ROLE":
			reply = "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"
		}
		if reply != "" {
			if _, err := io.WriteString(c, reply); err != nil {
				return
			}
			continue
		}
		s.Hostile.Add(1)
		if !s.misbehave(c) {
			return
		}
	}
}

// misbehave answers one command; false ends the connection.
func (s *Server) misbehave(c net.Conn) bool {
	write := func(b string) bool {
		n, err := io.WriteString(c, b)
		s.Sent.Add(int64(n))
		return err == nil
	}
	// endless writes chunk until the client closes the connection.
	endless := func(chunk string) bool {
		big := strings.Repeat(chunk, (64<<10)/len(chunk))
		for write(big) {
		}
		return false
	}
	switch s.b {
	case Garbage:
		return write("HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>\x00\xff</html>\r\n")
	case WrongType:
		return write("*2\r\n$3\r\nfoo\r\n:1\r\n")
	case EndlessBulk:
		return write("$2147483647\r\n") && endless("x")
	case MaxBulk:
		return write("$"+strconv.Itoa(MaxBulkSize)+"\r\n") && endless("x")
	case DeepNesting:
		return write(strings.Repeat("*1\r\n", 1000) + ":1\r\n")
	case EndlessArray:
		return write("*2147483647\r\n") && endless(":1\r\n")
	case Silent:
		return true
	case CloseMidReply:
		write("$10\r\nhello")
		return false
	}
	return false
}

// readCommand reads one RESP command (an array of bulk strings).
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, errors.New("not a command: " + strconv.Quote(line))
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || n < 1 || n > 1<<20 {
		return nil, errors.New("bad command length " + strconv.Quote(line))
	}
	args := make([]string, n)
	for i := range args {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || size < 0 || size > 512<<20 {
			return nil, errors.New("bad argument length " + strconv.Quote(line))
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}
