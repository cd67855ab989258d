package main

import (
	"fmt"
	"strings"
)

// genGoCodec: package hostabi's codec (codec_gen.go): the primitives of the
// field types, the error record, AppendEvent and the readers and writers
// of every event and action, from the spec's fields and their go keys:
//
//   - go: the field's path in the Go value (hostabi.Event as ev,
//     hostabi.Action as a, the item of a list);
//   - go_type: bool, ms, us, ms_or_none (-1 for engine.NoExpiry),
//     error_text ("" for no error), or a Go type to convert to;
//   - go_cut: the constant a str is cut to (at a UTF-8 boundary) when
//     encoded;
//   - go_custom: a list the spec cannot map (hand-written hooks
//     append<Name> and read<Name> in codec.go; the item's reader and
//     writer are generated);
//   - go_ptr: the pointer field that holds a message's values;
//   - a flag's go_field (and go_value): the bool, or the field and its
//     value, the bit stands for; a bit without one announces its if_flag
//     field and is set when that field is not empty.
//
// Events are the engine's input and decode strictly: unknown flag bits,
// two values of one field, and an announced field left empty (which
// would not encode back to the same bytes) are errors. Actions are the
// host's input: their unknown flag bits are ignored.
func genGoCodec(s *Spec) ([]byte, error) {
	g := &goCodec{}
	b := &g.b
	b.p("// %s\n\npackage hostabi\n\n", header)
	b.p("import (\n\t\"strconv\"\n\n\t\"github.com/liblock/liblock/core/engine\"\n\terrors \"github.com/liblock/liblock/core/internal/xerrors\"\n\ttime \"github.com/liblock/liblock/core/internal/xtime\"\n)\n\n")
	b.p("%s", goPrimitives)

	// The error record: a struct of its own fields, mapped to and from Go
	// errors by codec.go.
	rec := goRecordFields(s.Error.Fields, "errorRecord")
	b.p("\n// errorRecord is an error record's fields (codec.go maps it to and from\n// the engine's errors).\n")
	g.recordType("errorRecord", rec)
	b.p("\nfunc appendErrorRecord(b []byte, e *errorRecord) []byte {\n")
	if err := g.encFields("error", rec, "e.", nil); err != nil {
		return nil, err
	}
	b.p("\treturn b\n}\n\nfunc readErrorRecord(r *reader, e *errorRecord) {\n")
	if err := g.decFields("error", rec, "e.", nil, false); err != nil {
		return nil, err
	}
	b.p("}\n")

	b.p("\n// AppendEvent appends ev, encoded, to b.\nfunc AppendEvent(b []byte, ev Event) []byte {\n\tb = append(b, byte(ev.Kind))\n\tswitch ev.Kind {\n")
	for _, m := range s.Events {
		if len(m.Fields) == 0 {
			continue
		}
		b.p("\tcase %s:\n", m.Go)
		if err := g.encFields(m.Name, m.Fields, "ev.", nil); err != nil {
			return nil, err
		}
	}
	b.p("\t}\n\treturn b\n}\n")

	b.p("\n// readEvent reads the fields of an event of ev.Kind into ev; an error\n// names what is malformed (a truncation is left in r.err).\nfunc readEvent(r *reader, ev *Event) error {\n\tswitch ev.Kind {\n")
	var none []string
	for _, m := range s.Events {
		if len(m.Fields) == 0 {
			none = append(none, m.Go)
			continue
		}
		b.p("\tcase %s:\n", m.Go)
		if err := g.decFields(m.Name, m.Fields, "ev.", nil, true); err != nil {
			return nil, err
		}
	}
	if len(none) > 0 {
		b.p("\tcase %s:\n", strings.Join(none, ", "))
	}
	b.p("\tdefault:\n\t\treturn errors.New(\"unknown event kind \" + strconv.Itoa(int(ev.Kind)))\n\t}\n\treturn nil\n}\n")

	b.p("\n// appendActionFields appends a, encoded, to b (whole: appendAction\n// splits a WRITE).\nfunc appendActionFields(b []byte, a *Action) []byte {\n\tswitch a.Kind {\n")
	for _, m := range s.Actions {
		b.p("\tcase %s:\n", m.Go)
		if hasCustom(m.Fields) {
			b.p("\t\tstart := len(b)\n")
		}
		b.p("\t\tb = append(b, byte(%s))\n", m.Go)
		if m.GoPtr != nil {
			b.p("\t\tp := a.%s\n\t\tif p == nil {\n\t\t\tp = &%s{}\n\t\t}\n", m.GoPtr.Field, m.GoPtr.Type)
		}
		if err := g.encFields(m.Name, m.Fields, "a.", m.GoPtr); err != nil {
			return nil, err
		}
	}
	b.p("\tdefault:\n\t\tpanic(\"hostabi: unknown action kind \" + strconv.Itoa(int(a.Kind)))\n\t}\n\treturn b\n}\n")

	b.p("\n// readAction reads the fields of an action of a.Kind into a; false for a\n// kind it does not know.\nfunc readAction(r *reader, a *Action) bool {\n\tswitch a.Kind {\n")
	for _, m := range s.Actions {
		b.p("\tcase %s:\n", m.Go)
		if m.GoPtr != nil {
			b.p("\t\tp := &%s{}\n\t\ta.%s = p\n", m.GoPtr.Type, m.GoPtr.Field)
		}
		if err := g.decFields(m.Name, m.Fields, "a.", m.GoPtr, false); err != nil {
			return nil, err
		}
	}
	b.p("\tdefault:\n\t\treturn false\n\t}\n\treturn true\n}\n")

	// The items of custom lists: a writer taking the fields in the spec's
	// order, and a reader returning them.
	for _, m := range s.Actions {
		for _, f := range m.Fields {
			if f.GoCustom == "" {
				continue
			}
			if f.Type != "list" {
				return nil, fmt.Errorf("action %s.%s: go_custom on a %s", m.Name, f.Name, f.Type)
			}
			if err := g.itemCodec(camel(m.Name)+strings.TrimSuffix(camel(f.Name), "s"), m.Name, f); err != nil {
				return nil, err
			}
		}
	}
	return gofmt(b)
}

