package hostabi

import (
	"strconv"
	"testing"
	"time"

	"github.com/liblock/liblock/core/engine"
)

// BenchmarkStepCPU is wasm/host's BenchmarkModuleCPU without the module:
// an acquire+release pair through the Adapter and Step, natively, with a
// host that answers every command at once as for a free key. What Step
// allocates here it allocates in liblock.wasm too, where an allocation
// costs far more.
func BenchmarkStepCPU(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run("nodes="+strconv.Itoa(n), func(b *testing.B) {
			js := `{"nodes":[`
			for i := range n {
				if i > 0 {
					js += ","
				}
				js += `"redis://127.0.0.1:` + strconv.Itoa(1+i) + `"`
			}
			h, err := New(js + `],"node_timeout_ms":1000}`)
			if err != nil {
				b.Fatal(err)
			}
			defer Free(h)
			a := NewAdapter(Handle(h), n)
			host := &answerer{a: a}
			pair := func() {
				op, err := a.Acquire(engine.AcquireRequest{Resource: "bench", TTL: 10 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				lock, err := host.until(op)
				if err != nil || lock == 0 {
					b.Fatal(err)
				}
				if op, err = a.Release(lock); err != nil {
					b.Fatal(err)
				}
				if _, err := host.until(op); err != nil {
					b.Fatal(err)
				}
			}
			for range 200 {
				pair()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				pair()
			}
		})
	}
}

// answerer plays the nodes: each connection's commands are answered by
// their names (PING → PONG, SET → OK, a script → 1), in order, the answers
// to one write at a time.
type answerer struct {
	a      *Adapter
	opened []engine.ConnID
	writes []write  // answers not yet delivered, oldest first
	spare  [][]byte // delivered answers' buffers, for reuse
}

type write struct {
	conn engine.ConnID
	data []byte
}

// until carries out the actions until op is done; answers still due then
// are delivered during the next operation, as a node's late replies are.
func (h *answerer) until(op engine.OpID) (engine.LockID, error) {
	a := h.a
	for {
		for {
			act, ok := a.Next()
			if !ok {
				break
			}
			switch act.Kind {
			case engine.ActOpen:
				h.opened = append(h.opened, act.Conn)
			case engine.ActWrite:
				var buf []byte
				if k := len(h.spare); k > 0 {
					buf, h.spare = h.spare[k-1][:0], h.spare[:k-1]
				}
				h.writes = append(h.writes, write{act.Conn, appendAnswers(buf, act.Data)})
			case engine.ActDone:
				if act.Op == op {
					return act.Lock, act.Err
				}
			}
		}
		switch {
		case len(h.opened) > 0:
			c := h.opened[0]
			h.opened = h.opened[1:]
			a.Opened(c)
		case len(h.writes) > 0:
			w := h.writes[0]
			h.writes = h.writes[:copy(h.writes, h.writes[1:])] // keeps the array
			a.Received(w.conn, w.data)
			h.spare = append(h.spare, w.data)
		default:
			panic("nothing to do and the operation is not done")
		}
	}
}

func appendAnswers(dst, p []byte) []byte {
	for len(p) > 0 {
		// *N\r\n then N × $len\r\narg\r\n; the name is the first arg.
		eol := indexCRLF(p)
		n, _ := strconv.Atoi(string(p[1:eol]))
		p = p[eol+2:]
		var name []byte
		for i := range n {
			eol = indexCRLF(p)
			l, _ := strconv.Atoi(string(p[1:eol]))
			if i == 0 {
				name = p[eol+2 : eol+2+l]
			}
			p = p[eol+2+l+2:]
		}
		switch string(name) {
		case "PING":
			dst = append(dst, "+PONG\r\n"...)
		case "SET":
			dst = append(dst, "+OK\r\n"...)
		default:
			dst = append(dst, ":1\r\n"...)
		}
	}
	return dst
}

func indexCRLF(p []byte) int {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '\r' && p[i+1] == '\n' {
			return i
		}
	}
	return -1
}
