package poll

import (
	"time"

	"github.com/stretchr/testify/require"
)

// Interval is how long the helpers wait between two checks: short against
// the deadlines, long enough not to load a 2-core machine.
const Interval = 5 * time.Millisecond

// Wait checks cond until it holds or within has passed, in the caller's
// goroutine; it reports whether cond held. cond is always checked at least
// once, and once more after the deadline, so a slow machine that
// oversleeps still sees a condition that became true meanwhile.
func Wait(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return cond()
		}
		time.Sleep(Interval)
	}
	return true
}

// Eventually fails t now (FailNow) unless cond holds within the deadline;
// what says what the test waited for, in the failure message.
func Eventually(t require.TestingT, within time.Duration, what string, cond func() bool) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	require.True(t, Wait(within, cond), "not within %v: %s", within, what)
}
