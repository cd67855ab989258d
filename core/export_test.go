package core

import "fmt"

// SkipCheckIdle turns off the look at idle connections before a command
// (TestOneNodeIdleCheckNegativeControl, the control of locktest's
// OneNodeIdleConnectionClosed) until the returned func runs.
func SkipCheckIdle() (restore func()) {
	skipCheckIdle = true
	return func() { skipCheckIdle = false }
}

// ConnTypes is the type of each open connection of c ("*core.rawConn",
// "*net.TCPConn", ...).
func ConnTypes(c *Client) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, dc := range c.conns {
		if dc.nc != nil {
			out = append(out, fmt.Sprintf("%T", dc.nc))
		}
	}
	return out
}

// DialRaw is dialRaw.
var DialRaw = dialRaw

// TelemetryQuiet tells whether c's engine was last told to make no
// reports because nothing would record them (Client.levelReports).
func TelemetryQuiet(c *Client) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tel != nil && c.tel.quiet
}
