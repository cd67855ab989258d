package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Spec is core/hostabi/spec/protocol.json.
type Spec struct {
	ABIVersion      int       `json:"abi_version"`
	ProtocolVersion int       `json:"protocol_version"`
	Retired         []Message `json:"retired_actions"`
	Events          []Message `json:"events"`
	Actions         []Message `json:"actions"`
	Error           struct {
		Fields []Field `json:"fields"`
	} `json:"error"`
	Statuses []Status `json:"statuses"`
	Limits   []Limit  `json:"limits"`
	// ReplyLimits: what the RESP decoder holds of a node's reply.
	ReplyLimits []ReplyLimit `json:"reply_limits"`
	Defaults    []Default    `json:"defaults"`
	Spin        Spin         `json:"spin"`
	// NodeOptions: gendts.go.
	NodeOptions NodeOptions `json:"node_options"`
}

// Spin is how the Node and Python hosts spin on a request's replies (the
// spec's "spin_comment" says what each is).
type Spin struct {
	Polls    int `json:"polls"`
	Credit   int `json:"credit"`
	Probe    int `json:"probe"`
	EagerRun int `json:"eager_run"`
}

// Message is an event or an action.
type Message struct {
	Kind   int     `json:"kind"`
	Name   string  `json:"name"`
	Go     string  `json:"go"`
	Fields []Field `json:"fields"`
	// GoPtr: the pointer field of the Go value that holds this message's
	// fields (gencodec.go).
	GoPtr *GoPtr `json:"go_ptr"`
}

// GoPtr is a pointer field of hostabi.Action (Dial, Inspection): a
// decoded message allocates it, an encoded one reads a nil one as zero.
type GoPtr struct {
	Field string `json:"field"`
	Type  string `json:"type"`
}

// Field is one field of a message, of the error record or of a list item.
type Field struct {
	Name   string  `json:"name"`
	Type   string  `json:"type"`
	Flags  []Flag  `json:"flags"`
	Prefix string  `json:"prefix"`
	IfFlag string  `json:"if_flag"`
	Items  []Field `json:"items"`
	// How the Go codec (gencodec.go) maps the field: Go, its path in the
	// Go value (hostabi.Event, hostabi.Action, a list's item type);
	// GoType, a conversion or the Go type; GoCut, the constant an encoded
	// str is cut to; GoCustom, the name of hand-written hooks that map it.
	Go       string `json:"go"`
	GoType   string `json:"go_type"`
	GoCut    string `json:"go_cut"`
	GoCustom string `json:"go_custom"`
}

// Flag is one bit of a u8 flags field.
type Flag struct {
	Bit  int    `json:"bit"`
	Name string `json:"name"`
	Go   string `json:"go"`
	// GoField is the Go field the bit stands for: a bool, or with GoValue
	// the field that has that value when the bit is set. A bit without it
	// announces the field whose if_flag names it, and is set when that
	// field is not empty.
	GoField string `json:"go_field"`
	GoValue string `json:"go_value"`
}

// Status is one status code.
type Status struct {
	Status      int     `json:"status"`
	Name        string  `json:"name"`
	C           string  `json:"c"`
	Go          string  `json:"go"`
	Message     string  `json:"message"`
	NodeClass   *string `json:"node_class"`
	NodeCode    string  `json:"node_code"`
	PythonClass *string `json:"python_class"`
}

// Limit is one argument limit.
type Limit struct {
	Name      string   `json:"name"`
	Min       float64  `json:"min"`
	Max       float64  `json:"max"`
	Default   *float64 `json:"default"`
	Unit      string   `json:"unit"`
	C         string   `json:"c"`
	GoMin     string   `json:"go_min"`
	GoMax     string   `json:"go_max"`
	GoDefault string   `json:"go_default"`
	Doc       string   `json:"doc"`
	Node      HostName `json:"node"`
	Python    HostName `json:"python"`
}

// ReplyLimit is one bound of the engine's RESP decoder.
type ReplyLimit struct {
	Name  string `json:"name"`
	Go    string `json:"go"`
	Value int64  `json:"value"`
	Unit  string `json:"unit"`
	Doc   string `json:"doc"`
}

// HostName is how a host names and measures an argument.
type HostName struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
}

// fixedSize is the width of a fixed-size type, 0 for the others.
var fixedSize = map[string]int{"u8": 1, "u16": 2, "u32": 4, "u64": 8, "i32": 4, "i64": 8}

// ParseSpec reads and checks the spec.
func ParseSpec(b []byte) (*Spec, error) {
	var s Spec
	d := json.NewDecoder(strings.NewReader(string(b)))
	if err := d.Decode(&s); err != nil {
		return nil, fmt.Errorf("protocol.json: %w", err)
	}
	retired := map[int]bool{}
	for _, m := range s.Retired {
		retired[m.Kind] = true
	}
	check := func(what string, ms []Message) error {
		want := 1
		for _, m := range ms {
			for what == "action" && retired[want] {
				want++
			}
			if m.Kind != want {
				return fmt.Errorf("%s %s: kind %d, want %d (kinds are 1, 2, … in order, but for retired ones)", what, m.Name, m.Kind, want)
			}
			want++
			if err := checkFields(what+" "+m.Name, m.Fields); err != nil {
				return err
			}
		}
		return nil
	}
	if err := check("event", s.Events); err != nil {
		return nil, err
	}
	if err := check("action", s.Actions); err != nil {
		return nil, err
	}
	if err := checkFields("error", s.Error.Fields); err != nil {
		return nil, err
	}
	for i, st := range s.Statuses {
		if st.Status != i {
			return nil, fmt.Errorf("status %s: %d, want %d", st.Name, st.Status, i)
		}
	}
	if err := checkDefaults(&s); err != nil {
		return nil, err
	}
	if sp := s.Spin; sp.Polls < 1 || sp.Credit < 1 || sp.Probe < 1 || sp.EagerRun < 1 {
		return nil, fmt.Errorf("spin: every count must be at least 1, got %+v", sp)
	}
	return &s, nil
}

func checkFields(what string, fs []Field) error {
	flags := map[string]bool{}
	for _, f := range fs {
		switch {
		case fixedSize[f.Type] > 0, f.Type == "str", f.Type == "bytes", f.Type == "error":
		case f.Type == "list":
			if err := checkFields(what+"."+f.Name, f.Items); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s.%s: unknown type %q", what, f.Name, f.Type)
		}
		if len(f.Flags) > 0 && f.Type != "u8" {
			return fmt.Errorf("%s.%s: flags on a %s", what, f.Name, f.Type)
		}
		for _, fl := range f.Flags {
			flags[fl.Name] = true
		}
		if f.IfFlag != "" && !flags[f.IfFlag] {
			return errors.New(what + "." + f.Name + ": if_flag " + f.IfFlag + " names no earlier flag")
		}
	}
	return nil
}

// flagBit is the bit of the flag named name among fs's flags.
func flagBit(fs []Field, name string) int {
	for _, f := range fs {
		for _, fl := range f.Flags {
			if fl.Name == name {
				return 1 << fl.Bit
			}
		}
	}
	panic("no flag " + name)
}

// camel is snake_case or UPPER_CASE as CamelCase.
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(strings.ToLower(s), "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// lowerCamel is snake_case as lowerCamelCase.
func lowerCamel(s string) string {
	c := camel(s)
	return strings.ToLower(c[:1]) + c[1:]
}
