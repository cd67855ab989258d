package main

import (
	"crypto/tls"
	"errors"

	"github.com/liblock/liblock/core/hostabi"
)

// tlsConfig builds core.Config.TLS from lock_client_new's TLS keys, reading
// the files now: nil when none is given. Errors name the key and never
// quote a file's contents.
func tlsConfig(f hostabi.TLSFiles) (*tls.Config, error) { return tlsConfigOf("", f) }

// tlsConfigOf is tlsConfig with prefix before the keys in errors
// ("nodes[1]." for a node's own keys).
func tlsConfigOf(prefix string, f hostabi.TLSFiles) (*tls.Config, error) {
	cfg, err := f.Load()
	var fe *hostabi.TLSFileError
	if !errors.As(err, &fe) {
		return cfg, err
	}
	switch {
	case fe.Needs != "":
		return nil, argErr(prefix+fe.Key, "needs %s", fe.Needs)
	case fe.Mismatch:
		return nil, argErr(prefix+fe.Key, "does not match tls_cert_file")
	}
	return nil, argErr(prefix+fe.Key, "%s", fe.Reason)
}