// goPrimitives: the field types' encoding (little-endian fixed-width
// integers; str and bytes a u32 length, then the bytes) and the reader.
const goPrimitives = `func appendU16(b []byte, v uint16) []byte {
	return append(b, byte(v), byte(v>>8))
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func appendU64(b []byte, v uint64) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

func appendStr(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, d []byte) []byte {
	b = appendU32(b, uint32(len(d)))
	return append(b, d...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// reader reads the encoding; the first error sticks and stops it.
type reader struct {
	b   []byte
	i   int
	err error
}

var errTruncated = errors.New("truncated")

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || len(r.b)-r.i < n {
		r.err = errTruncated
		return false
	}
	return true
}

func (r *reader) u8() byte {
	if !r.need(1) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *reader) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	r.i += 2
	return uint16(r.b[r.i-2]) | uint16(r.b[r.i-1])<<8
}

func (r *reader) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	p := r.b[r.i : r.i+4]
	r.i += 4
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24
}

func (r *reader) u64() uint64 {
	lo := r.u32()
	return uint64(lo) | uint64(r.u32())<<32
}

// bytes is a bytes field, aliasing r's buffer.
func (r *reader) bytes() []byte {
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.b)-r.i) {
		r.err = errors.New("length " + strconv.FormatUint(uint64(n), 10) + " past the end")
		return nil
	}
	p := r.b[r.i : r.i+int(n) : r.i+int(n)]
	r.i += int(n)
	return p
}

func (r *reader) str() string { return string(r.bytes()) }
`

type goCodec struct{ b w }

// goWire is the Go type of each field type, as read.
var goWire = map[string]string{"u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
	"i32": "int32", "i64": "int64", "str": "string", "bytes": "[]byte"}

// goRecordFields is fs with go paths of their own names, for a struct of
// the record's own (recordType); a list's items are of type name+Item.
func goRecordFields(fs []Field, name string) []Field {
	out := make([]Field, len(fs))
	for i, f := range fs {
		f.Go = camel(f.Name)
		if f.Type == "list" {
			f.GoType = name + "Item"
			f.Items = goRecordFields(f.Items, name+"Item")
		}
		out[i] = f
	}
	return out
}

