package abi

import (
	"errors"
	"strconv"
	"unsafe"

	"github.com/liblock/liblock/core"
)

// The module's side of the exec host call: a msgpack writer and reader for
// exactly the messages of PROTOCOL.md (arrays, nil, integers, strings).
// Hosts use any msgpack library; the Go host uses this package too
// (hostside.go), and the tests check it against vmihailenco/msgpack/v5.

// Reply kinds in an exec response.
const (
	ReplyNil    = 0 // a nil reply (SET NX on an existing key)
	ReplyInt    = 1 // an integer reply
	ReplyString = 2 // a status or bulk-string reply
	ReplyError  = 3 // the node failed or answered an error; the text says what
)

// Request is one exec host call: every node's command for one step.
type Request struct {
	Client    uint64         // the client handle the commands belong to
	TimeoutMS int64          // each node's exchange must end within this
	Cmds      []core.Command // one per node; nil: send nothing to that node
}

// AppendRequest appends r as [client, timeout_ms, [cmd|nil, ...]].
//
// Every node usually gets the same command (the same slice for SET, equal
// strings for the scripts), so a command equal to the one before it is
// copied as encoded bytes instead of being encoded again.
func AppendRequest(b []byte, r Request) []byte {
	b = appendArrayLen(b, 3)
	b = appendUint(b, r.Client)
	b = appendUint(b, uint64(max(r.TimeoutMS, 0)))
	b = appendArrayLen(b, len(r.Cmds))
	var prev core.Command
	prevStart, prevEnd := 0, 0
	for _, cmd := range r.Cmds {
		if cmd == nil {
			b = append(b, 0xc0)
			continue
		}
		if prev != nil && sameCommand(cmd, prev) {
			b = append(b, b[prevStart:prevEnd]...)
			continue
		}
		prev, prevStart = cmd, len(b)
		b = appendArrayLen(b, len(cmd))
		for _, a := range cmd {
			if len(a) < 32 { // fixstr, inline: a call costs in Go-wasm
				b = append(append(b, 0xa0|byte(len(a))), a...)
			} else {
				b = appendString(b, a)
			}
		}
		prevEnd = len(b)
	}
	return b
}

// sameCommand reports whether a and b have equal arguments; arguments that
// share their bytes (the usual case) compare without reading them.
func sameCommand(a, b core.Command) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) || (unsafe.StringData(a[i]) != unsafe.StringData(b[i]) && a[i] != b[i]) {
			return false
		}
	}
	return true
}

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= 0xffff:
		return appendBE16(append(b, 0xdc), uint16(n))
	}
	return appendBE32(append(b, 0xdd), uint32(n))
}

func appendUint(b []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(b, byte(v))
	case v <= 0xff:
		return append(b, 0xcc, byte(v))
	case v <= 0xffff:
		return appendBE16(append(b, 0xcd), uint16(v))
	case v <= 0xffffffff:
		return appendBE32(append(b, 0xce), uint32(v))
	}
	return appendBE64(append(b, 0xcf), v)
}

