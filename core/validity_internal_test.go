package core

import (
	"testing"
	"time"
)

// The validity formula from the Redlock description, including the 2 ms
// for Redis's expiry precision that other clients forget.
func TestValidity(t *testing.T) {
	zero := 0.0
	for _, tc := range []struct {
		drift   *float64
		ttl     time.Duration
		elapsed time.Duration
		want    time.Duration
	}{
		{nil, 10 * time.Second, 0, 10*time.Second - 100*time.Millisecond - 2*time.Millisecond},
		{nil, 10 * time.Second, 3 * time.Second, 7*time.Second - 102*time.Millisecond},
		{&zero, 10 * time.Second, time.Second, 9*time.Second - 2*time.Millisecond},
		{nil, 2 * time.Millisecond, time.Microsecond, -time.Microsecond - 20*time.Microsecond}, // non-positive: a failure
	} {
		c := &Client{drift: Config{DriftFactor: tc.drift}.driftFactor()}
		if got := c.validity(tc.ttl, tc.elapsed); got != tc.want {
			t.Errorf("validity(%v, %v) drift %v = %v, want %v", tc.ttl, tc.elapsed, c.drift, got, tc.want)
		}
	}
}
