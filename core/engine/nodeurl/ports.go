package nodeurl

import (
	"errors"
	"strconv"
)

// checkPorts refuses a TCP port outside 1-65535 in any address a node
// connects to: the server's, every cluster seed's and every sentinel's.
// go-redis reads any digits as a port and lets the dial fail; the hosts'
// socket layers do not agree on what such a port does (Go's dial fails
// the node, Node's net.connect throws a RangeError before any socket
// exists), so the engine refuses it when the client is built, naming the
// node, in every language.
func checkPorts(s Spec) error {
	if s.Network != "tcp" {
		return nil
	}
	addrs := append(append([]string{s.Addr}, s.Seeds...), s.Sentinels...)
	for _, addr := range addrs {
		_, p, err := splitHostPortStrict(addr)
		if err != nil {
			continue // go-redis's parse has checked the address's form
		}
		if !portInRange(p) {
			return errors.New("redis: invalid port " + strconv.Quote(p) + " in " + strconv.Quote(addr) + ": a TCP port is a number from 1 to 65535")
		}
	}
	return nil
}

// portInRange reports whether p is a decimal number from 1 to 65535
// (leading zeros allowed, as every dialer reads them).
func portInRange(p string) bool {
	if p == "" {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return false
		}
	}
	return n >= 1
}
