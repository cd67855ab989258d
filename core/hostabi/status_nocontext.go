//go:build liblockwasm

package hostabi

// contextEnded is false in liblock.wasm (the liblockwasm tag): the module
// links no package context, so no error of its can be a context's end, and
// context would bring package time with it (≈ 240 KB of the module).
func contextEnded(error) bool { return false }
