// Package poll is the one way liblock's Go tests wait for a condition:
// poll it, with a deadline, instead of sleeping for a guessed time.
//
// testify's require.Eventually runs the condition on a goroutine of its
// own. The conditions here often call require on the test's t (a failed
// INFO is a failure, not a "not yet"), which must happen on the test's
// goroutine, and some count goroutines (a poller goroutine would count
// itself); so these helpers poll in the caller's goroutine.
//
// Layer: a test kit, beside the library, never under it: only tests, other
// test kits and test commands import it. It imports the standard library
// and testify.
package poll
