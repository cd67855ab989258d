// Package xerrors is package errors with a generic As, which a file
// imports as
//
//	import errors "github.com/liblock/liblock/core/internal/xerrors"
//
// errors.As finds the target's type with internal/reflectlite (TypeOf,
// AssignableTo, Implements, Value.Elem().Set): measured, its two calls in
// hostabi cost liblock.wasm 48,916 bytes. As here takes a *T, so a type
// assertion to T does the same. Natively (without the liblockwasm build tag)
// it is errors.As itself. New and Is are package errors' everywhere (a
// hand-written Is saves only ≈ 1.7 KB of the module: not worth a second
// copy of its rules).
//
// Layer: under the engine, one of its stand-ins for the standard library
// (with xtime and xsort). It imports only the standard library and is
// imported by core/hostabi.
package xerrors
