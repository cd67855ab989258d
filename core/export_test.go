package core

// SkipCheckIdle turns off the look at idle connections before a command
// (the negative control of TestOneNodeIdleConnectionClosed) until the
// returned func runs.
func SkipCheckIdle() (restore func()) {
	skipCheckIdle = true
	return func() { skipCheckIdle = false }
}
