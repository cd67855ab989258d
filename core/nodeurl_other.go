//go:build !wasip1

package core

import "net/url"

// parseNodeURL reads a node URL with net/url.
func parseNodeURL(raw string) (nodeURL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nodeURL{}, err
	}
	return nodeURL{scheme: u.Scheme, host: u.Host, hostname: u.Hostname(), port: u.Port(), path: u.Path}, nil
}

// RedactURL returns the URL with any password replaced by "xxxxx", for
// messages and logs.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(malformed URL)"
	}
	return u.Redacted()
}
