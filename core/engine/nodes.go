package engine

import (
	"errors"
	"strings"

	"github.com/liblock/liblock/core/engine/nodeurl"
)

// parseNodeURL reads one node URL exactly as go-redis's ParseURL does.
func parseNodeURL(raw string) (Node, error) {
	s, err := nodeurl.Parse(raw)
	if err != nil && !strings.Contains(raw, "://") {
		// go-redis's own words for "127.0.0.1:6379" are url.Parse's ("first
		// path segment in URL cannot contain colon"), which do not say
		// what to write instead.
		return Node{}, errors.New(ScrubURL("no scheme: write redis://"+raw+" (rediss:// for TLS, unix:///path for a socket)", "redis://"+raw))
	}
	if err != nil {
		return Node{}, err
	}
	return Node{Network: s.Network, Addr: s.Addr, TLS: s.TLS, ServerName: s.ServerName, SkipVerify: s.SkipVerify,
		Username: s.Username, Password: s.Password, DB: s.DB, ClientName: s.ClientName,
		MasterName: s.MasterName, Sentinels: s.Sentinels, SentinelUsername: s.SentinelUsername, SentinelPassword: s.SentinelPassword,
		Cluster: s.Cluster, Seeds: s.Seeds}, nil
}
