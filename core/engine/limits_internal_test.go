package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The semaphore slot hints (one per semaphore a client used) stay within
// semHintMax however many semaphores a long-lived client touches; a hint
// set after the map was cleared is kept.
func TestSemHintIsBounded(t *testing.T) {
	e, err := New(Config{Nodes: oneNode, NodeTimeout: time.Second}, &fakeEnv{})
	require.NoError(t, err)
	most := 0
	for i := range 10 * semHintMax {
		e.semHintSet(SemKey("s"+strconv.Itoa(i), 3), 1+i%7)
		most = max(most, len(e.semHint))
	}
	assert.LessOrEqual(t, most, semHintMax)
	last := SemKey("s"+strconv.Itoa(10*semHintMax-1), 3)
	assert.Equal(t, 1+(10*semHintMax-1)%7, e.semHint[last], "the newest hint is kept")
	e.semHintSet(last, 0)
	assert.NotContains(t, e.semHint, last, "a hint of slot 0 is dropped")
}
