//go:build !liblockwasm

package xtime

import "time"

// Duration is time.Duration.
type Duration = time.Duration

// Time is time.Time.
type Time = time.Time

// The units of package time.
const (
	Nanosecond  = time.Nanosecond
	Microsecond = time.Microsecond
	Millisecond = time.Millisecond
	Second      = time.Second
	Minute      = time.Minute
	Hour        = time.Hour
)

// Now is time.Now.
func Now() Time { return time.Now() }

// Since is time.Since.
func Since(t Time) Duration { return time.Since(t) }

// ParseDuration is time.ParseDuration.
func ParseDuration(s string) (Duration, error) { return time.ParseDuration(s) }
