//go:build !unix

package core

import "net"

// canPeek is false where the driver cannot look at an idle socket: every
// connection then keeps its reader goroutine.
func canPeek(net.Conn) bool { return false }

// peek is never called where canPeek is false.
func peek(net.Conn) error { return nil }
