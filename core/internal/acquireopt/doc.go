// Package acquireopt is what a list of core.AcquireOptions asks for. It sits
// in the Go driver's layer, under core: core's AcquireOption is a func over
// Settings, so core's own test kits (locktest/remote, which carries an
// Acquire to a child process in another runtime) can read a list of options
// without core exporting a reader that only they would use. It imports only
// core/engine.
//
// Layer: the Go driver's (core), under it. It imports only the standard
// library and core/engine.
package acquireopt
