// Package host runs liblock.wasm (liblock's I/O-free engine built for
// wasip1) on wazero. An Engine is one engine inside one module instance,
// with the method set of *engine.Engine (the core.Engine interface), so
// that package core's driver — the one Go implementation of sockets,
// timers and the public API — runs it exactly as it runs the native
// engine. The module's interface is core/hostabi/PROTOCOL.md; this
// package only moves bytes in and out of module memory
// (hostabi.Adapter does the encoding).
//
// Layer: an artifact's Go driver, at the top beside capi: it runs core's
// driver over liblock.wasm's engine. It imports core, core/engine,
// core/hostabi and wazero; never wasm/module's sources (it loads the built
// file). Only tests import it.
package host
