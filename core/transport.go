package core

import (
	"bufio"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/liblock/liblock/core/engine"
)

// Command is one Redis command, as the argument strings sent on the wire.
type Command []string

// Reply is one node's answer to one Command.
type Reply = engine.Reply

// Transport carries commands to N independent Redis nodes. Clients made by
// New and NewFromClients do not use it: the engine speaks the wire itself.
// It remains for NewWithTransport, to run liblock over a client of your own.
type Transport interface {
	// Nodes returns each node's address without credentials, in node order.
	// Its length is the node count and never changes.
	Nodes() []string
	// Exec sends cmds[i] to node i, for every i where cmds[i] is non-nil,
	// all at once, and returns one Reply per node (the zero Reply for
	// skipped nodes). Each node's exchange must end within the transport's
	// node timeout, or sooner when ctx ends; a node that does not answer in
	// time gets a Reply with Err set. Exec must be safe for concurrent use.
	Exec(ctx context.Context, cmds []Command) []Reply
	// Close releases the transport's connections.
	Close() error
}

// NewWithTransport returns a Client that runs over t: the engine's commands
// are decoded and handed to t.Exec one at a time per node. cfg.Nodes is
// ignored (t knows its nodes).
func NewWithTransport(t Transport, cfg Config) (*Client, error) {
	if t == nil {
		return nil, invalidArg("transport", "must not be nil")
	}
	names := t.Nodes()
	nodes := make([]engine.Node, len(names))
	for i, name := range names {
		nodes[i] = engine.Node{Network: "tcp", Addr: name}
	}
	eng, err := engine.New(cfg.engineConfig(nodes), engine.SystemEnv())
	if err != nil {
		return nil, err
	}
	timeout := cfg.nodeTimeout()
	dial := func(_ context.Context, node int, _ *engine.Dial) (net.Conn, error) {
		client, server := net.Pipe()
		go serveTransport(server, t, node, len(names), timeout)
		return client, nil
	}
	return newClient(eng, dial, timeout, t.Close), nil
}

// serveTransport answers the engine's RESP commands on one pipe with
// t.Exec, in order, until the pipe closes.
func serveTransport(c net.Conn, t Transport, node, n int, timeout time.Duration) {
	defer c.Close()
	r := bufio.NewReader(c)
	var out []byte
	for {
		cmd, err := readCommand(r)
		if err != nil {
			return
		}
		var reply Reply
		if len(cmd) == 1 && strings.EqualFold(cmd[0], "PING") {
			reply.Str = "PONG"
		} else {
			cmds := make([]Command, n)
			cmds[node] = cmd
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			reply = t.Exec(ctx, cmds)[node]
			cancel()
		}
		out = appendReply(out[:0], reply)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

func readCommand(r *bufio.Reader) (Command, error) {
	n, err := readLen(r, '*')
	if err != nil {
		return nil, err
	}
	cmd := make(Command, n)
	for i := range cmd {
		size, err := readLen(r, '$')
		if err != nil {
			return nil, err
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		cmd[i] = string(b[:size])
	}
	return cmd, nil
}

func readLen(r *bufio.Reader, kind byte) (int, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 3 || line[0] != kind {
		return 0, io.ErrUnexpectedEOF
	}
	return strconv.Atoi(strings.TrimRight(line[1:], "\r\n"))
}

func appendReply(b []byte, r Reply) []byte {
	switch {
	case r.Err != nil:
		msg := strings.NewReplacer("\r", " ", "\n", " ").Replace(r.Err.Error())
		return append(append(append(b, '-'), msg...), '\r', '\n')
	case r.Nil:
		return append(b, "$-1\r\n"...)
	case r.Str != "":
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(r.Str)), 10)
		b = append(b, '\r', '\n')
		b = append(b, r.Str...)
		return append(b, '\r', '\n')
	}
	b = append(b, ':')
	b = strconv.AppendInt(b, r.Int, 10)
	return append(b, '\r', '\n')
}
