//go:build !wasip1

package core

import "time"

// NewRespTransport exposes core.New's transport to the transport tests.
func NewRespTransport(urls []string, timeout time.Duration) (Transport, error) {
	t, err := newRespTransport(urls, timeout)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// IdleConns reports how many idle connections a transport made by
// NewRespTransport keeps, per node.
func IdleConns(t Transport) []int {
	rt := t.(*respTransport)
	counts := make([]int, len(rt.nodes))
	for i, n := range rt.nodes {
		n.mu.Lock()
		counts[i] = len(n.idle)
		n.mu.Unlock()
	}
	return counts
}
