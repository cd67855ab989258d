// Package locktest is liblock's behaviour suite: scenarios that any
// implementation of the lock (the native core, the wasm module through a
// host) must pass against real redis-server processes, including killed and
// frozen ones. Run calls every scenario as a subtest; a backend supplies a
// Factory.
//
// Layer: a test kit, beside the library, never under it: only tests and
// other test kits import it. It imports core (the API every backend
// offers), the other test kits (poll, redistest, faultproxy) and testify.
package locktest
