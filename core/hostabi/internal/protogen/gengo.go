package main

import (
	"fmt"
	"go/format"
	"strconv"
	"strings"
)

func gofmt(b *w) ([]byte, error) {
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, err
	}
	return out, nil
}

// genHostabi: the kinds, flags and status table of package hostabi.
func genHostabi(s *Spec) ([]byte, error) {
	var b w
	b.p("// %s\n\npackage hostabi\n\nimport \"github.com/liblock/liblock/core/engine\"\n\n", header)
	b.p("// ABIVersion is the C ABI's version (lock_abi_version), which liblock.wasm\n// shares.\nconst ABIVersion = %d\n\n", s.ABIVersion)
	b.p("// ProtocolVersion is the engine protocol's version\n// (lock_engine_protocol_version): the layout of the events and actions.\nconst ProtocolVersion = %d\n\n", s.ProtocolVersion)
	b.p("// The events (PROTOCOL.md, \"Events\").\nconst (\n")
	for _, m := range s.Events {
		b.p("\t%s EventKind = %d\n", m.Go, m.Kind)
	}
	b.p(")\n\n// The actions (PROTOCOL.md, \"Actions\"); 1–%d are also the engine's own\n// (engine.ActOpen …).\nconst (\n", 7)
	for _, m := range s.Actions {
		b.p("\t%s engine.ActionKind = %d\n", m.Go, m.Kind)
	}
	b.p(")\n\n// The bits of the flags fields.\nconst (\n")
	for _, ms := range [][]Message{s.Events, s.Actions} {
		for _, m := range ms {
			goFlags(&b, m.Fields)
		}
	}
	b.p(")\n\n// Status codes: the C ABI's LOCK_* numbers (capi/liblock.h).\nconst (\n")
	for _, st := range s.Statuses {
		b.p("\t%s int32 = %d\n", st.Go, st.Status)
	}
	b.p(")\n\n// The default messages of the statuses.\nconst (\n")
	for _, st := range s.Statuses {
		b.p("\tmsg%s = %s\n", st.Go, strconv.Quote(st.Message))
	}
	b.p(")\n\n// cArgNames: the C/JSON name of each argument the engine names otherwise\n// (the spec's limits whose name is not their \"c\").\nvar cArgNames = map[string]string{\n")
	seen := map[string]bool{}
	for _, l := range s.Limits {
		// The engine names an argument by its limit's name, but for the
		// election's own limits, which it calls ttl and value.
		arg := strings.TrimPrefix(strings.TrimPrefix(l.Name, "campaign_"), "election_")
		if arg != l.C && !seen[arg] {
			seen[arg] = true
			b.p("\t%s: %s,\n", strconv.Quote(arg), strconv.Quote(l.C))
		}
	}
	b.p("}\n")
	return gofmt(&b)
}

func goFlags(b *w, fs []Field) {
	for _, f := range fs {
		for _, fl := range f.Flags {
			b.p("\t%s = %d\n", fl.Go, 1<<fl.Bit)
		}
		goFlags(b, f.Items)
	}
}

// genEngine: the argument limits of package engine.
func genEngine(s *Spec) ([]byte, error) {
	var b w
	b.p("// %s\n\npackage engine\n\nimport time \"github.com/liblock/liblock/core/internal/xtime\"\n\n", header)
	b.p("// Limits and defaults. Values outside the limits are rejected with\n// ErrInvalidArgument before anything is sent to Redis.\nconst (\n")
	val := func(l Limit, v float64) string {
		if l.Unit == "ms" {
			return num(v) + " * time.Millisecond"
		}
		return num(v)
	}
	for _, l := range s.Limits {
		unit := ""
		if l.Unit == "bytes" {
			unit = " // bytes"
		}
		if l.GoMin != "" {
			b.p("\t%s = %s%s\n", l.GoMin, val(l, l.Min), unit)
		}
		if l.Doc != "" {
			b.p("\t// %s\n", l.Doc)
		}
		if l.GoMax != "" {
			b.p("\t%s = %s%s\n", l.GoMax, val(l, l.Max), unit)
		}
		if l.GoDefault != "" && l.Default != nil {
			b.p("\t%s = %s\n", l.GoDefault, val(l, *l.Default))
		}
	}
	b.p(")\n\n")
	b.p("// The RESP decoder's bounds (resp.go): a node whose reply passes one fails.\nconst (\n")
	for _, l := range s.ReplyLimits {
		if l.Go == "" || l.Value <= 0 || (l.Unit != "bytes" && l.Unit != "count") {
			return nil, fmt.Errorf("reply_limits: %q needs go, a positive value and a unit of bytes or count", l.Name)
		}
		b.p("\t// %s bounds %s\n\t%s = %d // %s\n", l.Go, l.Doc, l.Go, l.Value, l.Unit)
	}
	b.p(")\n")
	return gofmt(&b)
}

// genCapi: the status codes and default messages of liblock.so's package.
func genCapi(s *Spec) ([]byte, error) {
	var b w
	b.p("// %s\n\npackage main\n\n// Status codes: the numbers are the ABI (liblock.h, which a test checks\n// against the spec).\nconst (\n", header)
	for _, st := range s.Statuses {
		b.p("\tstatus%s = %d\n", st.Go, st.Status)
	}
	b.p(")\n\n// The statuses' default messages.\nconst (\n")
	for _, st := range s.Statuses {
		b.p("\tmsg%s = %s\n", st.Go, strconv.Quote(st.Message))
	}
	b.p(")\n")
	return gofmt(&b)
}
