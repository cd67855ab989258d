package core

// SkipCheckIdle turns off the look at idle connections before a command
// (TestOneNodeIdleCheckNegativeControl, the control of locktest's
// OneNodeIdleConnectionClosed) until the returned func runs.
func SkipCheckIdle() (restore func()) {
	skipCheckIdle = true
	return func() { skipCheckIdle = false }
}
