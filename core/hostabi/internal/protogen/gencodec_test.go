package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGoCodecRefusesUnmapped: a field or flag of the spec the Go codec
// cannot map is a generator error naming it, not a codec that drops it.
func TestGoCodecRefusesUnmapped(t *testing.T) {
	flags := func(fl ...Flag) Field { return Field{Name: "flags", Type: "u8", Flags: fl} }
	for _, tc := range []struct {
		name   string
		fields []Field
		err    string
	}{
		{"no go path", []Field{{Name: "lock", Type: "u64"}}, "EV.lock: no go path"},
		{"list without go", []Field{{Name: "xs", Type: "list", Items: []Field{{Name: "x", Type: "str"}}}}, "EV.xs: a list without go"},
		{"flag without a field", []Field{flags(Flag{Bit: 0, Name: "A", Go: "EvA"})}, "flag A has no go_field and announces no field"},
		{"three values of one field", []Field{flags(
			Flag{Bit: 0, Name: "A", Go: "EvA", GoField: "Mode", GoValue: "1"},
			Flag{Bit: 1, Name: "B", Go: "EvB", GoField: "Mode", GoValue: "2"},
			Flag{Bit: 2, Name: "C", Go: "EvC", GoField: "Mode", GoValue: "3"})}, "3 flags give Mode a value"},
		{"cut of an integer", []Field{{Name: "n", Type: "u32", Go: "N", GoCut: "max"}}, "EV.n: go_cut on a u32"},
	} {
		_, err := genGoCodec(&Spec{Events: []Message{{Kind: 1, Name: "EV", Go: "EvX", Fields: tc.fields}}})
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), tc.err, tc.name)
		}
	}
	// The spec's own fields all map.
	_, err := genGoCodec(spec(t))
	assert.NoError(t, err)
}
