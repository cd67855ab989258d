//go:build !liblockwasm

package xsort

import "sort"

// Slice is sort.Slice.
func Slice[E any](x []E, less func(i, j int) bool) { sort.Slice(x, less) }
