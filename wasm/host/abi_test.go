package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core/redistest"
	"github.com/liblock/liblock/wasm/internal/abi"
	"github.com/tetratelabs/wazero/api"
)

// rawClient supplies the host's node connections to rawCall.
var rawClient = &Client{closing: make(chan struct{})}

// rawCall calls an export on in with the given arguments and returns the
// status and, when it failed, the error record.
func rawCall(t *testing.T, in *instance, name string, args ...uint64) (int32, abi.ErrorRecord) {
	t.Helper()
	st := make([]uint64, max(len(args), 1))
	copy(st, args)
	if err := in.mod.ExportedFunction(name).CallWithStack(withState(context.Background(), &callState{client: rawClient, inst: in}), st); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	status := api.DecodeI32(st[0])
	var rec abi.ErrorRecord
	if status != abi.OK {
		if b := in.takeBuf(offErr); b != nil {
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatalf("%s: error record %q: %v", name, b, err)
			}
		}
	}
	return status, rec
}

// TestRawABI drives the exports as PROTOCOL.md describes them, without the
// Go API: statuses, error records, handles that are never reused.
func TestRawABI(t *testing.T) {
	m := loadTestModule(t)
	in := newTestInstance(t, m)
	errOut := uint64(in.scratch + offErr)
	out := uint64(in.scratch + offHandle)
	str := func(s string) (uint64, uint64) {
		p, err := in.input(s)
		if err != nil {
			t.Fatal(err)
		}
		return uint64(p[0][0]), uint64(p[0][1])
	}

	for _, tc := range []struct{ cfg, arg string }{
		{`{"nodes":["redis://127.0.0.1:1"],"Key_prefix":"x"}`, "config"},
		{`{"nodes":[]}`, "nodes"},
		{`{"nodes":["redis://127.0.0.1:1"],"node_timeout_ms":0}`, "node_timeout_ms"},
		{`not json`, "config"},
	} {
		p, n := str(tc.cfg)
		status, rec := rawCall(t, in, "lock_client_new", p, n, out, errOut)
		if status != abi.InvalidArgument || rec.Arg != tc.arg || rec.Message == "" {
			t.Errorf("%s: status %d, record %+v", tc.cfg, status, rec)
		}
	}
	if status, rec := rawCall(t, in, "lock_client_new", 0, 0, out, errOut); status != abi.InvalidArgument || rec.Arg != "config_json" {
		t.Errorf("NULL config: %d %+v", status, rec)
	}

	c := redistest.Start(t, 1)
	var err error
	if rawClient.nodes, err = newNodeSet(c.URLs(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	defer rawClient.nodes.close()
	p, n := str(`{"nodes":["` + c.URLs()[0] + `"],"key_prefix":"p:"}`)
	if status, rec := rawCall(t, in, "lock_client_new", p, n, out, errOut); status != abi.OK {
		t.Fatalf("client_new: %d %+v", status, rec)
	}
	client := in.u64(offHandle)

	p, n = str("res")
	if status, rec := rawCall(t, in, "lock_acquire", client, p, n, 0, 0, 0, out, errOut); status != abi.InvalidArgument || rec.Arg != "ttl_ms" {
		t.Errorf("ttl 0: %d %+v", status, rec)
	}
	if status, _ := rawCall(t, in, "lock_acquire", client+100, p, n, 1000, 0, 0, out, errOut); status != abi.InvalidHandle {
		t.Errorf("unknown client: %d", status)
	}
	if status, rec := rawCall(t, in, "lock_acquire", client, p, n, 10000, 0, 0, out, errOut); status != abi.OK {
		t.Fatalf("acquire: %d %+v", status, rec)
	}
	lock := in.u64(offHandle)
	if status, _ := rawCall(t, in, "lock_acquire", lock, p, n, 1000, 0, 0, out, errOut); status != abi.InvalidHandle {
		t.Errorf("a lock handle as a client: %d", status)
	}
	if status, rec := rawCall(t, in, "lock_acquire", client, p, n, 1000, 0, 0, out, errOut); status != abi.NotAcquired || !strings.Contains(rec.Message, "not acquired") {
		t.Errorf("second acquire: %d %+v", status, rec)
	}

	if status, _ := rawCall(t, in, "lock_info", lock, uint64(in.scratch+offInfo), errOut); status != abi.OK {
		t.Fatalf("info: %d", status)
	}
	var info abi.Info
	if err := json.Unmarshal(in.takeBuf(offInfo), &info); err != nil || info.Key != "p:res" || len(info.Token) < 22 || info.ValidityMS <= 9000 || info.Lost || info.Released {
		t.Fatalf("info %+v, %v", info, err)
	}

	if status, _ := rawCall(t, in, "lock_poll", lock, uint64(in.scratch+offState)); status != abi.OK {
		t.Fatalf("poll: %d", status)
	}
	b, _ := in.mem.Read(in.scratch+offState, abi.StateSize)
	if s := abi.ReadState(b); s.Token != info.Token || s.Flags != 0 || s.NextPollMS <= 9000 || s.ValidityMS <= 9000 {
		t.Fatalf("state %+v", s)
	}

	if status, _ := rawCall(t, in, "lock_release", lock, errOut); status != abi.OK {
		t.Fatalf("release: %d", status)
	}
	if status, _ := rawCall(t, in, "lock_release", lock, errOut); status != abi.Lost {
		t.Fatalf("second release: %d", status)
	}
	if status, _ := rawCall(t, in, "lock_free", lock); status != abi.OK {
		t.Fatalf("free lock: %d", status)
	}
	if status, _ := rawCall(t, in, "lock_free", lock); status != abi.InvalidHandle {
		t.Fatalf("free lock twice: %d", status)
	}
	if status, _ := rawCall(t, in, "lock_extend", lock, 1000, errOut); status != abi.InvalidHandle {
		t.Fatalf("extend a freed lock: %d", status)
	}
	if status, _ := rawCall(t, in, "lock_free", client); status != abi.OK {
		t.Fatalf("free client: %d", status)
	}
	p, n = str(`{"nodes":["` + c.URLs()[0] + `"]}`)
	if status, _ := rawCall(t, in, "lock_client_new", p, n, out, errOut); status != abi.OK || in.u64(offHandle) <= lock {
		t.Fatalf("new client: %d, handle %d after %d (handles must not be reused)", status, in.u64(offHandle), lock)
	}
	rawCall(t, in, "lock_buf_free", 0) // ignored
	c.AssertNoKeys(t)
}
