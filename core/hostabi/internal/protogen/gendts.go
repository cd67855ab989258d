package main

import (
	"fmt"
	"strings"
)

// NodeOptions is the spec's node_options: the Node binding's option
// objects, from which genDTS writes their TypeScript declarations and
// genOptionsJS the table the binding checks their types by.
type NodeOptions struct {
	Types []struct {
		Name   string   `json:"name"`
		Doc    string   `json:"doc"`
		Values []string `json:"values"`
	} `json:"types"`
	Sets []struct {
		Name   string   `json:"name"`
		Doc    string   `json:"doc"`
		Fields []Option `json:"fields"`
	} `json:"sets"`
}

// Option is one field of an option object.
type Option struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	TS       string `json:"ts"`
	Required bool   `json:"required"`
	Limit    string `json:"limit"`
	// OwnDefault: the limit's default is not this option's (the doc says what is).
	OwnDefault bool   `json:"own_default"`
	Doc        string `json:"doc"`
}

// tsType is the option's TypeScript type.
func (o Option) tsType() (string, error) {
	switch o.Type {
	case "ms", "int", "number":
		return "number", nil
	case "bool":
		return "boolean", nil
	case "str":
		return "string", nil
	case "signal":
		return "LockAbortSignal", nil
	case "unknown":
		return "unknown", nil
	case "function", "enum", "custom":
		if o.TS == "" {
			return "", fmt.Errorf("option %s: a %s needs its ts", o.Name, o.Type)
		}
		return o.TS, nil
	}
	return "", fmt.Errorf("option %s: unknown type %q", o.Name, o.Type)
}

// limitText is what an option's limit says of its range and default.
func limitText(s *Spec, o Option) (string, error) {
	if o.Limit == "" {
		return "", nil
	}
	for _, l := range s.Limits {
		if l.Name != o.Limit {
			continue
		}
		unit := map[string]string{"ms": " ms", "bytes": " bytes of UTF-8"}[l.Unit]
		t := fmt.Sprintf("Range: %s..%s%s", num(l.Min), num(l.Max), unit)
		if l.Default != nil && !o.OwnDefault {
			t += "; default " + num(*l.Default)
		}
		return t + ".", nil
	}
	return "", fmt.Errorf("option %s: no limit %q", o.Name, o.Limit)
}

// docComment writes text as a /** */ comment at indent, wrapped at 100 columns.
func docComment(b *w, indent, text string) {
	words := strings.Fields(text)
	if len(indent)+len(text)+7 <= 100 {
		b.p("%s/** %s */\n", indent, strings.Join(words, " "))
		return
	}
	b.p("%s/**\n", indent)
	line := ""
	for _, word := range words {
		if line != "" && len(indent)+3+len(line)+1+len(word) > 100 {
			b.p("%s * %s\n", indent, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	b.p("%s * %s\n%s */\n", indent, line, indent)
}

// genDTS writes bindings/node/lib/options.gen.d.ts: the option objects'
// types, re-exported by index.d.ts.
func genDTS(s *Spec) ([]byte, error) {
	var b w
	b.p("// %s\n", header)
	b.p("// The option objects of liblock's Node binding (the spec's node_options), re-exported by\n// index.d.ts. Every duration is an integer number of milliseconds.\n")
	b.p("import type { LockAbortSignal } from '../index';\n")
	for _, t := range s.NodeOptions.Types {
		b.p("\n")
		docComment(&b, "", t.Doc)
		b.p("export type %s = '%s';\n", t.Name, strings.Join(t.Values, "' | '"))
	}
	for _, set := range s.NodeOptions.Sets {
		b.p("\n")
		if set.Doc != "" {
			docComment(&b, "", set.Doc)
		}
		b.p("export interface %s {\n", set.Name)
		for _, o := range set.Fields {
			ts, err := o.tsType()
			if err != nil {
				return nil, err
			}
			lt, err := limitText(s, o)
			if err != nil {
				return nil, err
			}
			docComment(&b, "  ", strings.TrimSpace(o.Doc+" "+lt))
			opt := "?"
			if o.Required {
				opt = ""
			}
			b.p("  %s%s: %s;\n", o.Name, opt, ts)
		}
		b.p("}\n")
	}
	return b.Bytes(), nil
}

// genOptionsJS writes bindings/node/lib/options.gen.js: each option
// object's known fields and their kinds (an enum: its values), which the
// binding checks the types of (the engine judges the values).
func genOptionsJS(s *Spec) ([]byte, error) {
	values := map[string][]string{}
	for _, t := range s.NodeOptions.Types {
		values[t.Name] = t.Values
	}
	var b w
	b.p("// %s\n'use strict';\n", header)
	b.p("// The Node binding's option objects (the spec's node_options): each one's fields\n// and their kinds, an enum's values, for the binding's type checks (lib/args.js).\n\n")
	b.p("const OPTIONS = Object.freeze({\n")
	for _, set := range s.NodeOptions.Sets {
		var fs []string
		for _, o := range set.Fields {
			if _, err := o.tsType(); err != nil {
				return nil, err
			}
			kind := jsStr(o.Type)
			if o.Type == "enum" {
				vs, ok := values[o.TS]
				if !ok {
					return nil, fmt.Errorf("option %s: no type %s", o.Name, o.TS)
				}
				q := make([]string, len(vs))
				for i, v := range vs {
					q[i] = jsStr(v)
				}
				kind = "Object.freeze([" + strings.Join(q, ", ") + "])"
			}
			fs = append(fs, o.Name+": "+kind)
		}
		b.p("  %s: Object.freeze({ %s }),\n", set.Name, strings.Join(fs, ", "))
	}
	b.p("});\n\nmodule.exports = { OPTIONS };\n")
	return b.Bytes(), nil
}
