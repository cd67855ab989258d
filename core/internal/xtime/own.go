//go:build liblockwasm

package xtime

import _ "unsafe" // go:linkname

// Duration is time.Duration: nanoseconds.
type Duration int64

// The units of package time.
const (
	Nanosecond  Duration = 1
	Microsecond          = 1000 * Nanosecond
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
	Minute               = 60 * Second
	Hour                 = 60 * Minute
)

// Milliseconds is time.Duration's: d as an integer millisecond count.
func (d Duration) Milliseconds() int64 { return int64(d) / 1e6 }

// Microseconds is time.Duration's: d as an integer microsecond count.
func (d Duration) Microseconds() int64 { return int64(d) / 1e3 }

// Time is a reading of the monotonic clock (package time's monotonic
// reading, without a wall clock).
type Time struct{ mono int64 }

// Now returns the monotonic clock's current reading.
func Now() Time { return Time{nanotime()} }

// Since is the monotonic time elapsed since t.
func Since(t Time) Duration { return Duration(nanotime() - t.mono) }

// nanotime is the runtime's monotonic clock, the one package time reads
// (on wasip1: WASI clock_time_get of the monotonic clock).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64
