//go:build !liblockwasm

package xsort

import "sort"

// Slice is sort.Slice.
func Slice[S ~[]E, E any](x S, less func(i, j int) bool) { sort.Slice(x, less) }
