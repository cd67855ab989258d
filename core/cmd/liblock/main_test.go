package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/require"
)

// bin is the liblock binary the subprocess tests run, built once by TestMain
// (with -race when the tests are).
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "liblock-cmd-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "liblock")
	args := []string{"build", "-tags", "liblocktest", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("go build: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what a liblock subprocess did.
type result struct {
	code           int
	stdout, stderr string
}

// command prepares a liblock subprocess with LIBLOCK_NODES set to nodes
// (unset when empty).
func command(nodes string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(bin, args...)
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "LIBLOCK_") {
			env = append(env, e)
		}
	}
	if nodes != "" {
		env = append(env, "LIBLOCK_NODES="+nodes)
	}
	cmd.Env = env
	// A process liblock left behind (a bug) must not keep Wait reading its
	// copy of the output pipes forever.
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return cmd, &out, &errb
}

// liblock runs the binary to its end (bounded by a deadline).
func liblock(t *testing.T, nodes string, args ...string) result {
	t.Helper()
	cmd, out, errb := command(nodes, args...)
	require.NoError(t, cmd.Start())
	return wait(t, cmd, out, errb)
}

// wait waits for a started liblock, killing it after a generous deadline.
func wait(t *testing.T, cmd *exec.Cmd, out, errb *bytes.Buffer) result {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		require.FailNow(t, "liblock did not end within 60 s", "liblock %q; stderr:\n%s", cmd.Args[1:], errb)
	}
	r := result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
	t.Logf("liblock %q: exit %d\nstdout:\n%sstderr:\n%s", cmd.Args[1:], r.code, r.stdout, r.stderr)
	return r
}

// mainOut runs Main in-process.
func mainOut(args ...string) result {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

func nodesOf(c *redistest.Cluster) string { return strings.Join(c.URLs(), ",") }

// eventually polls cond until it holds, or fails the test at the deadline.
var eventually = locktest.Eventually

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// alive reports whether a process with this pid exists (a zombie counts
// as gone: it runs no more).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	eventually(t, 20*time.Second, "pid file "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		pid, err = strconv.Atoi(string(bytes.TrimSpace(b)))
		return err == nil && pid > 0
	})
	return pid
}

// holder takes name on the cluster from the test process, as another
// owner would.
func holder(t *testing.T, c *redistest.Cluster, name string, opts ...core.AcquireOption) *core.Lock {
	t.Helper()
	client, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	lock, err := client.Acquire(context.Background(), name, 30*time.Second, opts...)
	require.NoError(t, err)
	if len(opts) == 0 {
		// The acquire returns at a quorum; a node outside it may run its
		// SET later and so count in a test's CONFIG RESETSTAT window.
		for _, n := range c.Nodes {
			eventually(t, 5*time.Second, "the holder's key on every node", func() bool {
				v, _ := n.Do("GET", name)
				return v == lock.Token()
			})
		}
	}
	return lock
}
