package abi

import (
	"errors"
	"strconv"

	"github.com/liblock/liblock/core"
)

// The host's side of the exec call, for the Go host (wasm/host): it reads
// the module's request and writes the response with this code instead of a
// general msgpack library, into buffers it reuses, because that runs twice
// per acquire+release pair.

// ParseRequest reads an exec request: [client, timeout_ms, [cmd|nil, ...]]
// with at most core.MaxNodes commands.
func ParseRequest(b []byte) (Request, error) {
	var req Request
	r := &mpReader{b: b}
	n, err := r.arrayLen()
	if err != nil {
		return req, err
	}
	if n != 3 {
		return req, errors.New("exec request: array of " + strconv.Itoa(n) + ", want 3")
	}
	client, err := r.int()
	if err != nil {
		return req, err
	}
	if req.TimeoutMS, err = r.int(); err != nil {
		return req, err
	}
	req.Client = uint64(client)
	nodes, err := r.arrayLen()
	if err != nil {
		return req, err
	}
	if nodes < 0 || nodes > core.MaxNodes {
		return req, errors.New("exec request: " + strconv.Itoa(nodes) + " nodes")
	}
	req.Cmds = make([]core.Command, nodes)
	var prev core.Command
	prevStart, prevEnd := 0, 0
	for i := range req.Cmds {
		// The module repeats the same command for every node: an encoding
		// identical to the previous command's shares its strings.
		start := r.i
		if n := prevEnd - prevStart; prev != nil && start+n <= len(b) && string(b[start:start+n]) == string(b[prevStart:prevEnd]) {
			req.Cmds[i] = prev
			r.i = start + n
			continue
		}
		k, err := r.arrayLen()
		if err != nil {
			return req, err
		}
		if k < 0 {
			continue
		}
		cmd := make(core.Command, k)
		for j := range cmd {
			if cmd[j], err = r.str(); err != nil {
				return req, err
			}
		}
		req.Cmds[i] = cmd
		prev, prevStart, prevEnd = cmd, start, r.i
	}
	return req, nil
}

// AppendReplies appends the exec response for cmds: nil where no command
// was sent, else [kind, value] of the node's reply.
func AppendReplies(b []byte, cmds []core.Command, replies []core.Reply) []byte {
	b = appendArrayLen(b, len(replies))
	for i, r := range replies {
		if i >= len(cmds) || cmds[i] == nil {
			b = append(b, 0xc0)
			continue
		}
		b = append(b, 0x92)
		switch {
		case r.Err != nil:
			b = appendString(append(b, ReplyError), r.Err.Error())
		case r.Nil:
			b = append(b, ReplyNil, 0xc0)
		case r.Str != "":
			b = appendString(append(b, ReplyString), r.Str)
		default:
			b = appendInt(append(b, ReplyInt), r.Int)
		}
	}
	return b
}

func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(int8(v)))
	case v >= -128:
		return append(b, 0xd0, byte(int8(v)))
	case v >= -32768:
		return appendBE16(append(b, 0xd1), uint16(v))
	case v >= -1<<31:
		return appendBE32(append(b, 0xd2), uint32(v))
	}
	return appendBE64(append(b, 0xd3), uint64(v))
}
