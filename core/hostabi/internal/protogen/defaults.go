package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Hosts are the hosts a default is given for, in the order of docs/defaults.md's table.
var Hosts = []string{"go", "c", "node", "python", "java"}

// hostTitle is a host as the docs name it.
var hostTitle = map[string]string{"go": "Go", "c": "C", "node": "Node", "python": "Python", "java": "Java"}

// Default is one of the spec's "defaults": what a caller gets without asking.
type Default struct {
	Name string `json:"name"`
	// Limit names the limit whose default this is (its value and unit).
	Limit string `json:"limit"`
	// Value is the spec's value when Limit is empty: a string (telemetry:
	// on, off, installed; pending_at_close: CANCELED, CLOSED).
	Value json.RawMessage `json:"value"`
	What  string          `json:"what"`
	// Hosts: the hosts whose own value differs from the spec's, and why.
	Hosts map[string]HostDefault `json:"hosts"`

	unit string // the limit's unit ("ms", "factor"), or "" for a word
}

// HostDefault is a host's own value of a default and the reason it differs.
type HostDefault struct {
	Value json.RawMessage `json:"value"`
	Why   string          `json:"why"`
}

// The words a word-valued default may take.
var defaultWords = map[string][]string{
	"telemetry":        {"on", "off", "installed"},
	"pending_at_close": {"CANCELED", "CLOSED"},
}

// checkDefaults resolves each default's limit and checks its values.
func checkDefaults(s *Spec) error {
	limits := map[string]Limit{}
	for _, l := range s.Limits {
		limits[l.Name] = l
	}
	for i := range s.Defaults {
		d := &s.Defaults[i]
		if d.Limit != "" {
			l, ok := limits[d.Limit]
			if !ok || l.Default == nil {
				return fmt.Errorf("default %s: limit %q has no default", d.Name, d.Limit)
			}
			d.Value, d.unit = json.RawMessage(num(*l.Default)), l.Unit
		}
		for h, hd := range d.Hosts {
			if hostTitle[h] == "" {
				return fmt.Errorf("default %s: unknown host %q", d.Name, h)
			}
			if hd.Why == "" {
				return fmt.Errorf("default %s: host %s differs without a why", d.Name, h)
			}
		}
		for _, h := range Hosts {
			if _, err := d.word(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// raw is host h's value as JSON: its own, or the spec's.
func (d Default) raw(h string) json.RawMessage {
	if hd, ok := d.Hosts[h]; ok {
		return hd.Value
	}
	return d.Value
}

// none reports whether host h has no default: the value is required (null).
func (d Default) none(h string) bool { return string(d.raw(h)) == "null" }

// number is host h's value of a limit's default, in the limit's unit.
func (d Default) number(h string) float64 {
	var f float64
	_ = json.Unmarshal(d.raw(h), &f) // checked by word
	return f
}

// word is host h's value of a word-valued default ("" for a number).
func (d Default) word(h string) (string, error) {
	raw := d.raw(h)
	if d.none(h) {
		return "", nil
	}
	if d.unit != "" {
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return "", fmt.Errorf("default %s: %s's value %s is not a number", d.Name, h, raw)
		}
		return "", nil
	}
	var w string
	if err := json.Unmarshal(raw, &w); err != nil {
		return "", fmt.Errorf("default %s: %s's value %s is not a word", d.Name, h, raw)
	}
	for _, ok := range defaultWords[d.Name] {
		if w == ok {
			return w, nil
		}
	}
	return "", fmt.Errorf("default %s: %s's value %q is not one of %v", d.Name, h, w, defaultWords[d.Name])
}

// literal is host h's value as a JavaScript or Python literal (ms, a
// factor, or a quoted word).
func (d Default) literal(h string) string {
	if d.none(h) {
		return "null"
	}
	if d.unit != "" {
		return num(d.number(h))
	}
	w, _ := d.word(h)
	return `"` + w + `"`
}

// prose is host h's value as the docs say it.
func (d Default) prose(h string) string {
	if d.none(h) {
		return "none: required"
	}
	if d.unit == "" {
		w, _ := d.word(h)
		switch w {
		case "installed":
			return "on when the OpenTelemetry API is installed"
		case "CANCELED":
			return "canceled (status 6), \"the client is closed\""
		case "CLOSED":
			return "the closed-client error"
		}
		return w
	}
	v := d.number(h)
	switch {
	case d.Name == "wait" && v == 0:
		return "one attempt"
	case d.unit == "ms" && v >= 1000 && int64(v)%1000 == 0:
		return num(v/1000) + " s"
	case d.unit == "ms":
		return num(v) + " ms"
	}
	return num(v)
}

// genGoDefaults: the Go host's own defaults of package core: those the
// engine's constants (limits_gen.go) do not give, as Go needs them.
func genGoDefaults(s *Spec) ([]byte, error) {
	var b w
	b.p("// %s\n\npackage core\n\nimport \"time\"\n\n", header)
	b.p("// The Go host's defaults from the spec's \"defaults\" (docs/defaults.md); the\n// others are the engine's (engine.DefaultNodeTimeout, ...).\nconst (\n")
	for _, d := range s.Defaults {
		why := ""
		if hd, ok := d.Hosts["go"]; ok {
			why = " Not the spec's: " + hd.Why + "."
		}
		switch d.Name {
		case "wait":
			b.p("\t// defaultWait: %s.%s\n\tdefaultWait = %s * time.Millisecond\n", d.What, why, num(d.number("go")))
		case "telemetry":
			w, _ := d.word("go")
			if w == "installed" {
				return nil, fmt.Errorf("default telemetry: Go links the OpenTelemetry API: on or off, not %q", w)
			}
			b.p("\t// defaultTelemetry: %s.%s\n\tdefaultTelemetry = %v\n", d.What, why, w == "on")
		}
	}
	b.p(")\n")
	return gofmt(&b)
}

// genDefaultsDoc replaces the part of docs/defaults.md between its markers
// with the table of the spec's defaults.
func genDefaultsDoc(s *Spec, page []byte) ([]byte, error) {
	const begin, end = "<!-- defaults: generated by protogen from the spec; do not edit -->\n", "<!-- end of the generated defaults -->\n"
	text := string(page)
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("docs/defaults.md: the markers %q and %q are missing", strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	var b w
	b.p("| default | the spec |")
	for _, h := range Hosts {
		b.p(" %s |", hostTitle[h])
	}
	b.p(" why a host differs |\n|---|---|")
	for range Hosts {
		b.p("---|")
	}
	b.p("---|\n")
	for _, d := range s.Defaults {
		b.p("| %s (`%s`) | %s |", d.What, d.Name, d.prose(""))
		var whys []string
		for _, h := range Hosts {
			if hd, ok := d.Hosts[h]; ok {
				b.p(" **%s** |", d.prose(h))
				whys = append(whys, hostTitle[h]+": "+hd.Why+".")
			} else {
				b.p(" %s |", d.prose(h))
			}
		}
		if len(whys) == 0 {
			whys = []string{"—"}
		}
		b.p(" %s |\n", strings.Join(whys, " "))
	}
	return []byte(text[:i+len(begin)] + b.String() + text[j:]), nil
}
