// Command luagen writes scripts_lua.go: the engine's Lua scripts (the .lua
// files of the current directory, core/engine under go generate) as Go
// string constants, one per file, named after it (acquire_token.lua:
// acquireTokenSrc). The engine used to load them with go:embed, which links
// embed, io/fs and package time into liblock.wasm; constants link nothing.
//
//	go generate ./core/engine   (after editing a .lua file)
//
// TestScriptSources checks the generated file against the .lua files.
//
// Layer: a build tool (go generate), beside the engine: it imports only the
// standard library and writes core/engine's source; nothing imports it.
package main
