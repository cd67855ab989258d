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

// ConnCounts reports, per node, how many connections a transport made by
// NewRespTransport keeps idle and has open, and how many calls wait for one.
func ConnCounts(t Transport) (idle, open, waiting []int) {
	rt := t.(*respTransport)
	for _, n := range rt.nodes {
		i, o, w := n.conns()
		idle = append(idle, i)
		open = append(open, o)
		waiting = append(waiting, w)
	}
	return idle, open, waiting
}

// MaxConnsPerNode is the transport's bound on open connections per node.
const MaxConnsPerNode = maxConnsPerNode
