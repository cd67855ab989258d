package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const url1 = `"redis://127.0.0.1:6379"`

func TestParseConfig(t *testing.T) {
	ok := []struct {
		js    string
		check func(core.Config) bool
	}{
		{`{"nodes":[` + url1 + `]}`, func(c core.Config) bool {
			return len(c.Nodes) == 1 && c.NodeTimeout == 0 && c.DriftFactor == nil && c.KeyPrefix == ""
		}},
		{`{"nodes":[` + url1 + `,"redis://u:p@127.0.0.1:2/3"],"node_timeout_ms":75,"drift_factor":0.05,"key_prefix":"app:"}`,
			func(c core.Config) bool {
				return len(c.Nodes) == 2 && c.NodeTimeout == 75*time.Millisecond && *c.DriftFactor == 0.05 && c.KeyPrefix == "app:"
			}},
		{`{"nodes":[` + url1 + `],"drift_factor":0}`, func(c core.Config) bool { return c.DriftFactor != nil && *c.DriftFactor == 0 }},
		{` {"drift_factor":0.1,"nodes":[` + url1 + `]} `, func(c core.Config) bool { return *c.DriftFactor == 0.1 }},
		{`{"nodes":[` + url1 + `],"node_timeout_ms":60000}`, func(c core.Config) bool { return c.NodeTimeout == time.Minute }},
		{`{"nodes":["unix:///tmp/r.sock"],"key_prefix":"\u00e9"}`, func(c core.Config) bool { return c.KeyPrefix == "é" }},
		{`{"nodes":[` + url1 + `],"owner":"worker-7"}`, func(c core.Config) bool { return c.Owner == "worker-7" }},
		{`{"nodes":[` + url1 + `],"owner":""}`, func(c core.Config) bool { return c.Owner == "" }},
		{`{"nodes":[` + url1 + `],"owner":"` + strings.Repeat("o", 128) + `"}`, func(c core.Config) bool { return len(c.Owner) == 128 }},
	}
	for _, tc := range ok {
		cfg, err := parseConfig(tc.js)
		if assert.NoError(t, err, tc.js) {
			assert.True(t, tc.check(cfg), "%s: got %+v", tc.js, cfg)
		}
	}
	bad := []string{
		``, `x`, `null`, `[]`, `"s"`, `1`, `{}`, `{"nodes":[]}`, `{"nodes":null}`, `{"nodes":{}}`,
		`{"nodes":"redis://h:1"}`, `{"nodes":[1]}`, `{"nodes":[null]}`, `{"nodes":[""]}`,
		`{"nodes":["http://h:1"]}`, `{"nodes":["redis://h:1?bogus=1"]}`, `{"Nodes":[` + url1 + `]}`,
		`{"nodes":[` + url1 + `],"extra":1}`, `{"nodes":[` + url1 + `],"nodes":[` + url1 + `]}`,
		`{"nodes":[` + url1 + `],"node_timeout_ms":0}`, `{"nodes":[` + url1 + `],"node_timeout_ms":-1}`,
		`{"nodes":[` + url1 + `],"node_timeout_ms":1.0}`, `{"nodes":[` + url1 + `],"node_timeout_ms":1e3}`,
		`{"nodes":[` + url1 + `],"node_timeout_ms":"5"}`, `{"nodes":[` + url1 + `],"node_timeout_ms":null}`,
		`{"nodes":[` + url1 + `],"node_timeout_ms":60001}`, `{"nodes":[` + url1 + `],"node_timeout_ms":9223372036854775808}`,
		`{"nodes":[` + url1 + `],"node_timeout_ms":true}`,
		`{"nodes":[` + url1 + `],"drift_factor":-0.01}`, `{"nodes":[` + url1 + `],"drift_factor":0.11}`,
		`{"nodes":[` + url1 + `],"drift_factor":"0"}`, `{"nodes":[` + url1 + `],"drift_factor":null}`,
		`{"nodes":[` + url1 + `],"drift_factor":1e999}`,
		`{"nodes":[` + url1 + `],"key_prefix":1}`, `{"nodes":[` + url1 + `],"key_prefix":null}`,
		`{"nodes":[` + url1 + `],"key_prefix":"` + strings.Repeat("p", 257) + `"}`,
		`{"nodes":[` + url1 + `]} x`, `{"nodes":[` + url1 + `]}{}`, `{"nodes":[` + url1 + `]`, `{"nodes":[` + url1 + `],}`,
		`{"nodes":[` + strings.Repeat(url1+",", 64) + url1 + `]}`,
		"{\"nodes\":[" + url1 + "],\"key_prefix\":\"\xff\"}",
		`{"nodes":[` + url1 + `],"owner":"a/b"}`, `{"nodes":[` + url1 + `],"owner":1}`,
		`{"nodes":[` + url1 + `],"owner":null}`, `{"nodes":[` + url1 + `],"owner":"` + strings.Repeat("o", 129) + `"}`,
		`{"nodes":[` + url1 + `],"owner":"x","owner":"y"}`, `{"nodes":[` + url1 + `],"Owner":"x"}`,
	}
	for _, js := range bad {
		_, err := parseConfig(js)
		assert.ErrorIs(t, err, core.ErrInvalidArgument, js)
		assert.Equal(t, int32(statusInvalidArgument), statusOf(err), "%s: status", js)
	}
	// a password never shows in a message
	_, err := parseConfig(`{"nodes":["redis://user:hunter2@[::1"]}`)
	require.Error(t, err, "a malformed URL accepted")
	assert.NotContains(t, err.Error(), "hunter2", "the password in a message")
}

