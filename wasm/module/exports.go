//go:build wasip1

package main

import (
	"strconv"
	"unsafe"

	"github.com/liblock/liblock/core/hostabi"
)

// The exports of core/hostabi/PROTOCOL.md over module memory. The
// module is single-threaded and runs no goroutine of its own: every export
// returns as soon as the engine has handled the event.

// buffers keeps every lock_buffer alive: they are never freed or moved.
var buffers [][]byte

// maxBuffer bounds one lock_buffer (64 MiB).
const maxBuffer = 64 << 20

//go:wasmexport lock_abi_version
func lockABIVersion() int32 { return hostabi.ABIVersion }

//go:wasmexport lock_engine_protocol_version
func lockEngineProtocolVersion() int32 { return hostabi.ProtocolVersion }

// lock_buffer returns size bytes of module memory that the host may use for
// input and output for the rest of the instance's life; 0 for a size
// outside 1 .. 64 MiB.
//
//go:wasmexport lock_buffer
func lockBuffer(size int32) unsafe.Pointer {
	if size <= 0 || size > maxBuffer {
		return nil
	}
	b := make([]byte, size)
	buffers = append(buffers, b)
	return unsafe.Pointer(unsafe.SliceData(b))
}

// mem is module memory [p, p+n); nil for n <= 0.
func mem(p unsafe.Pointer, n int32) []byte {
	if n <= 0 || p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// lock_engine_new returns an engine handle, or -status with out holding
// u32 length + the message (cut to fit; nothing when out_cap < 4).
//
//go:wasmexport lock_engine_new
func lockEngineNew(cfg unsafe.Pointer, cfgLen int32, out unsafe.Pointer, outCap int32) (ret int64) {
	o := mem(out, outCap)
	defer func() {
		if r := recover(); r != nil {
			ret = fail(o, hostabi.Internal, "liblock: internal error: "+panicText(r))
		}
	}()
	switch {
	case cfgLen < 0 || (cfg == nil && cfgLen > 0):
		return fail(o, hostabi.InvalidArgument, "liblock: invalid argument: config: no bytes at the pointer")
	case cfgLen > hostabi.MaxJSONLength:
		return fail(o, hostabi.InvalidArgument, "liblock: invalid argument: config: longer than "+strconv.Itoa(hostabi.MaxJSONLength)+" bytes")
	}
	h, err := hostabi.New(string(mem(cfg, cfgLen)))
	if err != nil {
		return fail(o, hostabi.StatusOf(err), err.Error())
	}
	return int64(h)
}

func fail(out []byte, status int32, msg string) int64 {
	if len(out) >= 4 {
		n := min(len(msg), len(out)-4)
		out[0], out[1], out[2], out[3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
		copy(out[4:], msg[:n])
	}
	return -int64(status)
}

// lock_engine_step is lock_engine_step of liblock.so over module memory.
//
//go:wasmexport lock_engine_step
func lockEngineStep(h uint64, in unsafe.Pointer, inLen int32, out unsafe.Pointer, outCap int32) (ret int64) {
	defer func() {
		if r := recover(); r != nil {
			ret = -int64(hostabi.Internal)
		}
	}()
	if !hostabi.Exists(h) {
		return -int64(hostabi.InvalidHandle)
	}
	if inLen < 0 || (in == nil && inLen > 0) || out == nil || outCap < 0 {
		return -int64(hostabi.InvalidArgument)
	}
	n, err := hostabi.Step(h, mem(in, inLen), mem(out, outCap))
	if err != nil {
		return -int64(hostabi.StatusOf(err))
	}
	return int64(n)
}

// lock_engine_free drops an engine at once: LOCK_OK, or
// LOCK_INVALID_HANDLE.
//
//go:wasmexport lock_engine_free
func lockEngineFree(h uint64) int32 {
	if hostabi.Free(h) != nil {
		return hostabi.InvalidHandle
	}
	return hostabi.OK
}
