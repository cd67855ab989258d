// Package xsort is sort.Slice for the engine, which imports it as
//
//	import sort "github.com/liblock/liblock/core/internal/xsort"
//
// Natively (without the liblockwasm build tag) Slice is sort.Slice. Under
// the tag (liblock.wasm) it is a short generic sort, so the module links
// neither package sort nor slices nor internal/reflectlite's Swapper
// (≈ 22 KB): insertion sort up to 12 elements, as sort.Slice itself sorts
// them (so alike, equal elements included), heapsort above, where sort.Slice
// too is not stable (the engine sorts by unique keys: node indexes and ids;
// TestSliceIsSorts).
//
// Layer: under the engine, one of its stand-ins for the standard library
// (with xtime and xerrors). It imports only the standard library and is
// imported by core/engine.
package xsort
