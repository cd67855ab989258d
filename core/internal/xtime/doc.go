// Package xtime is the part of package time that the engine, hostabi and
// nodeurl use: Duration and its constants, Milliseconds, a monotonic Now
// and Since, and ParseDuration. They import it as
//
//	import time "github.com/liblock/liblock/core/internal/xtime"
//
// Natively (without the liblockwasm build tag) every name is an alias of
// package time's own, so time.Duration and the engine's Duration are one
// type and core.Client passes its durations straight through.
//
// Under the liblockwasm tag (wasm/scripts/build.sh), xtime is its own small
// implementation and the module does not link package time, which with
// internal/godebug, internal/bisect and the runtime's metrics it needs cost
// ≈ 240 KB of liblock.wasm.
//
// Layer: under the engine, one of its stand-ins for the standard library
// (with xsort and xerrors). It imports only the standard library and is
// imported by core/engine, core/engine/nodeurl and core/hostabi.
package xtime
