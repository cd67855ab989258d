package hostabi

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A small strict JSON reader: liblock.wasm cannot afford encoding/json
// (0.7 MB of its 2 MiB budget), and the configuration and options are flat
// objects.

type jkind int

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

// jvalue is a parsed JSON value.
type jvalue struct {
	kind jkind
	b    bool
	s    string // a string's value, or a number's text
	arr  []jvalue
	obj  []jfield // an object's members, in order
}

type jfield struct {
	key string
	val jvalue
}

type jparser struct {
	s     string
	i     int
	depth int
}

var errJSONDepth = errors.New("nested too deeply")

// parseJSONObject parses s, which must be exactly one JSON object, and
// returns its members in order.
func parseJSONObject(s string) ([]jfield, error) {
	p := &jparser{s: s}
	p.ws()
	if p.i >= len(p.s) {
		return nil, errors.New("unexpected end of input")
	}
	if p.s[p.i] != '{' {
		if _, err := p.value(); err != nil {
			return nil, err
		}
		return nil, errNotObject
	}
	fields, err := p.object(true)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, errTrailing
	}
	return fields, nil
}

var (
	errNotObject = errors.New("not an object")
	errTrailing  = errors.New("data after the object")
)

func (p *jparser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) fail(what string) error {
	if p.i >= len(p.s) {
		return errors.New("unexpected end of input")
	}
	return errors.New(what + " at offset " + strconv.Itoa(p.i))
}

func (p *jparser) object(keep bool) ([]jfield, error) {
	p.i++ // '{'
	p.depth++
	if p.depth > 64 {
		return nil, errJSONDepth
	}
	defer func() { p.depth-- }()
	var fields []jfield
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return fields, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.fail("expected a key")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if keep {
			fields = append(fields, jfield{key, v})
		}
		p.ws()
		if p.i >= len(p.s) {
			return nil, p.fail("")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return fields, nil
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *jparser) value() (jvalue, error) {
	p.ws()
	if p.i >= len(p.s) {
		return jvalue{}, p.fail("")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		fields, err := p.object(true)
		return jvalue{kind: jObject, obj: fields}, err
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return jvalue{kind: jString, s: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return jvalue{kind: jBool, b: true}, nil
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return jvalue{kind: jBool}, nil
	case strings.HasPrefix(p.s[p.i:], "null"):
		p.i += 4
		return jvalue{kind: jNull}, nil
	}
	return jvalue{}, p.fail("invalid character")
}

func (p *jparser) array() (jvalue, error) {
	p.i++ // '['
	p.depth++
	if p.depth > 64 {
		return jvalue{}, errJSONDepth
	}
	defer func() { p.depth-- }()
	v := jvalue{kind: jArray}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return v, nil
	}
	for {
		e, err := p.value()
		if err != nil {
			return v, err
		}
		v.arr = append(v.arr, e)
		p.ws()
		if p.i >= len(p.s) {
			return v, p.fail("")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return v, nil
		default:
			return v, p.fail("expected ',' or ']'")
		}
	}
}

func (p *jparser) number() (jvalue, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	intStart := p.i
	if digits() == 0 {
		return jvalue{}, p.fail("invalid number")
	}
	if p.s[intStart] == '0' && p.i-intStart > 1 {
		return jvalue{}, p.fail("invalid number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return jvalue{}, p.fail("invalid number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return jvalue{}, p.fail("invalid number")
		}
	}
	return jvalue{kind: jNumber, s: p.s[start:p.i]}, nil
}

func (p *jparser) str() (string, error) {
	p.i++ // '"'
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return "", p.fail("")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.fail("")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", p.fail("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if strings.HasPrefix(p.s[p.i:], `\u`) {
						p.i += 2
						r2, ok = p.hex4()
						if !ok {
							return "", p.fail("invalid \\u escape")
						}
					}
					r = utf16.DecodeRune(r, r2) // U+FFFD when unpaired
				}
				b.WriteRune(r)
			default:
				return "", p.fail("invalid escape")
			}
		default:
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && n == 1 {
				return "", p.fail("invalid UTF-8")
			}
			b.WriteString(p.s[p.i : p.i+n])
			p.i += n
		}
	}
}

func (p *jparser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}
