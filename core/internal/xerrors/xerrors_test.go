package xerrors_test

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/liblock/liblock/core/internal/xerrors"
	"github.com/stretchr/testify/assert"
)

type argErr struct{ arg string }

func (e *argErr) Error() string { return "arg " + e.arg }

type valErr struct{ n int }

func (e valErr) Error() string { return "val" }

type wrap struct {
	msg string
	err error
}

func (w *wrap) Error() string { return w.msg }
func (w *wrap) Unwrap() error { return w.err }

type multi []error

func (m multi) Error() string   { return "multi" }
func (m multi) Unwrap() []error { return m }

// asser answers As for *argErr by building one from a valErr.
type asser struct{ n int }

func (a asser) Error() string { return "asser" }
func (a asser) As(target any) bool {
	if p, ok := target.(**argErr); ok {
		*p = &argErr{arg: "from asser"}
		return true
	}
	return false
}

type temporary interface{ Temporary() bool }

type tempErr struct{}

func (tempErr) Error() string   { return "temp" }
func (tempErr) Temporary() bool { return true }

// TestAsIsErrors: with and without the liblockwasm tag, As finds what
// errors.As finds, in the same place of the tree.
func TestAsIsErrors(t *testing.T) {
	a1, a2 := &argErr{"one"}, &argErr{"two"}
	trees := []error{
		nil, errors.New("plain"), a1, valErr{3}, &wrap{"w", a1}, &wrap{"w", &wrap{"ww", a2}}, &wrap{"w", nil},
		multi{nil, errors.New("x"), &wrap{"w", a2}, a1}, multi{}, &wrap{"w", multi{valErr{1}, a1}},
		asser{1}, &wrap{"w", asser{2}}, multi{asser{3}, a1}, multi{a1, asser{3}}, tempErr{}, &wrap{"w", tempErr{}},
		errors.Join(valErr{7}, a2), &fs.PathError{Op: "open", Path: "p", Err: os.ErrNotExist},
	}
	for _, err := range trees {
		var got, want *argErr
		if g, w := xerrors.As(err, &got), errors.As(err, &want); g != w || (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("As(%v, *argErr) = %v %v; errors.As: %v %v", err, g, got, w, want)
		}
		var gotV, wantV valErr
		if g, w := xerrors.As(err, &gotV), errors.As(err, &wantV); g != w || gotV != wantV {
			t.Errorf("As(%v, valErr) = %v %v; errors.As: %v %v", err, g, gotV, w, wantV)
		}
		var gotT, wantT temporary
		if g, w := xerrors.As(err, &gotT), errors.As(err, &wantT); g != w || gotT != wantT {
			t.Errorf("As(%v, temporary) = %v %v; errors.As: %v %v", err, g, gotT, w, wantT)
		}
		var gotP, wantP *fs.PathError
		if g, w := xerrors.As(err, &gotP), errors.As(err, &wantP); g != w || gotP != wantP {
			t.Errorf("As(%v, *fs.PathError) = %v; errors.As: %v", err, g, w)
		}
	}
	e := xerrors.New("x")
	assert.EqualError(t, e, "x", "New")
	assert.True(t, xerrors.Is(&wrap{"w", e}, e), "Is through a wrap")
	assert.False(t, xerrors.Is(e, errors.New("x")), "Is compares identity, as package errors does")
}
