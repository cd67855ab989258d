package abi

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/vmihailenco/msgpack/v5"
)

func TestParseConfig(t *testing.T) {
	good := `{"nodes":["redis://127.0.0.1:1","unix:///tmp/r.sock"],"node_timeout_ms":75,"drift_factor":0.02,"key_prefix":"app:\u00e9\ud83d\ude00"}`
	cfg, err := ParseConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 2 || cfg.NodeTimeout != 75*time.Millisecond || *cfg.DriftFactor != 0.02 || cfg.KeyPrefix != "app:é😀" {
		t.Fatalf("parsed %+v", cfg)
	}
	for _, tc := range []struct{ in, arg string }{
		{``, "config"},
		{`[]`, "config"},
		{`{"nodes":["redis://h:1"]} x`, "config"},
		{`{"Nodes":["redis://h:1"]}`, "config"},
		{`{"nodes":["redis://h:1"],"nodes":["redis://h:1"]}`, "config"},
		{`{"nodes":["redis://h:1"],"extra":1}`, "config"},
		{`{"nodes":null}`, "nodes"},
		{`{}`, "nodes"},
		{`{"nodes":"redis://h:1"}`, "nodes"},
		{`{"nodes":[1]}`, "nodes[0]"},
		{`{"nodes":["http://h:1"]}`, "nodes[0]"},
		{`{"nodes":["redis://h:1/x"]}`, "nodes[0]"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":1.5}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":-1}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":0}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"node_timeout_ms":3600000}`, "node_timeout_ms"},
		{`{"nodes":["redis://h:1"],"drift_factor":"0.1"}`, "drift_factor"},
		{`{"nodes":["redis://h:1"],"drift_factor":0.5}`, "drift_factor"},
		{`{"nodes":["redis://h:1"],"key_prefix":1}`, "key_prefix"},
		{`{"nodes":["redis://h:1"],"key_prefix":"a` + "\x01" + `"}`, "config"},
		{`{"nodes":["redis://h:1"]`, "config"},
		{"{\"nodes\":[\"redis://h:1\"],\"key_prefix\":\"\xff\"}", "config"},
	} {
		_, err := ParseConfig(tc.in)
		var ae *core.ArgumentError
		if !errors.As(err, &ae) || ae.Arg != tc.arg {
			t.Errorf("%s: got %v, want an error for %q", tc.in, err, tc.arg)
		}
	}
}

func TestParseOptions(t *testing.T) {
	o, err := ParseOptions(`{"wait_ms":250,"auto_extend":true}`, false)
	if err != nil || o.Wait != 250*time.Millisecond || !o.AutoExtend {
		t.Fatalf("got %+v, %v", o, err)
	}
	if o, err := ParseOptions("", true); err != nil || o != (AcquireOptions{}) {
		t.Fatalf("NULL options: %+v, %v", o, err)
	}
	for _, in := range []string{``, `{"wait":1}`, `{"wait_ms":-1}`, `{"auto_extend":1}`, `{"wait_ms":1e3}`} {
		if _, err := ParseOptions(in, false); !errors.Is(err, core.ErrInvalidArgument) {
			t.Errorf("%s: got %v", in, err)
		}
	}
}

// The hand-written JSON writer agrees with encoding/json.
func TestEncodeErrorIsJSON(t *testing.T) {
	err := &core.UnavailableError{Op: "acquire", Reason: "3 of 5 \"failed\"\n", Nodes: []*core.NodeError{
		{Node: 0, Addr: "127.0.0.1:1", Err: errors.New("dial tcp: refused \u2028 \x01")},
	}}
	var rec ErrorRecord
	if jerr := json.Unmarshal(EncodeError(err), &rec); jerr != nil {
		t.Fatalf("%v: %s", jerr, EncodeError(err))
	}
	if !reflect.DeepEqual(rec, RecordOf(err)) {
		t.Fatalf("got %+v, want %+v", rec, RecordOf(err))
	}
	var in Info
	want := Info{Resource: "r\"\\", Key: "p:r", Token: "T", ValidityMS: 5, TTLMS: 9, AutoExtend: true}
	if jerr := json.Unmarshal(EncodeInfo(want), &in); jerr != nil || in != want {
		t.Fatalf("info %+v, %v", in, jerr)
	}
}

