package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/liblock/liblock/core/hostabi"
)

// TLS of the rediss:// nodes, as the library takes it (core.Config.TLS):
// the flags and variables are named after the C ABI's configuration keys
// (tls_ca_file, tls_cert_file, tls_key_file, tls_server_name), which are
// Python's ssl_ca_certs, ssl_certfile, ssl_keyfile, ssl_server_name and
// Node's tls.ca, tls.cert, tls.key, tls.servername. Verification is turned
// off only by a node URL's ?skip_verify=true, as in the libraries.
type tlsOpts struct {
	caFile, certFile, keyFile, serverName string
}

// tlsSetting is one of them: its flag, its environment variable, where it
// is kept.
type tlsSetting struct {
	flag, env, usage string
	v                *string
}

func (t *tlsOpts) settings() []tlsSetting {
	return []tlsSetting{
		{"tls-ca-file", "LIBLOCK_TLS_CA_FILE", "PEM file of the CA certificates that verify rediss:// nodes instead of the system's roots (a private CA)", &t.caFile},
		{"tls-cert-file", "LIBLOCK_TLS_CERT_FILE", "PEM client certificate (chain) for mutual TLS (tls-auth-clients yes); needs --tls-key-file", &t.certFile},
		{"tls-key-file", "LIBLOCK_TLS_KEY_FILE", "PEM private key of --tls-cert-file", &t.keyFile},
		{"tls-server-name", "LIBLOCK_TLS_SERVER_NAME", "the name rediss:// nodes' certificates must be issued for (and the SNI), instead of each URL's host", &t.serverName},
	}
}

func (t *tlsOpts) register(fs *flag.FlagSet) {
	for _, s := range t.settings() {
		fs.StringVar(s.v, s.flag, "", s.usage+" (default $"+s.env+")")
	}
}

// load reads the files (the flags first, else the environment) and returns
// the library's TLS base, or nil when nothing is set. An error names the
// flag or variable it came from, never a file's contents.
func (t *tlsOpts) load() (*tls.Config, error) {
	from := map[string]string{}
	for _, s := range t.settings() {
		from[s.flag] = "--" + s.flag
		if *s.v == "" {
			*s.v, from[s.flag] = os.Getenv(s.env), s.env
		}
	}
	if *t == (tlsOpts{}) {
		return nil, nil
	}
	cfg, err := hostabi.TLSFiles{CAFile: t.caFile, CertFile: t.certFile, KeyFile: t.keyFile, ServerName: t.serverName}.Load()
	var fe *hostabi.TLSFileError
	if !errors.As(err, &fe) {
		return cfg, err
	}
	switch {
	case fe.Key == "tls_cert_file" && fe.Needs != "":
		return nil, usagef("%s: needs --tls-key-file (or LIBLOCK_TLS_KEY_FILE): the certificate's private key", from["tls-cert-file"])
	case fe.Key == "tls_key_file" && fe.Needs != "":
		return nil, usagef("%s: needs --tls-cert-file (or LIBLOCK_TLS_CERT_FILE): the key's certificate", from["tls-key-file"])
	case fe.Mismatch:
		return nil, usagef("%s: does not match %s", from["tls-key-file"], from["tls-cert-file"])
	}
	return nil, usagef("%s: %s", from[strings.ReplaceAll(fe.Key, "_", "-")], fe.Reason)
}

// forNode is the TLS of one rediss:// connection doctor makes itself, as
// the library makes it from base: a clone, the URL's host as the name to
// verify unless base names one, and the URL's skip_verify.
func forNode(base *tls.Config, urlServerName string, skipVerify bool) *tls.Config {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if base != nil {
		c = base.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = urlServerName
	}
	if skipVerify {
		c.InsecureSkipVerify = true //nolint:gosec // the URL asked for it
	}
	return c
}
