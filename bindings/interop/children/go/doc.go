// Command go is one side of the cross-runtime re-entry tests
// (bindings/interop/reenter.test.js), in Go over core; the protocol is described in
// bindings/interop/children/node.js. make test-interop builds it to
// build/interop-child-go. The backend field is ignored: Go has one.
//
// Layer: a test command, at the top, over the Go driver: it imports only
// core and the standard library.
package main
