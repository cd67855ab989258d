// Package interop runs the shared behaviour suite (core/testkit/locktest)
// against the Node and Python bindings, each backend, through the children
// bindings/interop/children/suite.js and suite.py (package
// core/testkit/locktest/remote). make test-interop (run.sh) sets up what they
// need and sets LIBLOCK_INTEROP_REQUIRED; without it these tests skip, so
// that make test-go does not run them a second time.
//
// Layer: tests, at the top: they import the test kits
// (core/testkit/locktest and locktest/remote) and drive the Node, Python
// and Go children as processes.
package interop
