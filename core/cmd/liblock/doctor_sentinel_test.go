package main

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDoctorSentinelHealthy: a primary with 2 replicas and 3 sentinels
// passes every topology check (WAIT 1 by default); the data checks run on
// the primary; --wait-replicas 0 warns.
func TestDoctorSentinelHealthy(t *testing.T) {
	s := redistest.StartSentinel(t, 2, 3)
	url, id := s.URL(), s.Sentinels[0].Addr()
	code, rows, _ := doctor(t, []string{url})
	require.Zero(t, code, "exit: %+v", rows)
	for _, sn := range s.Sentinels {
		want(t, rows, id, "sentinel "+sn.Addr(), statusOK, "names the primary "+s.Data[0].Addr())
	}
	want(t, rows, id, "sentinels agree", statusOK, "3 sentinel(s) name "+s.Data[0].Addr())
	want(t, rows, id, "sentinel quorum", statusOK, "3 of 3 sentinels answer")
	want(t, rows, id, "replicas", statusOK, "2 replica(s) known, all connected")
	want(t, rows, id, "wait_replicas", statusOK, "the default on Sentinel nodes")
	want(t, rows, id, "role", statusOK, "ROLE master, with 2 replica(s)")
	for _, check := range []string{"reachable", "version", "eviction", "commands", "lock", "independent"} {
		want(t, rows, id, check, statusOK, "")
	}
	for _, r := range rows {
		assert.NotEqual(t, "cluster", r.Check, "a Sentinel's primary is no cluster node: %+v", r)
	}
	s.AssertNoKeys(t)

	code, rows, _ = doctor(t, []string{url}, "--wait-replicas", "0")
	require.Zero(t, code, "--wait-replicas 0: warnings only: %+v", rows)
	want(t, rows, id, "wait_replicas", statusWarn, "WAIT is off")
}

// TestDoctorSentinelDown: a killed sentinel is a warning row (the others
// still answer, and are a majority); a second one killed leaves no
// majority to authorize a failover: fail.
func TestDoctorSentinelDown(t *testing.T) {
	s := redistest.StartSentinel(t, 1, 3)
	id := s.Sentinels[0].Addr()
	require.NoError(t, s.Sentinels[2].Kill())
	code, rows, _ := doctor(t, []string{s.URL()})
	require.Zero(t, code, "one sentinel down: warnings only: %+v", rows)
	want(t, rows, id, "sentinel "+s.Sentinels[2].Addr(), statusWarn, "no answer")
	want(t, rows, id, "sentinel "+s.Sentinels[1].Addr(), statusOK, "")
	want(t, rows, id, "sentinel quorum", statusOK, "2 of 3 sentinels answer")

	require.NoError(t, s.Sentinels[1].Kill())
	code, rows, _ = doctor(t, []string{s.URL()})
	require.Equal(t, exitDoctorFail, code, "two of three sentinels down: %+v", rows)
	want(t, rows, id, "sentinel quorum", statusFail, "")
	want(t, rows, id, "sentinels agree", statusOK, "1 sentinel(s)")
}

// TestDoctorSentinelNoReplicas: a deployment without replicas warns that
// a failover has nothing to promote, and WAIT 1 (the default) can never be
// acknowledged: fail, and the lock cycle fails the same way (the engine
// refuses such a primary at connect, naming the fix). With
// --wait-replicas 0 the lock works and only warnings remain. A URL naming
// a sentinel of another deployment makes the sentinels disagree: fail.
func TestDoctorSentinelNoReplicas(t *testing.T) {
	s := redistest.StartSentinel(t, 0, 2)
	id := s.Sentinels[0].Addr()
	code, rows, _ := doctor(t, []string{s.URL()})
	require.Equal(t, exitDoctorFail, code, "exit: %+v", rows)
	want(t, rows, id, "replicas", statusWarn, "know no replica")
	want(t, rows, id, "wait_replicas", statusFail, "0 replica(s) connected")
	want(t, rows, id, "lock", statusFail, "the primary has no replica")

	code, rows, _ = doctor(t, []string{s.URL()}, "--wait-replicas", "0")
	require.Zero(t, code, "--wait-replicas 0: exit: %+v", rows)
	want(t, rows, id, "wait_replicas", statusWarn, "WAIT is off")
	want(t, rows, id, "lock", statusOK, "")
	s.AssertNoKeys(t)

	// Another deployment's sentinel (monitoring the same master name) in
	// the URL: two primaries named.
	other := redistest.StartSentinel(t, 0, 2)
	mixed := s.URL() + "&addr=" + other.Sentinels[0].Addr()
	code, rows, _ = doctor(t, []string{mixed}, "--wait-replicas", "0")
	require.Equal(t, exitDoctorFail, code, "exit: %+v", rows)
	want(t, rows, id, "sentinels agree", statusFail, "different primaries")
	for _, r := range rows {
		assert.NotEqual(t, "lock", r.Check, "a primary was probed though the sentinels disagree: %+v", r)
	}
}

