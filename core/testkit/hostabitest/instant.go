package hostabitest

import (
	"strconv"
	"time"

	"github.com/liblock/liblock/core/engine"
)

// Instant plays every node as one that answers at once, as Redis does for a
// key nobody holds: PING → PONG, SET → OK, a script → 1, in order; the
// answers due on one connection are delivered together. It is the host of
// the CPU benchmarks of an engine behind its adapters (hostabi's
// BenchmarkStepCPU, wasm/host's BenchmarkModuleCPU): no I/O, and it reuses
// its buffers, so that what is measured is the engine's and the adapter's
// work.
type Instant struct {
	E      Engine
	opened []engine.ConnID
	writes []instantWrite // answers not yet delivered, by connection, oldest first
	spare  [][]byte       // delivered answers' buffers, for reuse
}

type instantWrite struct {
	conn engine.ConnID
	data []byte
}

// Pair acquires resource (ttl 10 s) and releases it; acquired is when the
// acquire was done.
func (h *Instant) Pair(resource string) (acquired time.Time, err error) {
	op, err := h.E.Acquire(engine.AcquireRequest{Resource: resource, TTL: 10 * time.Second})
	if err != nil {
		return acquired, err
	}
	d := h.Until(op)
	if d.Err != nil {
		return acquired, d.Err
	}
	acquired = time.Now()
	if op, err = h.E.Release(d.Lock); err != nil {
		return acquired, err
	}
	return acquired, h.Until(op).Err
}

// Until carries out the actions until op is done; answers still due then
// are delivered during the next operation, as a node's late replies are.
func (h *Instant) Until(op engine.OpID) Done {
	for {
		for {
			act, ok := h.E.Next()
			if !ok {
				break
			}
			switch act.Kind {
			case engine.ActOpen:
				h.opened = append(h.opened, act.Conn)
			case engine.ActWrite:
				h.answer(act.Conn, act.Data)
			case engine.ActDone:
				if act.Op == op {
					return Done{Lock: act.Lock, Err: act.Err}
				}
			}
		}
		switch {
		case len(h.opened) > 0:
			c := h.opened[0]
			h.opened = h.opened[1:]
			h.E.Opened(c)
		case len(h.writes) > 0:
			w := h.writes[0]
			h.writes = h.writes[:copy(h.writes, h.writes[1:])] // keeps the array
			h.E.Received(w.conn, w.data)
			h.spare = append(h.spare, w.data)
		default:
			panic("hostabitest.Instant: nothing to do and the operation is not done")
		}
	}
}

// answer queues the answers to a write, behind those still due on the same
// connection (delivered together, as a node's pipelined replies arrive).
func (h *Instant) answer(c engine.ConnID, data []byte) {
	for i := range h.writes {
		if h.writes[i].conn == c {
			h.writes[i].data = appendAnswers(h.writes[i].data, data, c)
			return
		}
	}
	var buf []byte
	if k := len(h.spare); k > 0 {
		buf, h.spare = h.spare[k-1][:0], h.spare[:k-1]
	}
	h.writes = append(h.writes, instantWrite{c, appendAnswers(buf, data, c)})
}

// appendAnswers appends to dst the answer to each RESP command in p, sent
// on connection c, by its name: PING → PONG, INFO → a run_id of c's own (so
// that every node is a server of its own), SET → OK, anything else (the
// extend and release scripts) → 1.
func appendAnswers(dst, p []byte, c engine.ConnID) []byte {
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
		case "INFO":
			id := "run_id:abcdef" + strconv.FormatUint(uint64(c), 16)
			dst = append(dst, '$')
			dst = strconv.AppendInt(dst, int64(len(id)), 10)
			dst = append(dst, "\r\n"+id+"\r\n"...)
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
