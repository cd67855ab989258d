package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

var pyFmt = map[string]string{"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "i32": "i", "i64": "q"}

// pyStructs collects the struct.Struct formats the code uses.
type pyStructs map[string]bool

func (ps pyStructs) name(format string) string {
	ps[format] = true
	return "_S_" + format
}

func pyStr(s string) string { return strconv.Quote(s) }

// emptySize is the bytes of fs encoded with every integer 0 and every str,
// bytes and list empty.
func emptySize(fs []Field) int {
	n := 0
	for _, f := range fs {
		switch f.Type {
		case "str", "bytes":
			n += 4
		case "list":
			n += 2
		case "error":
			panic("an error record inside an error record")
		default:
			n += fixedSize[f.Type]
		}
	}
	return n
}

func genPython(s *Spec) ([]byte, error) {
	var head, body w
	ps := pyStructs{}
	head.p("# %s\n", header)
	head.p(`"""The engine's host protocol (core/hostabi/PROTOCOL.md): kinds, flags, status
table, argument limits, the event encoders and the action decoders.

Encoders: enc_x(buf, *fields in the spec's order) packs one event at the start
of buf and returns its length; str fields are given as UTF-8 bytes,
bytes fields as any bytes-like object. A field with a flag condition is written
when its bit is set in the flags passed.

Decoders: decode_action(buf, at) reads the action at at and returns
((kind, *fields in the spec's order), next); an error record is None when
its status is 0, else (status, message, a, b, [(node, addr, cause), ...]); a
list is a list of tuples.
"""

from __future__ import annotations

import struct

`)
	head.p("ABI_VERSION = %d\n# The engine protocol's version (lock_engine_protocol_version) this codec speaks\nPROTOCOL_VERSION = %d\n\n# Events\n", s.ABIVersion, s.ProtocolVersion)
	for _, m := range s.Events {
		head.p("EV_%s = %d\n", m.Name, m.Kind)
	}
	head.p("\n# Actions\n")
	for _, m := range s.Actions {
		head.p("ACT_%s = %d\n", m.Name, m.Kind)
	}
	head.p("\n# The bits of the flags fields (NODE: an INSPECTED node's)\n")
	prefixes, flags := flagFields(s)
	for i, p := range prefixes {
		for _, fl := range flags[i] {
			head.p("%s_%s = %d\n", p, fl.Name, 1<<fl.Bit)
		}
	}
	head.p("\n# The bytes an event takes besides the contents of its str/bytes fields\nEV_OVERHEAD = {\n")
	for _, m := range s.Events {
		head.p("    EV_%s: %d,\n", m.Name, overhead(m))
	}
	head.p("}\n\n# Status codes: the C ABI's LOCK_* numbers\n")
	for _, st := range s.Statuses {
		head.p("STATUS_%s = %d\n", st.Name, st.Status)
	}
	head.p("\n# Each status's C name\nSTATUS_NAMES = {\n")
	for _, st := range s.Statuses {
		head.p("    %d: %s,\n", st.Status, pyStr(st.C))
	}
	head.p("}\n\n# Each status's default message\nSTATUS_MESSAGES = {\n")
	for _, st := range s.Statuses {
		head.p("    %d: %s,\n", st.Status, pyStr(st.Message))
	}
	head.p("}\n\n# The exception class (liblock._errors) of each error status\nSTATUS_CLASSES = {\n")
	for _, st := range s.Statuses {
		if st.PythonClass != nil {
			head.p("    %d: %s,\n", st.Status, pyStr(*st.PythonClass))
		}
	}
	head.p("}\n\n# The argument limits in \"unit\" (ms, bytes, count, factor): \"c\" the C/JSON name,\n# \"python\" the parameter's name, \"python_unit\" its unit\nLIMITS = {\n")
	for _, l := range s.Limits {
		def := ""
		if l.Default != nil {
			def = `, "default": ` + num(*l.Default)
		}
		head.p("    %s: {\"min\": %s, \"max\": %s%s, \"unit\": %s, \"c\": %s, \"python\": %s, \"python_unit\": %s},\n",
			pyStr(l.Name), num(l.Min), num(l.Max), def, pyStr(l.Unit), pyStr(l.C), pyStr(l.Python.Name), pyStr(l.Python.Unit))
	}
	head.p("}\n\n# The same, one constant a bound\n")
	for _, l := range s.Limits {
		n := strings.ToUpper(l.Name)
		head.p("LIMIT_%s_MIN = %s\nLIMIT_%s_MAX = %s\n", n, num(l.Min), n, num(l.Max))
		if l.Default != nil {
			head.p("LIMIT_%s_DEFAULT = %s\n", n, num(*l.Default))
		}
	}
	head.p("\n# The Python host's defaults (the spec's \"defaults\", docs/defaults.md): ms for\n# durations; telemetry \"on\", \"off\" or \"installed\"; pending_at_close \"CANCELED\" or \"CLOSED\"\n")
	for _, d := range s.Defaults {
		head.p("DEFAULT_%s = %s\n", strings.ToUpper(d.Name), strings.Replace(d.literal("python"), "null", "None", 1))
	}
	head.p("\n# The spin on a request's replies (_host.py; the spec's \"spin\")\nSPIN_POLLS = %d\nSPIN_CREDIT = %d\nSPIN_PROBE = %d\nSPIN_EAGER_RUN = %d\n",
		s.Spin.Polls, s.Spin.Credit, s.Spin.Probe, s.Spin.EagerRun)
	head.p("\n\nclass ProtocolError(Exception):\n    \"\"\"The engine's output could not be decoded (a bug, reported as InternalError).\"\"\"\n\n\n")

	// Events.
	body.p("# ---------------------------------------------------------------- events\n")
	for _, m := range s.Events {
		var params []string
		for _, f := range m.Fields {
			p := f.Name + ": "
			switch f.Type {
			case "str", "bytes", "list":
				p += "Any"
			default:
				p += "int"
			}
			switch {
			case f.IfFlag != "" && f.Type == "list":
				p += " = ()"
			case f.IfFlag != "" && (f.Type == "str" || f.Type == "bytes"):
				p += ` = b""`
			case f.IfFlag != "":
				p += " = 0"
			}
			params = append(params, p)
		}
		body.p("\n\ndef enc_%s(buf: Any%s) -> int:\n    \"\"\"%s.\"\"\"\n", strings.ToLower(m.Name), prefixed(", ", params), m.Name)
		// Fixed fields are packed in groups; a str/bytes adds its length
		// to the group, which is then flushed, and its contents follow.
		format, args := "B", []string{"EV_" + m.Name}
		at := "0"
		flush := func(ind string) {
			if format == "" {
				return
			}
			body.p("%s%s.pack_into(buf, %s, %s)\n", ind, ps.name(format), at, strings.Join(args, ", "))
			size := struct2size(format)
			if at == "0" {
				body.p("%sat = %d\n", ind, size)
			} else {
				body.p("%sat += %d\n", ind, size)
			}
			at = "at"
			format, args = "", nil
		}
		for _, f := range m.Fields {
			ind := "    "
			if f.IfFlag != "" {
				flush("    ")
				body.p("    if flags & %d:\n", flagBit(m.Fields, f.IfFlag))
				ind = "        "
			}
			switch f.Type {
			case "str", "bytes":
				n := "n_" + f.Name
				body.p("%s%s = len(%s)\n", ind, n, f.Name)
				format += "I"
				args = append(args, n)
				flush(ind)
				body.p("%sbuf[at:at + %s] = %s\n%sat += %s\n", ind, n, f.Name, ind, n)
			case "list":
				// A list of one str per item is passed as a list of bytes.
				if len(f.Items) != 1 || f.Items[0].Type != "str" {
					return nil, fmt.Errorf("event %s: no encoder for a list of other than one str", m.Name)
				}
				format += "H"
				args = append(args, "len("+f.Name+")")
				flush(ind)
				body.p("%sfor s in %s:\n%s    n_s = len(s)\n%s    %s.pack_into(buf, at, n_s)\n%s    buf[at + 4:at + 4 + n_s] = s\n%s    at += 4 + n_s\n", ind, f.Name, ind, ind, ps.name("I"), ind, ind)
			case "error":
				return nil, fmt.Errorf("event %s: no encoder for a %s field", m.Name, f.Type)
			default:
				format += pyFmt[f.Type]
				args = append(args, f.Name)
			}
			if f.IfFlag != "" {
				flush(ind)
			}
		}
		flush("    ")
		body.p("    return at\n")
	}

	// Actions.
	body.p("\n\n# ---------------------------------------------------------------- actions\n")
	body.p(`

def read_str(buf: Any, at: int) -> Tuple[str, int]:
    """A str at at: (the text, the offset after it)."""
    (n,) = _S_I.unpack_from(buf, at)
    at += 4
    end = at + n
    if end > len(buf):
        raise ProtocolError(f"string of {n} bytes past the end of the actions")
    return bytes(buf[at:end]).decode("utf-8", "replace"), end


def read_bytes(buf: Any, at: int) -> Tuple[bytes, int]:
    """A bytes field at at: (a copy of its contents, the offset after it)."""
    (n,) = _S_I.unpack_from(buf, at)
    at += 4
    end = at + n
    if end > len(buf):
        raise ProtocolError(f"data of {n} bytes past the end of the actions")
    return bytes(buf[at:end]), end


def _read_list(buf: Any, at: int, item: Any) -> Tuple[List[Any], int]:
    (n,) = _S_H.unpack_from(buf, at)
    at += 2
    out = []
    for _ in range(n):
        x, at = item(buf, at)
        out.append(x)
    return out, at
`)
	ps.name("I")
	ps.name("H")
	var decoder func(fn, doc string, fs []Field, lead []string, ret func(vars []string) string) error
	decoder = func(fn, doc string, fs []Field, lead []string, ret func(vars []string) string) error {
		var inner []struct {
			fn string
			fs []Field
		}
		var code w
		var vars []string
		format := ""
		var group []string
		flush := func() {
			if format == "" {
				return
			}
			if format == "B" {
				code.p("    %s = buf[at]\n    at += 1\n", group[0])
			} else {
				lhs := strings.Join(group, ", ")
				if len(group) == 1 {
					lhs = "(" + lhs + ",)"
				}
				code.p("    %s = %s.unpack_from(buf, at)\n    at += %d\n", lhs, ps.name(format), struct2size(format))
			}
			format, group = "", nil
		}
		for _, f := range fs {
			if f.IfFlag != "" {
				return fmt.Errorf("%s.%s: a conditional field in an action", fn, f.Name)
			}
			v := f.Name
			vars = append(vars, v)
			switch f.Type {
			case "str":
				flush()
				code.p("    %s, at = read_str(buf, at)\n", v)
			case "bytes":
				flush()
				code.p("    %s, at = read_bytes(buf, at)\n", v)
			case "error":
				flush()
				code.p("    %s, at = read_error(buf, at)\n", v)
			case "list":
				flush()
				item := fn + "_" + strings.TrimSuffix(f.Name, "s")
				inner = append(inner, struct {
					fn string
					fs []Field
				}{item, f.Items})
				code.p("    %s, at = _read_list(buf, at, %s)\n", v, item)
			default:
				format += pyFmt[f.Type]
				group = append(group, v)
			}
		}
		flush()
		for _, in := range inner {
			if err := decoder(in.fn, "", in.fs, nil, func(vars []string) string { return "(" + strings.Join(vars, ", ") + ",)" }); err != nil {
				return err
			}
		}
		if fn == "read_error" {
			// The record of no error is all zeros (every str and list
			// empty): most actions carry one, so it is recognised whole
			// rather than read field by field.
			body.p("\n\n_NO_ERROR = bytes(%d)\n", emptySize(fs))
		}
		body.p("\n\ndef %s(buf: Any, at: int) -> Tuple[Any, int]:\n", fn)
		if doc != "" {
			body.p("    \"\"\"%s\"\"\"\n", doc)
		}
		if fn == "read_error" {
			body.p("    if buf[at:at + %d] == _NO_ERROR:\n        return None, at + %d\n", emptySize(fs), emptySize(fs))
		}
		body.Write(code.Bytes())
		body.p("    return %s, at\n", ret(vars))
		return nil
	}
	if err := decoder("read_error", "An error record: None when its status is 0.", s.Error.Fields, nil, func(vars []string) string {
		return "None if status == 0 else (" + strings.Join(vars, ", ") + ")"
	}); err != nil {
		return nil, err
	}
	for _, m := range s.Actions {
		name := "_dec_" + strings.ToLower(m.Name)
		kind := "ACT_" + m.Name
		if err := decoder(name, m.Name+" after its kind.", m.Fields, nil, func(vars []string) string {
			return "(" + strings.Join(append([]string{kind}, vars...), ", ") + ",)"
		}); err != nil {
			return nil, err
		}
	}
	body.p("\n\n_DECODERS = {\n")
	for _, m := range s.Actions {
		body.p("    ACT_%s: _dec_%s,\n", m.Name, strings.ToLower(m.Name))
	}
	body.p(`}


def decode_action(buf: Any, at: int) -> Tuple[Tuple[Any, ...], int]:
    """The action at at: ((kind, *fields), the offset after it)."""
    kind = buf[at]
    dec = _DECODERS.get(kind)
    if dec is None:
        raise ProtocolError(f"unknown action kind {kind} at byte {at}")
    return dec(buf, at + 1)


def decode(buf: Any) -> List[Tuple[Any, ...]]:
    """Every action in buf, as decode_action's tuples."""
    out = []
    at, end = 0, len(buf)
    while at < end:
        a, at = decode_action(buf, at)
        out.append(a)
    return out
`)
	var formats []string
	for f := range ps {
		formats = append(formats, f)
	}
	sort.Strings(formats)
	head.p("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from typing import Any, List, Tuple\n\n")
	for _, f := range formats {
		head.p("_S_%s = struct.Struct(%s)\n", f, pyStr("<"+f))
	}
	return append(head.Bytes(), body.Bytes()...), nil
}

// struct2size is the size of a little-endian struct format without padding.
func struct2size(format string) int {
	n := 0
	for _, c := range format {
		switch c {
		case 'B':
			n++
		case 'H':
			n += 2
		case 'I', 'i':
			n += 4
		case 'Q', 'q':
			n += 8
		}
	}
	return n
}
