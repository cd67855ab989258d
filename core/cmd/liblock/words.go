package main

import (
	"strings"
)

// errText is a library error as the command prints it, without the
// library's own "liblock: " prefix: the command's line already starts
// with "liblock CMD: ".
func errText(err error) string {
	if err == nil {
		return ""
	}
	return strings.TrimPrefix(err.Error(), "liblock: ")
}

// Fixes for the causes a node names in its reply. Each says what to change
// and where.
const (
	fixWrongPass = "the node refused the URL's user or password: put the right ones in the URL, " +
		"redis://:PASSWORD@host:port for the node's requirepass password, redis://USER:PASSWORD@host:port for an ACL user " +
		"(ACL LIST on the node lists its users; ACL SETUSER USER on >PASSWORD sets one); percent-encode @ : / % in a password (%40 for @)"
	fixNoAuth = "the node requires a password and the URL has none: write redis://:PASSWORD@host:port (the node's requirepass) " +
		"or redis://USER:PASSWORD@host:port (an ACL user); percent-encode @ : / % in a password (%40 for @)"
	fixNoPassword = "the URL carries a password but the node has none: remove it from the URL (redis://host:port), " +
		"or set one on the node (CONFIG SET requirepass, and in redis.conf)"
	fixOOM = "the node is out of memory (used memory above its maxmemory, with nothing left to evict) and refuses the lock's scripts: " +
		"raise maxmemory (CONFIG SET maxmemory 256mb, and in redis.conf) or free memory on the node, " +
		"and keep maxmemory-policy noeviction so that no held lock is ever evicted"
	fixNoPerm = "the node's ACL forbids a command liblock sends: ACL SETUSER USER +set +del +eval +evalsha +publish +subscribe +pubsub|numsub +get +pttl +pexpire +time " +
		"on the lock keys and &liblock:released:* (liblock doctor checks each command)"
	fixReadOnly   = "the node is a replica, which refuses writes: list primaries only"
	fixClientCert = "the node requires a client certificate (tls-auth-clients yes): pass --tls-cert-file and --tls-key-file (LIBLOCK_TLS_CERT_FILE, LIBLOCK_TLS_KEY_FILE)"
	fixUnknownCA  = "the node's certificate is not from a CA this host trusts: pass the CA's certificate with --tls-ca-file (LIBLOCK_TLS_CA_FILE)"
	fixTLSName    = "the node's certificate is issued for another name: pass that name with --tls-server-name (LIBLOCK_TLS_SERVER_NAME), or use it as the URL's host"
)

// hint is the fix for an error whose cause the node named, or "".
func hint(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	switch {
	case strings.Contains(s, "WRONGPASS"):
		return fixWrongPass
	case strings.Contains(s, "NOAUTH"):
		return fixNoAuth
	case strings.Contains(s, "called without any password configured"):
		return fixNoPassword
	case strings.Contains(s, "OOM "):
		return fixOOM
	case strings.Contains(s, "NOPERM"):
		return fixNoPerm
	case strings.Contains(s, "READONLY"):
		return fixReadOnly
	case strings.Contains(s, "certificate required"):
		return fixClientCert
	case strings.Contains(s, "unknown authority"):
		return fixUnknownCA
	case strings.Contains(s, "certificate is valid for"), strings.Contains(s, "certificate is not valid for any names"),
		strings.Contains(s, "doesn't contain any IP SANs"):
		return fixTLSName
	}
	return ""
}
