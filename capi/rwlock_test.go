package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
)

// TestParseMode: "mode" in options_json, and each bad value names mode.
func TestParseMode(t *testing.T) {
	for js, want := range map[string]core.LockMode{
		`{"mode":"read"}`: core.ModeRead, `{"mode":"write","wait_ms":5}`: core.ModeWrite, `{"mode":"exclusive"}`: core.ModeExclusive,
		`{"mode":"write","fence":true}`: core.ModeWrite,
	} {
		o, err := parseOptions(js, false)
		require.NoError(t, err, js)
		assert.Equal(t, want, o.Mode, js)
	}
	for _, js := range []string{
		`{"mode":"bogus"}`, `{"mode":"Read"}`, `{"mode":""}`, `{"mode":1}`, `{"mode":true}`, `{"mode":null}`, `{"mode":["read"]}`,
		`{"mode":"read","token":"0123456789abcdef"}`, `{"token":"0123456789abcdef","mode":"write"}`,
	} {
		_, err := parseOptions(js, false)
		var ae *core.ArgumentError
		if assert.True(t, errors.As(err, &ae), js) {
			assert.Equal(t, "mode", ae.Arg, js)
		}
	}
}
