//go:build !unix

package core

import "net"

// canPeek is false where the driver cannot look at an idle socket: every
// connection then keeps its reader goroutine.
func canPeek(net.Conn) bool { return false }

// peeker is never used where canPeek is false.
type peeker struct{}

func newPeeker(net.Conn) *peeker { return &peeker{} }

func (*peeker) peek() error { return nil }

// readPolling is nc.Read where the driver has no poll(2) of its own.
func readPolling(nc net.Conn, buf []byte) (int, error) { return nc.Read(buf) }