func (g *goCodec) recordType(name string, fs []Field) {
	var items []Field
	g.b.p("type %s struct {\n", name)
	for _, f := range fs {
		t := goWire[f.Type]
		if f.Type == "list" {
			t = "[]" + f.GoType
			items = f.Items
		}
		g.b.p("\t%s %s\n", f.Go, t)
	}
	g.b.p("}\n")
	if items != nil {
		g.b.p("\n")
		g.recordType(name+"Item", items)
	}
}

func hasCustom(fs []Field) bool {
	for _, f := range fs {
		if f.GoCustom != "" {
			return true
		}
	}
	return false
}

// path is f's Go expression: under the message's pointer field, through
// the local p.
func path(base string, ptr *GoPtr, goPath string) string {
	if ptr != nil && strings.HasPrefix(goPath, ptr.Field+".") {
		return "p." + strings.TrimPrefix(goPath, ptr.Field+".")
	}
	return base + goPath
}

// encValue is the statement appending the value x of a scalar field f.
func encValue(what string, f Field, x string) (string, error) {
	switch f.GoType {
	case "", "bool":
	case "ms":
		x += ".Milliseconds()"
	case "us":
		x += ".Microseconds()"
	case "ms_or_none":
		x = "millisOrNone(" + x + ")"
	case "error_text":
		x = "errText(" + x + ")"
	}
	if f.GoCut != "" {
		if f.Type != "str" {
			return "", fmt.Errorf("%s.%s: go_cut on a %s", what, f.Name, f.Type)
		}
		x = "cut(" + x + ", " + f.GoCut + ")"
	}
	switch f.Type {
	case "u8":
		if f.GoType == "bool" {
			return "b = append(b, boolByte(" + x + "))", nil
		}
		return "b = append(b, byte(" + x + "))", nil
	case "u16":
		return "b = appendU16(b, uint16(" + x + "))", nil
	case "u32", "i32":
		return "b = appendU32(b, uint32(" + x + "))", nil
	case "u64", "i64":
		return "b = appendU64(b, uint64(" + x + "))", nil
	case "str":
		return "b = appendStr(b, " + x + ")", nil
	case "bytes":
		return "b = appendBytes(b, " + x + ")", nil
	case "error":
		return "b = appendError(b, " + x + ")", nil
	}
	return "", fmt.Errorf("%s.%s: no Go encoder for a %s", what, f.Name, f.Type)
}

// decValue is the expression reading a scalar field f as its Go value.
func decValue(what string, f Field) (string, error) {
	var x string
	switch f.Type {
	case "u8", "u16", "u32", "u64", "str", "bytes":
		x = "r." + f.Type + "()"
	case "i32":
		x = "int32(r.u32())"
	case "i64":
		x = "int64(r.u64())"
	case "error":
		return "r.error()", nil
	default:
		return "", fmt.Errorf("%s.%s: no Go decoder for a %s", what, f.Name, f.Type)
	}
	switch f.GoType {
	case "":
		return x, nil
	case "bool":
		return x + " != 0", nil
	case "ms":
		return "time.Duration(" + x + ") * time.Millisecond", nil
	case "us":
		return "time.Duration(" + x + ") * time.Microsecond", nil
	case "ms_or_none":
		return "durationOrNone(" + x + ")", nil
	case "error_text":
		return "errOrNil(" + x + ")", nil
	}
	return f.GoType + "(" + x + ")", nil
}

// empty is the condition that the Go value x of f is empty.
func empty(f Field, x string) string {
	switch f.Type {
	case "str":
		return x + ` == ""`
	case "list", "bytes":
		return "len(" + x + ") == 0"
	}
	return x + " == 0"
}

// nonEmpty is the condition that the Go value x of f is not empty.
func nonEmpty(f Field, x string) string {
	switch f.Type {
	case "str":
		return x + ` != ""`
	case "list", "bytes":
		return "len(" + x + ") > 0"
	}
	return x + " != 0"
}

// emptyMessage says what an announced field left empty is.
func emptyMessage(f Field, flag string) string {
	name, fl := strings.ReplaceAll(f.Name, "_", " "), strings.ToLower(strings.ReplaceAll(flag, "_", " "))
	switch f.Type {
	case "str", "bytes":
		return "an empty " + name + " with the " + fl + " flag"
	case "list":
		return "an empty " + name + " list with the " + fl + " flag"
	}
	return name + " 0 with the " + fl + " flag"
}

