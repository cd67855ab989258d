package hostabi

import (
	"github.com/liblock/liblock/core/engine"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// REPORT (action kind 16; engine.ActReport): the engine's reports, sent
// only to a host whose configuration says "report": true. A fixed 33
// bytes: u8 what, u8 outcome, u64 op, u64 lock, u16 node, u32 attempts,
// i64 duration_us — no strings, so that a report costs the host one
// fixed-size decode and the engine no allocation.

func appendReport(b []byte, a *engine.Action) []byte {
	b = append(b, byte(a.Kind), byte(a.Rep.What), a.Rep.Outcome)
	b = appendU64(b, uint64(a.Op))
	b = appendU64(b, uint64(a.Lock))
	b = appendU16(b, a.Rep.Node)
	b = appendU32(b, a.Rep.Attempts)
	return appendU64(b, uint64(a.Rep.Duration.Microseconds()))
}

func readReport(r *reader, a *engine.Action) {
	a.Rep.What = engine.ReportKind(r.u8())
	a.Rep.Outcome = r.u8()
	a.Op = engine.OpID(r.u64())
	a.Lock = engine.LockID(r.u64())
	a.Rep.Node = r.u16()
	a.Rep.Attempts = r.u32()
	a.Rep.Duration = time.Duration(int64(r.u64())) * time.Microsecond
}
