package main

import (
	"strconv"
	"strings"
)

// javaUpper is a spec name as a Java constant: node_timeout → NODE_TIMEOUT.
func javaUpper(name string) string { return strings.ToUpper(name) }

// javaNum writes a limit as a Java long (whole numbers) or double literal.
func javaNum(v float64, unit string) string {
	if unit == "factor" {
		s := num(v)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return num(v) + "L"
}

// genJava: the status codes, their messages, and the argument limits and
// defaults of the Java binding (bindings/java), whose parameter names are
// the Node binding's (camelCase; the spec's "node" names).
func genJava(s *Spec) ([]byte, error) {
	var b w
	b.p("// %s\n\npackage io.github.liblock;\n\n", header)
	b.p("/** The C ABI's status codes and the argument limits and defaults, from the spec. */\n")
	b.p("final class Spec {\n    private Spec() {}\n\n")
	b.p("    /** The C ABI version this binding is written against (lock_abi_version). */\n")
	b.p("    static final int ABI_VERSION = %d;\n\n", s.ABIVersion)
	b.p("    // Status codes: the C ABI's LOCK_* numbers.\n")
	for _, st := range s.Statuses {
		b.p("    static final int %s = %d;\n", st.Name, st.Status)
	}
	b.p("\n    /** Each status's default message, by its code. */\n    static final String[] STATUS_MESSAGES = {\n")
	for _, st := range s.Statuses {
		b.p("        %s,\n", strconv.Quote(st.Message))
	}
	b.p("    };\n\n    /** Each status's C name, by its code. */\n    static final String[] STATUS_NAMES = {\n")
	for _, st := range s.Statuses {
		b.p("        %s,\n", strconv.Quote(st.C))
	}
	b.p("    };\n\n    // Limits, in the spec's units (ms, bytes, count, factor).\n")
	for _, l := range s.Limits {
		n := javaUpper(l.Name)
		typ := "long"
		if l.Unit == "factor" {
			typ = "double"
		}
		b.p("    static final %s %s_MIN = %s;\n    static final %s %s_MAX = %s;\n", typ, n, javaNum(l.Min, l.Unit), typ, n, javaNum(l.Max, l.Unit))
		if l.Default != nil {
			b.p("    static final %s %s_DEFAULT = %s;\n", typ, n, javaNum(*l.Default, l.Unit))
		}
	}
	b.p("\n    // The Java host's defaults (the spec's \"defaults\", docs/defaults.md): ms for durations.\n")
	for _, d := range s.Defaults {
		switch {
		case d.none("java"):
			// required in Java: no constant
		case d.unit == "factor":
			b.p("    static final double DEFAULT_%s = %s;\n", javaUpper(d.Name), javaNum(d.number("java"), d.unit))
		case d.unit != "":
			b.p("    static final long DEFAULT_%s = %s;\n", javaUpper(d.Name), javaNum(d.number("java"), d.unit))
		default:
			b.p("    static final String DEFAULT_%s = %s;\n", javaUpper(d.Name), d.literal("java"))
		}
	}
	b.p("\n    /** The C ABI's name of an argument (ttl_ms) → the Java parameter's (ttl). */\n")
	b.p("    static final java.util.Map<String, String> JAVA_NAMES = java.util.Map.ofEntries(\n")
	seen := map[string]bool{}
	var entries []string
	for _, l := range s.Limits {
		if l.C == l.Node.Name || seen[l.C] {
			continue
		}
		seen[l.C] = true
		entries = append(entries, "        java.util.Map.entry("+strconv.Quote(l.C)+", "+strconv.Quote(l.Node.Name)+")")
	}
	b.p("%s);\n}\n", strings.Join(entries, ",\n"))
	return b.Bytes(), nil
}
