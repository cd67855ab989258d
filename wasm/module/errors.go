//go:build wasip1

package main

import "strconv"

// panicText is what fmt's %v prints for the panics the module can raise
// (errors, Stringers, strings, integers), without fmt: fmt, with reflect
// and internal/fmtsort, would add ≈ 190 KB to the module.
func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case interface{ String() string }:
		return v.String()
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	}
	return "panic with a value of another type"
}