func TestParseOptions(t *testing.T) {
	ok := map[string]acquireOptions{
		`{}`:                                       {},
		`{"wait_ms":0}`:                            {},
		`{"wait_ms":250,"auto_extend":true}`:       {Wait: 250 * time.Millisecond, AutoExtend: true},
		` { "auto_extend" : false } `:              {},
		`{"wait_ms":86400000}`:                     {Wait: 24 * time.Hour},
		`{"auto_extend":true,"wait_ms":1}`:         {Wait: time.Millisecond, AutoExtend: true},
		`{"wait_ms":12345678,"auto_extend":false}`: {Wait: 12345678 * time.Millisecond},
		`{"fence":true}`:                           {Fence: true},
		`{"fence":false,"wait_ms":5}`:              {Wait: 5 * time.Millisecond},
		`{"token":"0123456789abcdef"}`:             {Token: "0123456789abcdef"},
		`{"token":"0123456789abcdef","fence":false,"auto_extend":true}`: {Token: "0123456789abcdef", AutoExtend: true},
		`{"token":"` + strings.Repeat("t", 512) + `"}`:                  {Token: strings.Repeat("t", 512)},
		`{"token":"\u00e9123456789abcdef"}`:                             {Token: "é123456789abcdef"},
	}
	for js, want := range ok {
		got, err := parseOptions(js, false)
		if assert.NoError(t, err, js) {
			assert.Equal(t, want, got, js)
		}
	}
	got, err := parseOptions("", true)
	require.NoError(t, err, "NULL options")
	assert.Zero(t, got, "NULL options")
	bad := []string{
		``, `x`, `null`, `[]`, `true`, `{"wait":1}`, `{"WAIT_MS":1}`, `{"wait_ms":-1}`, `{"wait_ms":-0}`,
		`{"wait_ms":1.5}`, `{"wait_ms":1e2}`, `{"wait_ms":"1"}`, `{"wait_ms":null}`, `{"wait_ms":86400001}`,
		`{"wait_ms":99999999999999999999999}`, `{"auto_extend":1}`, `{"auto_extend":"true"}`,
		`{"auto_extend":null}`, `{"wait_ms":1,"wait_ms":1}`, `{} {}`, `{}x`, `{"wait_ms":1`, `{"wait_ms":01}`,
		`{"wait_ms":1,}`, `{,}`, `{"wait_ms"}`, `{"wait_ms":1 "fence":true}`, `{"wait_ms":[1]}`, `{"fence":{}}`,
		"{\"token\":\"\xff0123456789abcdef\"}", `{}}`, `{"a":1}`, `{1:1}`,
	}
	for _, js := range bad {
		_, err := parseOptions(js, false)
		assert.ErrorIs(t, err, core.ErrInvalidArgument, js)
	}
	// The new keys: each bad value names its key.
	named := map[string]string{
		`{"token":"short"}`: "token",
		`{"token":""}`:      "token",
		`{"token":"` + strings.Repeat("t", 513) + `"}`: "token",
		`{"token":5}`:                    "token",
		`{"token":null}`:                 "token",
		`{"token":["0123456789abcdef"]}`: "token",
		`{"fence":1}`:                    "fence",
		`{"fence":"true"}`:               "fence",
		`{"fence":null}`:                 "fence",
		`{"fence":true,"token":"0123456789abcdef"}`:               "fence",
		`{"token":"0123456789abcdef","fence":true}`:               "fence",
		`{"token":"0123456789abcdef","token":"0123456789abcdef"}`: "options",
		`{"fence":true,"fence":true}`:                             "options",
		`{"Fence":true}`:                                          "options",
	}
	for js, arg := range named {
		_, err := parseOptions(js, false)
		var ae *core.ArgumentError
		if assert.ErrorAs(t, err, &ae, "%s: want an ArgumentError naming %s", js, arg) {
			assert.Equal(t, arg, ae.Arg, "%s: the argument named by %v", js, err)
		}
	}
}

