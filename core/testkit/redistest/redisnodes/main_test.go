package main

import (
	"bufio"
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/stretchr/testify/require"
)

// build builds redisnodes into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "redisnodes")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// freeRange finds n consecutive free loopback ports: a free port from the
// kernel as the base, the next ones checked (another one is tried when one
// is taken).
func freeRange(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		base := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if base+n-1 > 65535 {
			continue
		}
		if checkPorts(base, n) == nil {
			return base
		}
	}
	t.Fatal("no range of free ports")
	return 0
}

// ping reports whether a Redis server answers PING on port.
func ping(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// refused reports whether nothing listens on port any more.
func refused(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// TestPortHold: -port P -hold starts the nodes on P, P+1, P+2, says so,
// and stops them on SIGINT (exit 0): what `make nodes` runs.
func TestPortHold(t *testing.T) {
	bin := build(t)
	base := freeRange(t, 3)
	cmd := exec.Command(bin, "-n", "3", "-port", strconv.Itoa(base), "-hold")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	for p := base; p < base+3; p++ {
		poll.Eventually(t, 30*time.Second, "the node on port "+strconv.Itoa(p)+" answers", func() bool { return ping(p) })
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait(), "exit; stderr: %s", &errb)
	var urls []string
	for p := base; p < base+3; p++ {
		require.True(t, refused(p), "port %d still answers after Ctrl-C", p)
		urls = append(urls, "redis://127.0.0.1:"+strconv.Itoa(p))
	}
	require.Contains(t, out.String(), "LIBLOCK_NODES="+strings.Join(urls, ","))
	require.Contains(t, out.String(), "Ctrl-C stops them")
}

// TestPortInUse: a port of the range in use is an error naming it, and
// no node is left running.
func TestPortInUse(t *testing.T) {
	bin := build(t)
	base := freeRange(t, 3)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+1))
	require.NoError(t, err)
	defer l.Close()
	cmd := exec.Command(bin, "-n", "3", "-port", strconv.Itoa(base), "-hold")
	outb, err := cmd.CombinedOutput()
	require.Error(t, err, "output: %s", outb)
	require.Contains(t, string(outb), "port "+strconv.Itoa(base+1)+" is in use")
	require.True(t, refused(base), "a node started on port %d", base)
	for _, bad := range [][]string{{"-port", "65535"}, {"-port", "7001", "-sentinel"}} {
		outb, err := exec.Command(bin, append([]string{"-n", "3"}, bad...)...).CombinedOutput()
		require.Error(t, err, "%q: output: %s", bad, outb)
		require.Contains(t, string(outb), "-port", "%q", bad)
	}
}