// The module's msgpack subset and vmihailenco/msgpack (the Go host's)
// understand each other.
func TestMsgpackInterop(t *testing.T) {
	long := string(bytes.Repeat([]byte("x"), 70000))
	req := Request{Client: 1 << 40, TimeoutMS: 300, Cmds: []core.Command{
		{"SET", "k", "tok", "NX", "PX", "10000"}, nil, {"EVAL", long, "1", "k"},
	}}
	var got []any
	if err := msgpack.Unmarshal(AppendRequest(nil, req), &got); err != nil {
		t.Fatal(err)
	}
	if got[0].(uint64) != 1<<40 || len(got[2].([]any)) != 3 || got[2].([]any)[1] != nil || got[2].([]any)[2].([]any)[1] != long {
		t.Fatalf("decoded %v", got[:2])
	}
	// A response as a host would write it, with integers of every size.
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	ints := []int64{0, 1, -1, 127, 128, -33, 70000, -70000, 1 << 40, -(1 << 40)}
	_ = e.EncodeArrayLen(len(ints) + 4)
	for _, v := range ints {
		_ = e.Encode([]any{ReplyInt, v})
	}
	_ = e.Encode([]any{ReplyNil, nil})
	_ = e.Encode([]any{ReplyString, "OK"})
	_ = e.Encode([]any{ReplyError, "NOSCRIPT No matching script"})
	_ = e.EncodeNil()
	replies, err := ParseReplies(buf.Bytes(), len(ints)+4)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range ints {
		if replies[i].Int != v {
			t.Errorf("int %d: got %d", v, replies[i].Int)
		}
	}
	n := len(ints)
	if !replies[n].Nil || replies[n+1].Str != "OK" || replies[n+2].Err == nil || replies[n+2].Err.Error() != "NOSCRIPT No matching script" || replies[n+3] != (core.Reply{}) {
		t.Fatalf("replies %+v", replies[n:])
	}
	if _, err := ParseReplies(buf.Bytes()[:buf.Len()-3], len(ints)+4); err == nil {
		t.Fatal("truncated response accepted")
	}
}