// announced is the field whose if_flag is the flag named name.
func announced(fs []Field, name string) (Field, bool) {
	for _, f := range fs {
		if f.IfFlag == name {
			return f, true
		}
	}
	return Field{}, false
}

// encFields writes the statements appending fs, the fields of what, from
// the Go value at base.
func (g *goCodec) encFields(what string, fs []Field, base string, ptr *GoPtr) error {
	b := &g.b
	for _, f := range fs {
		x := path(base, ptr, f.Go)
		if f.IfFlag != "" {
			b.p("\t\tif flags&%s != 0 {\n", flagGo(fs, f.IfFlag))
		}
		switch {
		case f.GoCustom != "":
			target := strings.TrimSuffix(base, ".")
			if ptr != nil {
				target = "p"
			}
			b.p("\t\tb = append%s(b, %s, start)\n", f.GoCustom, target)
		case len(f.Flags) > 0:
			b.p("\t\tvar flags uint8\n")
			for _, fl := range f.Flags {
				cond, err := flagCond(what, fs, fl, base, ptr)
				if err != nil {
					return err
				}
				b.p("\t\tif %s {\n\t\t\tflags |= %s\n\t\t}\n", cond, fl.Go)
			}
			b.p("\t\tb = append(b, flags)\n")
		case f.Type == "list":
			if f.Go == "" {
				return fmt.Errorf("%s.%s: a list without go or go_custom", what, f.Name)
			}
			b.p("\t\tb = appendU16(b, uint16(len(%s)))\n", x)
			if f.GoType == "" {
				// A list of one field per item: the Go slice's elements.
				if len(f.Items) != 1 || f.Items[0].Go != "" {
					return fmt.Errorf("%s.%s: a list without go_type has one item field without go", what, f.Name)
				}
				st, err := encValue(what, f.Items[0], "it")
				if err != nil {
					return err
				}
				b.p("\t\tfor _, it := range %s {\n\t\t\t%s\n\t\t}\n", x, st)
				break
			}
			b.p("\t\tfor i := range %s {\n\t\t\tit := &%s[i]\n", x, x)
			if err := g.encFields(what+"."+f.Name, f.Items, "it.", nil); err != nil {
				return err
			}
			b.p("\t\t}\n")
		default:
			if f.Go == "" {
				return fmt.Errorf("%s.%s: no go path", what, f.Name)
			}
			st, err := encValue(what, f, x)
			if err != nil {
				return err
			}
			b.p("\t\t%s\n", st)
		}
		if f.IfFlag != "" {
			b.p("\t\t}\n")
		}
	}
	return nil
}

// flagGo is the Go constant of the flag named name among fs's flags.
func flagGo(fs []Field, name string) string {
	for _, f := range fs {
		for _, fl := range f.Flags {
			if fl.Name == name {
				return fl.Go
			}
		}
	}
	panic("no flag " + name)
}

// flagCond is the condition under which fl's bit is set.
func flagCond(what string, fs []Field, fl Flag, base string, ptr *GoPtr) (string, error) {
	if fl.GoField != "" {
		x := path(base, ptr, fl.GoField)
		if fl.GoValue != "" {
			return x + " == " + fl.GoValue, nil
		}
		return x, nil
	}
	f, ok := announced(fs, fl.Name)
	if !ok {
		return "", fmt.Errorf("%s: flag %s has no go_field and announces no field", what, fl.Name)
	}
	return nonEmpty(f, path(base, ptr, f.Go)), nil
}

