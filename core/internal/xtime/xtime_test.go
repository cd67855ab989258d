package xtime_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/liblock/liblock/core/internal/xtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With and without the liblockwasm tag (go test -tags liblockwasm runs the
// module's implementation natively), xtime must answer as package time.

func TestUnitsAreTimes(t *testing.T) {
	for _, c := range []struct {
		got  xtime.Duration
		want time.Duration
	}{
		{xtime.Nanosecond, time.Nanosecond}, {xtime.Microsecond, time.Microsecond},
		{xtime.Millisecond, time.Millisecond}, {xtime.Second, time.Second},
		{xtime.Minute, time.Minute}, {xtime.Hour, time.Hour},
	} {
		assert.Equal(t, int64(c.want), int64(c.got))
	}
}

var durations = []int64{0, 1, 999, 1000, 1001, 999_999, 1_000_000, 1_500_000, 999_999_999, 1e9, 1_000_000_001,
	-1, -999_999, -1_000_001, 1<<63 - 1, -1 << 63, -1<<63 + 1, 86_400_000_000_000, 59e9, 60e9, 3599e9, 3600e9, 3661e9 + 5e8}

func TestMillisecondsIsTimes(t *testing.T) {
	for _, d := range durations {
		assert.Equal(t, time.Duration(d).Milliseconds(), xtime.Duration(d).Milliseconds(), "Duration(%d).Milliseconds()", d)
		assert.Equal(t, time.Duration(d).Microseconds(), xtime.Duration(d).Microseconds(), "Duration(%d).Microseconds()", d)
	}
}

func TestStringIsTimes(t *testing.T) {
	ds := append([]int64(nil), durations...)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		ds = append(ds, rng.Int64()>>rng.IntN(64), -(rng.Int64() >> rng.IntN(64)))
	}
	for _, d := range ds {
		if got, want := xtime.Duration(d).String(), time.Duration(d).String(); got != want {
			t.Errorf("Duration(%d).String() = %q, want %q", d, got, want)
		}
	}
}

func TestSinceIsMonotonic(t *testing.T) {
	start := xtime.Now()
	realStart := time.Now()
	prev := xtime.Since(start)
	require.GreaterOrEqual(t, int64(prev), int64(0), "Since(Now())")
	// Deliberate: the test is that Since follows real time, so it lets a
	// known time pass and compares.
	time.Sleep(20 * time.Millisecond)
	got := xtime.Since(start)
	real := time.Since(realStart)
	assert.GreaterOrEqual(t, int64(got), int64(prev), "Since went back")
	assert.GreaterOrEqual(t, int64(got), int64(20*time.Millisecond), "Since after a 20 ms sleep")
	assert.LessOrEqual(t, int64(got), int64(real)+int64(time.Millisecond), "Since after a 20 ms sleep, against time.Since %d ns", int64(real))
}

func TestParseDurationIsTimes(t *testing.T) {
	corpus := []string{
		"", "0", "+0", "-0", "00", "0s", "1", "1s", "-1s", "+1s", "1.5h", "-1.5h", "2h45m", "300ms",
		"1us", "1µs", "1μs", "1ns", "1m", "1h", ".5s", "5.s", ".s", "-.s", "s", "1x", "1sm", "1.0.0s",
		"9223372036854775807ns", "9223372036854775808ns", "-9223372036854775808ns", "-9223372036854775809ns",
		"9223372036854775807", "2562047h47m16.854775807s", "2562047h47m16.854775808s", "2562048h",
		"0.100000000000000000000h", "0.830103483285477580700h", "1.00000000000000000000000000001s",
		"99999999999999999999s", "1e3s", "1 s", " 1s", "1s ", "1\x00s", "1\"s", "1\\s", "1\xffs",
		"1\ufffds", "1é", "10d", "-", "+", "--1s", "1h-1m", "3h2m1s4ms5us6ns", ".", "1.", "1.s",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789.+-nsuµmh \x00é"
	for range 20000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		corpus = append(corpus, string(b))
	}
	for _, s := range corpus {
		got, gotErr := xtime.ParseDuration(s)
		want, wantErr := time.ParseDuration(s)
		if (gotErr == nil) != (wantErr == nil) || int64(got) != int64(want) ||
			gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("ParseDuration(%q) = %d, %v; time's: %d, %v", s, int64(got), gotErr, int64(want), wantErr)
		}
	}
}
