package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"strings"

	"github.com/liblock/liblock/core/hostabi"
)

// tlsConfig builds core.Config.TLS from lock_client_new's TLS keys, reading
// the files now: nil when none is given. Errors name the key and never
// quote a file's contents.
func tlsConfig(f hostabi.TLSFiles) (*tls.Config, error) { return tlsConfigOf("", f) }

// tlsConfigOf is tlsConfig with prefix before the keys in errors
// ("nodes[1]." for a node's own keys).
func tlsConfigOf(prefix string, f hostabi.TLSFiles) (*tls.Config, error) {
	if f == (hostabi.TLSFiles{}) {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: f.ServerName, MinVersion: tls.VersionTLS12}
	if f.CAFile != "" {
		pemBytes, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, argErr(prefix+"tls_ca_file", "cannot read %s", readReason(f.CAFile, err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, argErr(prefix+"tls_ca_file", "no PEM certificate in %q", f.CAFile)
		}
		cfg.RootCAs = pool
	}
	switch {
	case f.CertFile != "" && f.KeyFile == "":
		return nil, argErr(prefix+"tls_cert_file", "needs tls_key_file")
	case f.KeyFile != "" && f.CertFile == "":
		return nil, argErr(prefix+"tls_key_file", "needs tls_cert_file")
	case f.CertFile != "":
		certPEM, err := os.ReadFile(f.CertFile)
		if err != nil {
			return nil, argErr(prefix+"tls_cert_file", "cannot read %s", readReason(f.CertFile, err))
		}
		keyPEM, err := os.ReadFile(f.KeyFile)
		if err != nil {
			return nil, argErr(prefix+"tls_key_file", "cannot read %s", readReason(f.KeyFile, err))
		}
		if !hasCertificate(certPEM) {
			return nil, argErr(prefix+"tls_cert_file", "no PEM certificate in %q", f.CertFile)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		switch {
		case err == nil:
		case strings.Contains(err.Error(), "does not match"):
			return nil, argErr(prefix+"tls_key_file", "does not match tls_cert_file")
		default:
			// crypto/tls's reasons name what failed, never the bytes.
			return nil, argErr(prefix+"tls_key_file", "no usable PEM private key in %q (%s)", f.KeyFile, strings.TrimPrefix(err.Error(), "tls: "))
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// readReason is os.ReadFile's error without repeating the path.
func readReason(path string, err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return `"` + path + `": ` + pe.Err.Error()
	}
	return err.Error()
}

// hasCertificate tells whether b holds a PEM block of a parsable
// certificate.
func hasCertificate(b []byte) bool {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return false
		}
		if blk.Type == "CERTIFICATE" {
			if _, err := x509.ParseCertificate(blk.Bytes); err == nil {
				return true
			}
		}
	}
}
