package main

import (
	"fmt"
	"strconv"
	"strings"
)

// jsStr is s as a JavaScript string literal.
func jsStr(s string) string {
	q := strconv.Quote(s) // a JSON-compatible literal for the ASCII the spec holds
	return "'" + strings.ReplaceAll(strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`), "'", `\'`) + "'"
}

// overhead is the bytes a message takes besides its str and bytes
// contents and its conditional fields.
func overhead(m Message) int {
	n := 1
	for _, f := range m.Fields {
		if f.IfFlag != "" {
			continue
		}
		if f.Type == "str" || f.Type == "bytes" {
			n += 4
		} else {
			n += fixedSize[f.Type]
		}
	}
	return n
}

// fixedLen is the whole length of a message whose fields are all of fixed
// width (no str, bytes, list, error or conditional field), and whether it
// is one: a host may skip such an action by its length, undecoded.
func fixedLen(m Message) (int, bool) {
	n := 1
	for _, f := range m.Fields {
		w, ok := fixedSize[f.Type]
		if !ok || f.IfFlag != "" {
			return 0, false
		}
		n += w
	}
	return n, true
}

// flagFields is every flags field of the messages, with its prefix.
func flagFields(s *Spec) (prefixes []string, flags [][]Flag) {
	var walk func(owner string, fs []Field)
	walk = func(owner string, fs []Field) {
		for _, f := range fs {
			if len(f.Flags) > 0 {
				p := owner
				if f.Prefix != "" {
					p = f.Prefix
				}
				prefixes = append(prefixes, p)
				flags = append(flags, f.Flags)
			}
			walk(owner, f.Items)
		}
	}
	for _, m := range s.Events {
		walk(m.Name, m.Fields)
	}
	for _, m := range s.Actions {
		walk(m.Name, m.Fields)
	}
	return prefixes, flags
}

func genJS(s *Spec) ([]byte, error) {
	var b w
	b.p("// %s\n'use strict';\n", header)
	b.p(`// The engine's host protocol (core/hostabi/PROTOCOL.md): kinds, flags,
// status table, argument limits, the event encoders and the action decoder.
//
// Encoders: encX(m, o, ...fields in the spec's order) writes one event at
// byte o of m ({ b: Buffer, v: DataView } over the same memory; the caller
// made sure it fits) and returns its length. str fields are strings (written
// as UTF-8), bytes fields Uint8Arrays, integers Numbers (u64 handles are
// below 2^53). A field with a flag condition is written when its bit is set
// in the flags the caller passes.
//
// readAction(r) reads one action with r (a Reader of lib/protocol.js) and
// returns { kind, ...fields by the spec's names }, or null for a kind it does
// not know. An error record is null when its status is 0, else
// { status, message, a, b, nodes }; bytes fields are views into r's memory.

`)
	b.p("const ABI_VERSION = %d;\n/** The engine protocol's version (lock_engine_protocol_version) this codec speaks. */\nconst PROTOCOL_VERSION = %d;\n\n", s.ABIVersion, s.ProtocolVersion)
	kinds := func(name string, ms []Message) {
		b.p("const %s = Object.freeze({\n", name)
		for _, m := range ms {
			b.p("  %s: %d,\n", m.Name, m.Kind)
		}
		b.p("});\n")
	}
	kinds("EV", s.Events)
	kinds("ACT", s.Actions)
	prefixes, flags := flagFields(s)
	b.p("\n/** The bits of the flags fields, by the message (NODE: an INSPECTED node's). */\nconst FLAGS = Object.freeze({\n")
	for i, p := range prefixes {
		b.p("  %s: Object.freeze({", p)
		for j, fl := range flags[i] {
			if j > 0 {
				b.p(",")
			}
			b.p(" %s: %d", fl.Name, 1<<fl.Bit)
		}
		b.p(" }),\n")
	}
	b.p("});\n\n/** The bytes an event takes besides the contents of its str/bytes fields. */\nconst EV_OVERHEAD = Object.freeze({\n")
	for _, m := range s.Events {
		b.p("  %s: %d,\n", m.Name, overhead(m))
	}
	b.p("});\n\n/** The whole length of each action whose fields are all of fixed width. */\nconst ACT_SIZE = Object.freeze({\n")
	for _, m := range s.Actions {
		if n, ok := fixedLen(m); ok {
			b.p("  %s: %d,\n", m.Name, n)
		}
	}
	b.p("});\n\n/** The status codes: the C ABI's LOCK_* numbers. */\nconst STATUS = Object.freeze({\n")
	for _, st := range s.Statuses {
		b.p("  %s: %d,\n", st.Name, st.Status)
	}
	b.p("});\n\n/** Each status by its number: C name, default message, the Node error class and code. */\nconst STATUSES = Object.freeze([\n")
	for _, st := range s.Statuses {
		cls := "null"
		if st.NodeClass != nil {
			cls = jsStr(*st.NodeClass)
		}
		b.p("  Object.freeze({ status: %d, name: %s, c: %s, message: %s, nodeClass: %s, code: %s }),\n",
			st.Status, jsStr(st.Name), jsStr(st.C), jsStr(st.Message), cls, jsStr(st.NodeCode))
	}
	b.p("]);\n\n/**\n * The argument limits, in `unit` (ms, bytes, count, factor): `c` the C/JSON\n * name, `node` the Node option's name, `nodeUnit` its unit.\n */\nconst LIMITS = Object.freeze({\n")
	for _, l := range s.Limits {
		def := ""
		if l.Default != nil {
			def = ", default: " + num(*l.Default)
		}
		b.p("  %s: Object.freeze({ min: %s, max: %s%s, unit: %s, c: %s, node: %s, nodeUnit: %s }),\n",
			l.Name, num(l.Min), num(l.Max), def, jsStr(l.Unit), jsStr(l.C), jsStr(l.Node.Name), jsStr(l.Node.Unit))
	}
	b.p("});\n\n")
	b.p("/**\n * The Node host's defaults (the spec's \"defaults\", docs/defaults.md): ms\n * for durations; telemetry 'on', 'off' or 'installed'; pendingAtClose\n * 'CANCELED' or 'CLOSED'.\n */\nconst DEFAULTS = Object.freeze({")
	for i, d := range s.Defaults {
		sep := ", "
		if i == 0 {
			sep = " "
		}
		b.p("%s%s: %s", sep, lowerCamel(d.Name), strings.ReplaceAll(d.literal("node"), `"`, "'"))
	}
	b.p(" });\n\n")
	b.p("/** The spin on a request's replies (lib/spin.js; the spec's \"spin\"). */\nconst SPIN = Object.freeze({ polls: %d, credit: %d, probe: %d, eagerRun: %d });\n\n",
		s.Spin.Polls, s.Spin.Credit, s.Spin.Probe, s.Spin.EagerRun)
	b.p(`const TWO32 = 4294967296;

/** Writes an i64 or u64 (a safe integer) at o. */
function putI64(v, o, x) {
  const hi = Math.floor(x / TWO32);
  v.setUint32(o, x - hi * TWO32, true);
  v.setInt32(o + 4, hi, true); // i64 and u64 alike for safe integers
}

/** Writes a str at o; returns the offset after it. */
function putStr(m, o, s) {
  const n = s.length === 0 ? 0 : m.b.write(s, o + 4, 'utf8');
  m.v.setUint32(o, n, true);
  return o + 4 + n;
}

/** Writes a bytes field at o; returns the offset after it. */
function putBytes(m, o, d) {
  m.b.set(d, o + 4);
  m.v.setUint32(o, d.length, true);
  return o + 4 + d.length;
}

// ---------------------------------------------------------------- events
`)
	var names []string
	for _, m := range s.Events {
		fn := "enc" + camel(m.Name)
		names = append(names, fn)
		var params []string
		for _, f := range m.Fields {
			params = append(params, lowerCamel(f.Name))
		}
		b.p("\n/** %s (%s). */\nfunction %s(m, o%s) {\n", m.Name, strings.Join(params, ", "), fn, prefixed(", ", params))
		b.p("  m.b[o] = %d;\n", m.Kind)
		if len(m.Fields) == 0 {
			b.p("  return 1;\n}\n")
			continue
		}
		b.p("  let p = o + 1;\n")
		for _, f := range m.Fields {
			ind := "  "
			if f.IfFlag != "" {
				b.p("  if (flags & %d) {\n", flagBit(m.Fields, f.IfFlag))
				ind = "    "
			}
			x := lowerCamel(f.Name)
			switch f.Type {
			case "u8":
				b.p("%sm.b[p++] = %s;\n", ind, x)
			case "u16":
				b.p("%sm.v.setUint16(p, %s, true);\n%sp += 2;\n", ind, x, ind)
			case "u32":
				b.p("%sm.v.setUint32(p, %s, true);\n%sp += 4;\n", ind, x, ind)
			case "i32":
				b.p("%sm.v.setInt32(p, %s, true);\n%sp += 4;\n", ind, x, ind)
			case "u64", "i64":
				b.p("%sputI64(m.v, p, %s);\n%sp += 8;\n", ind, x, ind)
			case "str":
				b.p("%sp = putStr(m, p, %s);\n", ind, x)
			case "bytes":
				b.p("%sp = putBytes(m, p, %s);\n", ind, x)
			case "list":
				// A list of one str per item is passed as an array of strings.
				if len(f.Items) != 1 || f.Items[0].Type != "str" {
					return nil, fmt.Errorf("event %s: no encoder for a list of other than one str", m.Name)
				}
				b.p("%sm.v.setUint16(p, %s.length, true);\n%sp += 2;\n%sfor (const s of %s) p = putStr(m, p, s);\n", ind, x, ind, ind, x)
			default:
				return nil, fmt.Errorf("event %s: no encoder for a %s field", m.Name, f.Type)
			}
			if f.IfFlag != "" {
				b.p("  }\n")
			}
		}
		b.p("  return p - o;\n}\n")
	}
	b.p("\n// ---------------------------------------------------------------- actions\n\n")
	b.p("/** Reads a list: u16 n, then n items read by item(r). */\nfunction readList(r, item) {\n  const n = r.u16();\n  const out = new Array(n);\n  for (let i = 0; i < n; i++) out[i] = item(r);\n  return out;\n}\n")
	var items []string
	var itemFuncs w
	var fieldsExpr func(owner string, fs []Field) (string, error)
	fieldsExpr = func(owner string, fs []Field) (string, error) {
		var parts []string
		for _, f := range fs {
			var e string
			switch f.Type {
			case "u8", "u16", "u32", "i32", "u64", "i64", "str", "bytes":
				e = "r." + f.Type + "()"
			case "error":
				e = "readError(r)"
			case "list":
				fn := "read" + camel(owner) + camel(strings.TrimSuffix(f.Name, "s"))
				inner, err := fieldsExpr(owner, f.Items)
				if err != nil {
					return "", err
				}
				itemFuncs.p("\nfunction %s(r) {\n  return { %s };\n}\n", fn, inner)
				items = append(items, fn)
				e = "readList(r, " + fn + ")"
			}
			if f.IfFlag != "" {
				return "", fmt.Errorf("%s.%s: a conditional field in an action", owner, f.Name)
			}
			parts = append(parts, f.Name+": "+e)
		}
		return strings.Join(parts, ", "), nil
	}
	errFields, err := fieldsExpr("error", s.Error.Fields)
	if err != nil {
		return nil, err
	}
	var cases w
	for _, m := range s.Actions {
		fe, err := fieldsExpr(m.Name, m.Fields)
		if err != nil {
			return nil, err
		}
		if fe != "" {
			fe = ", " + fe
		}
		cases.p("    case %d: return { kind%s };\n", m.Kind, fe)
	}
	b.Write(itemFuncs.Bytes())
	b.p("\n/** An error record: null when its status is 0. */\nfunction readError(r) {\n  const e = { %s };\n  return e.status === 0 ? null : e;\n}\n", errFields)
	b.p("\n/** One action: { kind, ...fields }, or null for an unknown kind. */\nfunction readAction(r) {\n  const kind = r.u8();\n  switch (kind) {\n")
	b.Write(cases.Bytes())
	b.p("    default: return null;\n  }\n}\n\n")
	b.p("module.exports = {\n  ABI_VERSION, PROTOCOL_VERSION, EV, ACT, FLAGS, EV_OVERHEAD, ACT_SIZE, STATUS, STATUSES, LIMITS, DEFAULTS, SPIN,\n  %s,\n  readAction, readError,\n};\n", strings.Join(names, ", "))
	_ = items
	return b.Bytes(), nil
}

func prefixed(sep string, xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return sep + strings.Join(xs, ", ")
}
