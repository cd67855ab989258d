package tlstest

import (
	"crypto/tls"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/require"
)

// Certs are the PEM files mkcerts.sh made, by path.
type Certs struct {
	Dir                   string
	CA, OtherCA           string // certificates
	Server, ServerKey     string // from CA, for localhost and 127.0.0.1
	Internal, InternalKey string // from CA, for redis.internal only
	Client, ClientKey     string // from CA, for mutual TLS
	Other, OtherKey       string // from OtherCA, for localhost and 127.0.0.1
	Garbage               string // not PEM
}

// Script is the path of mkcerts.sh.
func Script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "mkcerts.sh")
}

// Make runs mkcerts.sh in a temporary directory of the test.
func Make(tb testing.TB) *Certs {
	tb.Helper()
	dir := tb.TempDir()
	if out, err := exec.Command("sh", Script(), dir).CombinedOutput(); err != nil {
		tb.Fatalf("tlstest: mkcerts.sh (openssl is installed by `make deps`): %v\n%s", err, out)
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	return &Certs{Dir: dir, CA: p("ca.pem"), OtherCA: p("other-ca.pem"),
		Server: p("server.pem"), ServerKey: p("server.key"),
		Internal: p("internal.pem"), InternalKey: p("internal.key"),
		Client: p("client.pem"), ClientKey: p("client.key"),
		Other: p("other.pem"), OtherKey: p("other.key"), Garbage: p("garbage.pem")}
}

// Start starts a redis-server listening with TLS only on a free loopback
// port, presenting cert/key; with authClients it requires a client
// certificate issued by c.CA. It is killed when the test ends. It returns
// the port.
func (c *Certs) Start(tb testing.TB, cert, key string, authClients bool) int {
	tb.Helper()
	bin, err := redistest.Binary()
	require.NoError(tb, err)
	auth := "no"
	if authClients {
		auth = "yes"
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := tb.TempDir()
	cmd := exec.Command(bin, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "redis.log"),
		"--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", c.CA, "--tls-auth-clients", auth)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	require.NoError(tb, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	tb.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	// Ready when a TLS handshake (with the client certificate) completes.
	cc, err := tls.LoadX509KeyPair(c.Client, c.ClientKey)
	require.NoError(tb, err)
	var dialErr error
	ready := poll.Wait(10*time.Second, func() bool {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			require.FailNow(tb, "tlstest: redis-server exited", "%s", log)
		default:
		}
		d := &net.Dialer{Timeout: 200 * time.Millisecond}
		conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cc}}) //nolint:gosec // readiness probe
		if dialErr = err; err == nil {
			conn.Close()
		}
		return err == nil
	})
	require.True(tb, ready, "tlstest: redis-server on %d not ready: %v", port, dialErr)
	return port
}
