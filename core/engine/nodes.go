package engine

import "github.com/liblock/liblock/core/engine/nodeurl"

// parseNodeURL reads one node URL exactly as go-redis's ParseURL does.
func parseNodeURL(raw string) (Node, error) {
	s, err := nodeurl.Parse(raw)
	if err != nil {
		return Node{}, err
	}
	return Node{Network: s.Network, Addr: s.Addr, TLS: s.TLS, ServerName: s.ServerName, SkipVerify: s.SkipVerify,
		Username: s.Username, Password: s.Password, DB: s.DB, ClientName: s.ClientName}, nil
}