// decFields writes the statements reading fs, the fields of what, into
// the Go value at base. strict: an event's (see genGoCodec).
func (g *goCodec) decFields(what string, fs []Field, base string, ptr *GoPtr, strict bool) error {
	b := &g.b
	fail := func(msg string) string { return "return errors.New(" + fmt.Sprintf("%q", what+": "+msg) + ")" }
	for _, f := range fs {
		x := path(base, ptr, f.Go)
		var presence string // the flag announcing f without a Go field of its own
		if f.IfFlag != "" {
			b.p("\t\tif flags&%s != 0 {\n", flagGo(fs, f.IfFlag))
			for _, ff := range fs {
				for _, fl := range ff.Flags {
					if fl.Name == f.IfFlag && fl.GoField == "" {
						presence = fl.Name
					}
				}
			}
		}
		switch {
		case f.GoCustom != "":
			target := strings.TrimSuffix(base, ".")
			if ptr != nil {
				target = "p"
			}
			b.p("\t\tread%s(r, %s)\n", f.GoCustom, target)
		case len(f.Flags) > 0:
			b.p("\t\tflags := r.u8()\n")
			if strict {
				var all []string
				values := map[string][]Flag{}
				var fields []string
				for _, fl := range f.Flags {
					all = append(all, fl.Go)
					if fl.GoValue != "" {
						if values[fl.GoField] == nil {
							fields = append(fields, fl.GoField)
						}
						values[fl.GoField] = append(values[fl.GoField], fl)
					}
				}
				b.p("\t\tif flags&^(%s) != 0 && r.err == nil {\n\t\t\treturn errors.New(%q + strconv.Itoa(int(flags)))\n\t\t}\n", strings.Join(all, "|"), what+": unknown flags ")
				for _, field := range fields {
					vs := values[field]
					if len(vs) != 2 {
						return fmt.Errorf("%s: %d flags give %s a value: the decoder refuses two set, not more", what, len(vs), field)
					}
					both := vs[0].Go + "|" + vs[1].Go
					b.p("\t\tif flags&(%s) == %s {\n\t\t\t%s\n\t\t}\n", both, both,
						fail("both the "+strings.ToLower(vs[0].Name)+" and the "+strings.ToLower(vs[1].Name)+" flag"))
				}
			}
			for _, fl := range f.Flags {
				if fl.GoField == "" {
					continue
				}
				y := path(base, ptr, fl.GoField)
				if fl.GoValue != "" {
					b.p("\t\tif flags&%s != 0 {\n\t\t\t%s = %s\n\t\t}\n", fl.Go, y, fl.GoValue)
				} else {
					b.p("\t\t%s = flags&%s != 0\n", y, fl.Go)
				}
			}
		case f.Type == "list":
			b.p("\t\tfor i, n := 0, int(r.u16()); i < n && r.err == nil; i++ {\n")
			if f.GoType == "" {
				v, err := decValue(what, f.Items[0])
				if err != nil {
					return err
				}
				b.p("\t\t\t%s = append(%s, %s)\n\t\t}\n", x, x, v)
				break
			}
			b.p("\t\t\tvar it %s\n", f.GoType)
			if err := g.decFields(what+"."+f.Name, f.Items, "it.", nil, strict); err != nil {
				return err
			}
			b.p("\t\t\t%s = append(%s, it)\n\t\t}\n", x, x)
		default:
			v, err := decValue(what, f)
			if err != nil {
				return err
			}
			b.p("\t\t%s = %s\n", x, v)
		}
		if presence != "" && strict {
			b.p("\t\tif %s && r.err == nil {\n\t\t\t%s\n\t\t}\n", empty(f, x), fail(emptyMessage(f, presence)))
		}
		if f.IfFlag != "" {
			b.p("\t\t}\n")
		}
	}
	return nil
}

// itemCodec writes the writer and the reader of one item of the custom
// list f: append<name>(b, fields...) and read<name>(r) (fields...).
func (g *goCodec) itemCodec(name, msg string, f Field) error {
	b := &g.b
	var params, results, reads []string
	var body w
	for _, it := range f.Items {
		t, ok := goWire[it.Type]
		if !ok {
			return fmt.Errorf("%s.%s: a %s in a custom list", name, it.Name, it.Type)
		}
		v := lowerCamel(it.Name)
		params = append(params, v+" "+t)
		results = append(results, t)
		st, err := encValue(name, it, v)
		if err != nil {
			return err
		}
		body.p("\t%s\n", st)
		x, err := decValue(name, it)
		if err != nil {
			return err
		}
		reads = append(reads, x)
	}
	b.p("\n// append%s appends one item of %s's %s.\nfunc append%s(b []byte, %s) []byte {\n", name, msg, f.Name, name, strings.Join(params, ", "))
	b.Write(body.Bytes())
	b.p("\treturn b\n}\n")
	b.p("\n// read%s reads one item of %s's %s:\n// %s.\nfunc read%s(r *reader) (%s) {\n", name, msg, f.Name, strings.Join(params, ", "), name, strings.Join(results, ", "))
	// Go evaluates a return's operands left to right: the spec's order.
	b.p("\treturn %s\n}\n", strings.Join(reads, ", "))
	return nil
}