func appendString(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = appendBE16(append(b, 0xda), uint16(n))
	default:
		b = appendBE32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

var errShort = errors.New("msgpack: unexpected end of data")

type mpReader struct {
	b []byte
	i int
}

func (r *mpReader) byte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

func (r *mpReader) take(n int) ([]byte, error) {
	if n < 0 || len(r.b)-r.i < n {
		return nil, errShort
	}
	s := r.b[r.i : r.i+n]
	r.i += n
	return s, nil
}

func (r *mpReader) uintN(n int) (uint64, error) {
	s, err := r.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range s {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// arrayLen reads an array header; -1 for nil.
func (r *mpReader) arrayLen() (int, error) {
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch {
	case c == 0xc0:
		return -1, nil
	case c&0xf0 == 0x90:
		return int(c & 0x0f), nil
	case c == 0xdc:
		v, err := r.uintN(2)
		return int(v), err
	case c == 0xdd:
		v, err := r.uintN(4)
		return int(v), err
	}
	return 0, errors.New("msgpack: want an array, got " + hexByte(c))
}

func (r *mpReader) int() (int64, error) {
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch {
	case c < 0x80:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c >= 0xcc && c <= 0xcf: // uint 8..64
		v, err := r.uintN(1 << (c - 0xcc))
		return int64(v), err
	case c >= 0xd0 && c <= 0xd3: // int 8..64
		n := 1 << (c - 0xd0)
		v, err := r.uintN(n)
		shift := 64 - 8*n
		return int64(v<<shift) >> shift, err
	}
	return 0, errors.New("msgpack: want an integer, got " + hexByte(c))
}

// str reads a str or bin.
func (r *mpReader) str() (string, error) {
	c, err := r.byte()
	if err != nil {
		return "", err
	}
	var n uint64
	switch {
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, err = r.uintN(1)
	case c == 0xda || c == 0xc5:
		n, err = r.uintN(2)
	case c == 0xdb || c == 0xc6:
		n, err = r.uintN(4)
	default:
		return "", errors.New("msgpack: want a string, got " + hexByte(c))
	}
	if err != nil {
		return "", err
	}
	s, err := r.take(int(n))
	return string(s), err
}

// ParseReplies reads an exec response for n nodes.
func ParseReplies(b []byte, n int) ([]core.Reply, error) {
	r := &mpReader{b: b}
	got, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	if got != n {
		return nil, errors.New("exec response: " + strconv.Itoa(got) + " replies for " + strconv.Itoa(n) + " nodes")
	}
	replies := make([]core.Reply, n)
	for i := range replies {
		// The replies of a lock that is free or held by us, in the smallest
		// encodings (any codec writes them so), skip the general reader.
		if rest := b[r.i:]; len(rest) >= 3 && rest[0] == 0x92 {
			switch {
			case rest[1] == ReplyString && len(rest) >= 5 && rest[2] == 0xa2 && rest[3] == 'O' && rest[4] == 'K':
				replies[i].Str = "OK"
				r.i += 5
				continue
			case rest[1] == ReplyInt && rest[2] < 0x80:
				replies[i].Int = int64(rest[2])
				r.i += 3
				continue
			case rest[1] == ReplyNil && rest[2] == 0xc0:
				replies[i].Nil = true
				r.i += 3
				continue
			}
		}
		k, err := r.arrayLen()
		if err != nil {
			return nil, err
		}
		if k < 0 {
			continue // no command was sent to this node
		}
		if k != 2 {
			return nil, errors.New("exec response: reply " + strconv.Itoa(i) + " is an array of " + strconv.Itoa(k) + ", want 2")
		}
		kind, err := r.int()
		if err != nil {
			return nil, err
		}
		switch kind {
		case ReplyNil:
			var c byte
			if c, err = r.byte(); err == nil && c != 0xc0 {
				err = errors.New("exec response: reply " + strconv.Itoa(i) + ": nil kind with value " + hexByte(c))
			}
			replies[i].Nil = true
		case ReplyInt:
			replies[i].Int, err = r.int()
		case ReplyString:
			replies[i].Str, err = r.str()
		case ReplyError:
			var msg string
			msg, err = r.str()
			replies[i].Err = errors.New(msg)
		default:
			err = errors.New("exec response: reply " + strconv.Itoa(i) + " has kind " + strconv.FormatInt(kind, 10))
		}
		if err != nil {
			return nil, err
		}
	}
	return replies, nil
}

// State is what lock_poll writes: 64 bytes, little-endian.
//
//	offset 0  int64     validity_ms  how long the lock is still certainly held; 0 when lost, released or expired
//	offset 8  int64     next_poll_ms when to call lock_poll again for this lock; -1: never (released or lost)
//	offset 16 uint32    flags        bit 0 lost, bit 1 released, bit 2 auto_extend
//	offset 20 uint32    token_len    length of the token (at most 40)
//	offset 24 [40]byte  token        the lock's token, token_len bytes of it
type State struct {
	ValidityMS int64
	NextPollMS int64
	Flags      uint32
	Token      string
}

// State flags.
const (
	FlagLost       = 1 << 0
	FlagReleased   = 1 << 1
	FlagAutoExtend = 1 << 2
)

// StateSize is the size of State on the wire; maxToken the token room.
const (
	StateSize = 64
	maxToken  = StateSize - 24
)

// PutState writes s in its wire layout into b (at least StateSize bytes).
func PutState(b []byte, s State) {
	PutLE64(b[0:], uint64(s.ValidityMS))
	PutLE64(b[8:], uint64(s.NextPollMS))
	PutLE32(b[16:], s.Flags)
	n := copy(b[24:StateSize], s.Token)
	PutLE32(b[20:], uint32(n))
}

// ReadState reads what PutState wrote.
func ReadState(b []byte) State {
	n := min(le32(b[20:]), maxToken)
	return State{
		ValidityMS: int64(le64(b[0:])),
		NextPollMS: int64(le64(b[8:])),
		Flags:      le32(b[16:]),
		Token:      string(b[24 : 24+n]),
	}
}

// hexByte writes c as fmt's "0x%02x" does, without fmt (module size).
func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{'0', 'x', digits[c>>4], digits[c&0x0f]})
}
