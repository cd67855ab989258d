package ownthread

import "context"

type key struct{}

// With marks ctx as a call made on the caller's own (non-Go) thread.
func With(ctx context.Context) context.Context { return context.WithValue(ctx, key{}, true) }

// Is tells whether ctx was marked by With.
func Is(ctx context.Context) bool {
	if ctx == nil {
		return false
	}
	v, _ := ctx.Value(key{}).(bool)
	return v
}
