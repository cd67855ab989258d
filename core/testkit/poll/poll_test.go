package poll

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a require.TestingT that records a failure instead of ending
// the test, so the helper's own failure can be checked.
type recorder struct {
	msg    string
	failed bool
}

func (r *recorder) Errorf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }
func (r *recorder) FailNow()                          { r.failed = true; runtime.Goexit() }

// run calls Eventually on a goroutine of its own, since FailNow ends it.
func run(within time.Duration, cond func() bool) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Eventually(r, within, "the thing", cond)
	}()
	<-done
	return r
}

func TestEventuallyWaitsForTheCondition(t *testing.T) {
	start, checks := time.Now(), 0
	r := run(time.Second, func() bool { checks++; return time.Since(start) > 20*time.Millisecond })
	assert.False(t, r.failed, r.msg)
	assert.Greater(t, checks, 1, "checked once only: the condition was not polled")
}

// The negative control: a condition that never holds fails, naming it.
func TestEventuallyFailsOnTimeout(t *testing.T) {
	start := time.Now()
	r := run(30*time.Millisecond, func() bool { return false })
	require.True(t, r.failed, "a condition that never held passed")
	assert.Contains(t, r.msg, "not within 30ms: the thing")
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond, "gave up before the deadline")
}

func TestWaitChecksOnceMoreAtTheDeadline(t *testing.T) {
	checks := 0
	assert.True(t, Wait(-time.Second, func() bool { checks++; return checks == 2 }))
}
