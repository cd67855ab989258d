//go:build wasip1

package core

// parseNodeURL reads a node URL without net/url, which would add about
// 200 KB to liblock.wasm; parseNodeURLLite accepts exactly what url.Parse
// accepts.
func parseNodeURL(raw string) (nodeURL, error) { return parseNodeURLLite(raw) }

// RedactURL returns the URL with any password replaced by "xxxxx", for
// messages and logs. (In the wasip1 build the password is replaced in the
// text as given; net/url's Redacted would also re-escape the rest.)
func RedactURL(raw string) string { return redactURLLite(raw) }
