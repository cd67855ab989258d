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
		// Suggest only a URL that parses: "redis://" + "redis//h:p"
		// would be broken too.
		for _, fixed := range []string{schemeTypo(raw), "redis://" + raw} {
			if _, err := nodeurl.Parse(fixed); fixed != "" && err == nil {
				return Node{}, errors.New(ScrubURL("no scheme: write "+fixed+" (rediss:// for TLS, unix:///path for a socket)", fixed))
			}
		}
		return Node{}, errors.New(ScrubURL("no scheme: "+raw+" is not a node URL: write redis://host:port (rediss:// for TLS, unix:///path for a socket)", "redis://"+raw))
	}
	if err != nil {
		return Node{}, err
	}
	return Node{Network: s.Network, Addr: s.Addr, TLS: s.TLS, ServerName: s.ServerName, SkipVerify: s.SkipVerify,
		Username: s.Username, Password: s.Password, DB: s.DB, ClientName: s.ClientName,
		MasterName: s.MasterName, Sentinels: s.Sentinels, SentinelUsername: s.SentinelUsername, SentinelPassword: s.SentinelPassword,
		Cluster: s.Cluster, Seeds: s.Seeds}, nil
}

// schemeTypo mends a mistyped scheme separator ("redis//h:p",
// "rediss:/h:p"): the URL the caller meant, or "" when it is not plain.
func schemeTypo(raw string) string {
	for _, scheme := range []string{"rediss", "redis", "unix"} {
		rest, ok := strings.CutPrefix(raw, scheme)
		if !ok {
			continue
		}
		// Not ":" alone: "redis:6379" is the host redis, port 6379.
		for _, sep := range []string{"//", ":/"} {
			if r, ok := strings.CutPrefix(rest, sep); ok && r != "" {
				if scheme == "unix" {
					r = "/" + strings.TrimLeft(r, "/")
				}
				return scheme + "://" + r
			}
		}
		return ""
	}
	return ""
}
