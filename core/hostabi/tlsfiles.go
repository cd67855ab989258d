//go:build !wasip1

package hostabi

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Load reads the PEM files of f into the Go driver's TLS base
// (core.Config.TLS): nil when f sets nothing. It is the one reader of
// these files for the C ABI (lock_client_new's TLS keys) and the liblock
// command (its --tls-* flags and LIBLOCK_TLS_* variables), each of which
// words a *TLSFileError in its own names. Not in liblock.wasm, whose hosts
// make their TLS connections themselves.
func (f TLSFiles) Load() (*tls.Config, error) {
	if f == (TLSFiles{}) {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: f.ServerName, MinVersion: tls.VersionTLS12}
	if f.CAFile != "" {
		b, err := os.ReadFile(f.CAFile)
		if err != nil {
			return nil, &TLSFileError{Key: "tls_ca_file", Reason: "cannot read " + readReason(f.CAFile, err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, &TLSFileError{Key: "tls_ca_file", Reason: "no PEM certificate in " + strconv.Quote(f.CAFile)}
		}
		cfg.RootCAs = pool
	}
	switch {
	case f.CertFile != "" && f.KeyFile == "":
		return nil, &TLSFileError{Key: "tls_cert_file", Needs: "tls_key_file"}
	case f.KeyFile != "" && f.CertFile == "":
		return nil, &TLSFileError{Key: "tls_key_file", Needs: "tls_cert_file"}
	case f.CertFile != "":
		certPEM, err := os.ReadFile(f.CertFile)
		if err != nil {
			return nil, &TLSFileError{Key: "tls_cert_file", Reason: "cannot read " + readReason(f.CertFile, err)}
		}
		keyPEM, err := os.ReadFile(f.KeyFile)
		if err != nil {
			return nil, &TLSFileError{Key: "tls_key_file", Reason: "cannot read " + readReason(f.KeyFile, err)}
		}
		if !hasCertificate(certPEM) {
			return nil, &TLSFileError{Key: "tls_cert_file", Reason: "no PEM certificate in " + strconv.Quote(f.CertFile)}
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		switch {
		case err == nil:
		case strings.Contains(err.Error(), "does not match"):
			return nil, &TLSFileError{Key: "tls_key_file", Mismatch: true}
		default:
			// crypto/tls's reasons name what failed, never the bytes.
			return nil, &TLSFileError{Key: "tls_key_file", Reason: "no usable PEM private key in " + strconv.Quote(f.KeyFile) + " (" + strings.TrimPrefix(err.Error(), "tls: ") + ")"}
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// TLSFileError is why TLSFiles.Load refused the files. Key is the key at
// fault (tls_ca_file, tls_cert_file or tls_key_file); then Needs names the
// key it was given without, or Mismatch says the private key is not the
// certificate's, or Reason says why the file cannot be used (unreadable,
// no PEM certificate, no usable private key). Never a file's contents.
type TLSFileError struct {
	Key, Needs string
	Mismatch   bool
	Reason     string
}

func (e *TLSFileError) Error() string {
	switch {
	case e.Needs != "":
		return e.Key + ": needs " + e.Needs
	case e.Mismatch:
		return e.Key + ": does not match tls_cert_file"
	}
	return e.Key + ": " + e.Reason
}

// readReason is os.ReadFile's error without repeating the path.
func readReason(path string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
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
