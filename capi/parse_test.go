package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
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
		if err != nil {
			t.Errorf("%s: %v", tc.js, err)
			continue
		}
		if !tc.check(cfg) {
			t.Errorf("%s: got %+v", tc.js, cfg)
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
		if !errors.Is(err, core.ErrInvalidArgument) {
			t.Errorf("%s: got %v, want an ErrInvalidArgument", js, err)
		}
		if statusOf(err) != statusInvalidArgument {
			t.Errorf("%s: status %d", js, statusOf(err))
		}
	}
	// a password never shows in a message
	_, err := parseConfig(`{"nodes":["redis://user:hunter2@[::1"]}`)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("password leaked or accepted: %v", err)
	}
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
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, %v; want %+v", js, got, err, want)
		}
	}
	if got, err := parseOptions("", true); err != nil || !reflect.DeepEqual(got, acquireOptions{}) {
		t.Errorf("NULL options: %+v %v", got, err)
	}
	bad := []string{
		``, `x`, `null`, `[]`, `true`, `{"wait":1}`, `{"WAIT_MS":1}`, `{"wait_ms":-1}`, `{"wait_ms":-0}`,
		`{"wait_ms":1.5}`, `{"wait_ms":1e2}`, `{"wait_ms":"1"}`, `{"wait_ms":null}`, `{"wait_ms":86400001}`,
		`{"wait_ms":99999999999999999999999}`, `{"auto_extend":1}`, `{"auto_extend":"true"}`,
		`{"auto_extend":null}`, `{"wait_ms":1,"wait_ms":1}`, `{} {}`, `{}x`, `{"wait_ms":1`, `{"wait_ms":01}`,
		`{"wait_ms":1,}`, `{,}`, `{"wait_ms"}`, `{"wait_ms":1 "fence":true}`, `{"wait_ms":[1]}`, `{"fence":{}}`,
		"{\"token\":\"\xff0123456789abcdef\"}", `{}}`, `{"a":1}`, `{1:1}`,
	}
	for _, js := range bad {
		if _, err := parseOptions(js, false); !errors.Is(err, core.ErrInvalidArgument) {
			t.Errorf("%s: got %v, want an ErrInvalidArgument", js, err)
		}
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
		if !errors.As(err, &ae) || ae.Arg != arg {
			t.Errorf("%s: got %v, want an ArgumentError naming %s", js, err, arg)
		}
	}
}

func TestTTL(t *testing.T) {
	for _, ms := range []int64{0, -1, 86400001, 1 << 62, -1 << 63} {
		if _, err := ttlFromMillis(ms); !errors.Is(err, core.ErrInvalidArgument) {
			t.Errorf("%d: %v", ms, err)
		}
	}
	for _, ms := range []int64{1, 1000, 86400000} {
		if d, err := ttlFromMillis(ms); err != nil || d != time.Duration(ms)*time.Millisecond {
			t.Errorf("%d: %v %v", ms, d, err)
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
		if got := statusOf(c.err); got != c.want {
			t.Errorf("%v: %d, want %d", c.err, got, c.want)
		}
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
			if !errors.Is(err, core.ErrInvalidArgument) {
				t.Fatalf("%q: error is not ErrInvalidArgument: %v", s, err)
			}
			return
		}
		if len(cfg.Nodes) == 0 || cfg.Validate() != nil {
			t.Fatalf("%q: accepted an invalid config %+v", s, cfg)
		}
		if cfg.NodeTimeout < 0 || (cfg.DriftFactor != nil && (*cfg.DriftFactor < 0 || *cfg.DriftFactor > core.MaxDriftFactor)) {
			t.Fatalf("%q: out of range %+v", s, cfg)
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
			if !errors.Is(err, core.ErrInvalidArgument) {
				t.Fatalf("%q: error is not ErrInvalidArgument: %v", s, err)
			}
			return
		}
		if o.Wait < 0 || o.Wait > core.MaxWait {
			t.Fatalf("%q: wait %v out of range", s, o.Wait)
		}
	})
}
