//go:build !unix

package core

import (
	"context"
	"net"
)

// dialRaw is a plain dial where the driver has no poll(2) of its own.
func dialRaw(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr)
}