// TestDoctorClusterEnabled: a plain URL pointing at a cluster-enabled
// server fails, telling to use the cluster URL; a plain node has no such
// row (TestDoctorHealthy).
func TestDoctorClusterEnabled(t *testing.T) {
	bin, err := redistest.Binary()
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	dir := t.TempDir()
	srv := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--dir", dir, "--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "redis.log"))
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	eventually(t, 20*time.Second, "the cluster-enabled server answers", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		_, _ = c.Write([]byte("PING\r\n"))
		b := make([]byte, 16)
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		n, _ := c.Read(b)
		return strings.HasPrefix(string(b[:n]), "+PONG")
	})
	code, rows, _ := doctor(t, []string{"redis://" + addr})
	require.Equal(t, exitDoctorFail, code, "exit: %+v", rows)
	want(t, rows, addr, "cluster", statusFail, "cluster_enabled:1")
	require.Contains(t, find(t, rows, addr, "cluster").Fix, "cluster node URL")
}

// TestDoctorSentinelRules: the rules no live deployment here makes fail
// cheaply, on their inputs: WAIT off warns, WAIT beyond the connected
// replicas fails; sentinels naming two primaries fail and name both.
func TestDoctorSentinelRules(t *testing.T) {
	one, zero := 1, 0
	for _, tc := range []struct {
		wait      *int
		connected int
		status    string
	}{
		{nil, 2, statusOK}, {&one, 1, statusOK}, {&zero, 2, statusWarn}, {nil, 0, statusFail}, {&one, 0, statusFail},
	} {
		f := &nodeFacts{name: "n"}
		waitRow(f, "Sentinel", tc.wait, tc.connected)
		require.Len(t, f.rows, 1)
		assert.Equal(t, tc.status, f.rows[0].Status, "wait %v, %d connected: %+v", tc.wait, tc.connected, f.rows[0])
	}
	f := &nodeFacts{name: "n"}
	p, ok := agreement(f, []sentinelView{{addr: "s1", primary: "a:1"}, {addr: "s2", primary: "b:2"}, {addr: "s3", primary: "a:1"}})
	assert.False(t, ok)
	assert.Equal(t, "a:1", p, "the most named")
	assert.Equal(t, statusFail, f.rows[0].Status)
	assert.Contains(t, f.rows[0].Detail, "a:1 by s1, s3; b:2 by s2")
	f = &nodeFacts{name: "n"}
	_, ok = agreement(f, []sentinelView{{addr: "s1", err: net.ErrClosed}})
	assert.False(t, ok)
	assert.Equal(t, statusFail, f.rows[0].Status, "no sentinel names a primary")
}

// TestDoctorSentinelDegraded: a frozen replica is reported as not
// connected once the sentinels see it down (polled: they take their
// down-after); a wrong master_name fails every sentinel row and the
// agreement; a named "primary" that says it is a replica fails the role.
func TestDoctorSentinelDegraded(t *testing.T) {
	s := redistest.StartSentinel(t, 2, 3)
	id := s.Sentinels[0].Addr()
	frozen := s.Data[2]
	require.NoError(t, frozen.Freeze())
	t.Cleanup(func() { _ = frozen.Thaw() })
	var rows []row
	eventually(t, 20*time.Second, "the replicas row reports the frozen replica", func() bool {
		_, rows, _ = doctor(t, []string{s.URL()})
		for _, r := range rows {
			if r.Check == "replicas" && r.Status == statusWarn && strings.Contains(r.Detail, frozen.Addr()) {
				return true
			}
		}
		return false
	})
	want(t, rows, id, "replicas", statusWarn, "2 replica(s) known, 1 connected")
	want(t, rows, id, "wait_replicas", statusOK, "") // WAIT 1: one replica still acknowledges

	wrong := strings.Replace(s.URL(), "master_name="+redistest.SentinelMaster, "master_name=nosuch", 1)
	require.NotEqual(t, s.URL(), wrong)
	code, rows, _ := doctor(t, []string{wrong})
	require.Equal(t, exitDoctorFail, code, "exit: %+v", rows)
	for _, sn := range s.Sentinels {
		want(t, rows, id, "sentinel "+sn.Addr(), statusFail, `monitors no master named "nosuch"`)
	}
	want(t, rows, id, "sentinels agree", statusFail, "no sentinel names a primary")

	// The role check itself, on a node that says it is a replica.
	o := &doctorOpts{timeout: 2 * time.Second}
	f := &nodeFacts{name: "n", sentinel: true}
	rdb := redis.NewClient(&redis.Options{Addr: s.Data[1].Addr(), Protocol: 2})
	defer rdb.Close()
	o.checkRole(f, rdb, s.Data[1].Addr())
	require.Len(t, f.rows, 1)
	assert.Equal(t, statusFail, f.rows[0].Status, "%+v", f.rows[0])
	assert.Contains(t, f.rows[0].Detail, "says ROLE slave")
	assert.Equal(t, s.Data[0].Addr(), f.replicaOf, "its primary, so that no write is probed")
}