func TestTTL(t *testing.T) {
	for _, ms := range []int64{0, -1, 86400001, 1 << 62, -1 << 63} {
		_, err := ttlFromMillis(ms)
		assert.ErrorIs(t, err, core.ErrInvalidArgument, "%d ms", ms)
	}
	for _, ms := range []int64{1, 1000, 86400000} {
		d, err := ttlFromMillis(ms)
		if assert.NoError(t, err, "%d ms", ms) {
			assert.Equal(t, time.Duration(ms)*time.Millisecond, d, "%d ms", ms)
		}
	}
}

func TestStatusOf(t *testing.T) {
	cases := []struct {
		err  error
		want int32
	}{
		{nil, statusOK},
		{core.ErrNotAcquired, statusNotAcquired},
		{core.ErrLost, statusLost},
		{&core.ArgumentError{Arg: "x", Reason: "y"}, statusInvalidArgument},
		{&core.UnavailableError{Op: "acquire"}, statusUnavailable},
		{core.ErrClosed, statusCanceled},
		{errors.Join(errors.New("x"), errCanceledForTest()), statusCanceled},
		{errors.New("something else"), statusInternal},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, statusOf(c.err), "%v", c.err)
	}
}

// FuzzConfigJSON: parseConfig never panics, and whatever it accepts is a
// valid configuration with at least one node.
func FuzzConfigJSON(f *testing.F) {
	for _, s := range []string{
		`{"nodes":["redis://127.0.0.1:6379"]}`,
		`{"nodes":["redis://u:p@127.0.0.1:1/2","rediss://h:2","unix:///s"],"node_timeout_ms":50,"drift_factor":0,"key_prefix":"p:"}`,
		`{"nodes":[]}`, `{"nodes":[null]}`, `{"node_timeout_ms":1.5}`, `{"nodes":["redis://h:1"]} x`,
		`{"drift_factor":-0}`, `{"nodes":["redis://h:1"],"drift_factor":1e-400}`, `null`, ``, `{`, `{"a":`,
		`{"nodes":["redis://h:1"],"key_prefix":"\ud800"}`, "{\"nodes\":[\"redis://h:1\"],\"key_prefix\":\"\xff\"}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cfg, err := parseConfig(s)
		if err != nil {
			require.ErrorIs(t, err, core.ErrInvalidArgument, "%q", s)
			return
		}
		require.NotEmpty(t, cfg.Nodes, "%q: accepted a config without nodes", s)
		require.NoError(t, cfg.Validate(), "%q: accepted an invalid config %+v", s, cfg)
		require.GreaterOrEqual(t, cfg.NodeTimeout, time.Duration(0), "%q: out of range %+v", s, cfg)
		if cfg.DriftFactor != nil {
			require.GreaterOrEqual(t, *cfg.DriftFactor, 0.0, "%q: out of range %+v", s, cfg)
			require.LessOrEqual(t, *cfg.DriftFactor, core.MaxDriftFactor, "%q: out of range %+v", s, cfg)
		}
	})
}

// FuzzOptionsJSON: parseOptions never panics and never accepts a negative or
// too long wait.
func FuzzOptionsJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"wait_ms":0}`, `{"wait_ms":100,"auto_extend":true}`, `{"wait_ms":-1}`, `{"wait_ms":1.0}`,
		`{"auto_extend":null}`, `{"x":1}`, `{} {}`, `[]`, ``, `{"wait_ms":86400001}`, `{"wait_ms":1e3}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := parseOptions(s, false)
		if err != nil {
			require.ErrorIs(t, err, core.ErrInvalidArgument, "%q", s)
			return
		}
		require.GreaterOrEqual(t, o.Wait, time.Duration(0), "%q: wait out of range", s)
		require.LessOrEqual(t, o.Wait, core.MaxWait, "%q: wait out of range", s)
	})
}