func TestState(t *testing.T) {
	b := make([]byte, StateSize)
	s := State{ValidityMS: 9876, NextPollMS: -1, Flags: FlagLost | FlagAutoExtend, Token: "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
	PutState(b, s)
	if ReadState(b) != s {
		t.Fatal(ReadState(b))
	}
}

// AppendRequest copies a command equal to the one before it as bytes; the
// message must decode the same as one encoded command by command.
func TestAppendRequestRepeatedCommands(t *testing.T) {
	set := core.Command{"SET", "k", "tok", "NX", "PX", "10000"}
	key, tok := "k", "tok"
	eval := func() core.Command { return append(core.Command{"EVALSHA", "sha", "1", key}, tok) }
	cases := [][]core.Command{
		{set, set, set, nil, set},
		{eval(), eval(), nil, eval()},
		{eval(), {"EVALSHA", "sha", "1", "k", "other"}, eval(), {"EVALSHA", "sha", "1", "k"}, {"EVALSHA", "shb", "1", "k", "tok"}},
		{nil, nil},
		{},
	}
	for _, cmds := range cases {
		var got []any
		if err := msgpack.Unmarshal(AppendRequest([]byte("junk")[:0], Request{Client: 7, TimeoutMS: 50, Cmds: cmds}), &got); err != nil {
			t.Fatal(err)
		}
		nodes := got[2].([]any)
		if len(nodes) != len(cmds) {
			t.Fatalf("%d nodes, want %d", len(nodes), len(cmds))
		}
		for i, c := range cmds {
			if c == nil {
				if nodes[i] != nil {
					t.Fatalf("node %d: %v, want nil", i, nodes[i])
				}
				continue
			}
			args := nodes[i].([]any)
			if len(args) != len(c) {
				t.Fatalf("node %d: %v, want %v", i, args, c)
			}
			for j := range c {
				if args[j] != c[j] {
					t.Fatalf("node %d: %v, want %v", i, args, c)
				}
			}
		}
	}
}

// ParseReplies's fast paths for the common replies, and what only looks
// like them.
func TestParseRepliesFastPaths(t *testing.T) {
	b := []byte{0x96,
		0x92, 0x02, 0xa2, 'O', 'K', // "OK"
		0x92, 0x01, 0x01, // 1
		0x92, 0x01, 0x00, // 0
		0x92, 0x00, 0xc0, // nil
		0x92, 0x02, 0xa3, 'O', 'K', 'S', // "OKS": not the fast path
		0x92, 0x01, 0xcc, 0xc8, // 200
	}
	replies, err := ParseReplies(b, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := []core.Reply{{Str: "OK"}, {Int: 1}, {}, {Nil: true}, {Str: "OKS"}, {Int: 200}}
	if !reflect.DeepEqual(replies, want) {
		t.Fatalf("got %+v, want %+v", replies, want)
	}
	for _, bad := range [][]byte{
		{0x91, 0x92, 0x02, 0xa2, 'O'},
		{0x91, 0x92, 0x01},
		{0x91, 0x92, 0x00},
		{0x91, 0x92, 0x00, 0x01},
	} {
		if r, err := ParseReplies(bad, 1); err == nil {
			t.Errorf("% x accepted: %+v", bad, r)
		}
	}
}

// ParseRequest reads what AppendRequest writes, and a request as another
// codec writes it; AppendReplies writes what ParseReplies and
// vmihailenco/msgpack read.
func TestHostSideCodec(t *testing.T) {
	long := string(bytes.Repeat([]byte("y"), 300))
	set := core.Command{"SET", "k", "tok", "NX", "PX", "10000"}
	for _, cmds := range [][]core.Command{
		{set, nil, set, set},
		{{"EVALSHA", "s", "1", "k", "t"}, {"EVALSHA", "s", "1", "k", "u"}, {"EVAL", long, "1", "k"}, {"EVAL", long, "1", "k"}},
		{nil},
		{},
	} {
		in := Request{Client: 1 << 40, TimeoutMS: 70000, Cmds: cmds}
		got, err := ParseRequest(AppendRequest(nil, in))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, in) && !(len(cmds) == 0 && len(got.Cmds) == 0) {
			t.Fatalf("got %+v, want %+v", got, in)
		}
		// The same through a general codec (fixed-size integers).
		other, err := msgpack.Marshal([]any{uint64(1 << 40), int64(70000), cmds})
		if err != nil {
			t.Fatal(err)
		}
		if got, err = ParseRequest(other); err != nil || got.Client != 1<<40 || got.TimeoutMS != 70000 || len(got.Cmds) != len(cmds) {
			t.Fatalf("general codec: %+v, %v", got, err)
		}
	}
	for _, bad := range [][]byte{
		{0x92, 0x01, 0x01},
		{0x93, 0x01, 0x01},
		{0x93, 0x01, 0x01, 0xc0},
		{0x93, 0x01, 0x01, 0x91, 0x91, 0x01},
		{0x93, 0x01, 0x01, 0x92, 0x91, 0xa1, 'x'},
		append([]byte{0x93, 0x01, 0x01, 0xdc, 0x00, 65}, bytes.Repeat([]byte{0xc0}, 65)...),
	} {
		if r, err := ParseRequest(bad); err == nil {
			t.Errorf("% x accepted: %+v", bad, r)
		}
	}

	cmds := []core.Command{set, nil, set, set, set, set, set, set, set, set}
	replies := []core.Reply{{Str: "OK"}, {}, {Nil: true}, {Int: 1}, {Int: -1}, {Int: -100}, {Int: -40000}, {Int: -3e9}, {Int: 1 << 40}, {Err: errors.New("NOSCRIPT x")}}
	b := AppendReplies(nil, cmds, replies)
	back, err := ParseReplies(b, len(replies))
	if err != nil {
		t.Fatal(err)
	}
	if back[9].Err == nil || back[9].Err.Error() != "NOSCRIPT x" {
		t.Fatalf("error reply %+v", back[9])
	}
	back[9].Err, replies[9].Err = nil, nil
	if !reflect.DeepEqual(back, replies) {
		t.Fatalf("got %+v, want %+v", back, replies)
	}
	var general []any
	if err := msgpack.Unmarshal(b, &general); err != nil || len(general) != len(replies) || general[1] != nil {
		t.Fatalf("general codec: %v, %v", general, err)
	}
}
