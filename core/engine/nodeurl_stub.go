package engine

import (
	"errors"
	"strconv"
	"strings"
)

// parseNodeURL is a placeholder until the go-redis-exact parser lands.
func parseNodeURL(raw string) (Node, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Node{}, errors.New("redis: invalid URL scheme: ")
	}
	var n Node
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		cred := rest[:at]
		rest = rest[at+1:]
		u, p, has := strings.Cut(cred, ":")
		if has {
			n.Username, n.Password = u, p
		} else {
			n.Username = u
		}
	}
	rest, _, _ = strings.Cut(rest, "?")
	switch scheme {
	case "redis", "rediss":
		host, path, _ := strings.Cut(rest, "/")
		h, p, ok := strings.Cut(host, ":")
		if !ok {
			p = "6379"
		}
		if h == "" {
			h = "localhost"
		}
		n.Network, n.Addr = "tcp", h+":"+p
		if path != "" {
			db, err := strconv.Atoi(path)
			if err != nil {
				return Node{}, errors.New("redis: invalid database number: " + strconv.Quote(path))
			}
			n.DB = db
		}
		if scheme == "rediss" {
			n.TLS, n.ServerName = true, h
		}
	case "unix":
		n.Network, n.Addr = "unix", rest
	default:
		return Node{}, errors.New("redis: invalid URL scheme: " + scheme)
	}
	return n, nil
}
