package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestInspect: a held and a free resource, as a table and as JSON lines.
func TestInspect(t *testing.T) {
	c := redistest.Start(t, 3)
	client, err := core.New(core.Config{Nodes: c.URLs(), Owner: "worker-7"})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	lock, err := client.Acquire(t.Context(), "job", 30e9)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release(t.Context())
	eventually(t, 5e9, "the key on every node", func() bool {
		for _, n := range c.Nodes {
			if v, _ := n.Do("GET", "job"); v != lock.Token() {
				return false
			}
		}
		return true
	})
	r := mainOut("inspect", "--nodes", nodesOf(c), "--json", "job", "free")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 JSON lines:\n%s", r.stdout)
	}
	var held, free inspectJSON
	if json.Unmarshal([]byte(lines[0]), &held) != nil || json.Unmarshal([]byte(lines[1]), &free) != nil {
		t.Fatalf("not JSON:\n%s", r.stdout)
	}
	if !held.Held || held.Owner != "worker-7" || held.ValidityMS == nil || *held.ValidityMS < 20000 || len(held.Nodes) != 3 || !held.Nodes[0].Holder {
		t.Fatalf("held: %s", lines[0])
	}
	if free.Held || free.Nodes[1].Locked || free.Resource != "free" {
		t.Fatalf("free: %s", lines[1])
	}
	r = mainOut("inspect", "--nodes", nodesOf(c), "job")
	if r.code != 0 || !strings.Contains(r.stdout, "worker-7") || !strings.Contains(r.stdout, "holder") {
		t.Fatalf("table: exit %d\n%s", r.code, r.stdout)
	}
	// Two of three nodes down: it cannot tell.
	for _, n := range c.Nodes[:2] {
		_ = n.Kill()
	}
	if r := mainOut("inspect", "--nodes", nodesOf(c), "job"); r.code != exitUnavailable {
		t.Fatalf("2 nodes down: exit %d, want %d", r.code, exitUnavailable)
	}
}

// TestRelease: a wrong token changes nothing (held: 65, the key intact;
// free: 65, nothing left); the right token releases.
func TestRelease(t *testing.T) {
	c := redistest.Start(t, 3)
	lock := holder(t, c, "job")
	nodes := nodesOf(c)
	keyIs := func(want string) {
		t.Helper()
		for _, n := range c.Nodes {
			eventually(t, 5e9, "the key is "+want, func() bool { v, _ := n.Do("GET", "job"); return v == want })
		}
	}
	keyIs(lock.Token())
	r := mainOut("release", "--nodes", nodes, "--token", "not-the-token-0123456789", "job")
	if r.code != exitNotAcquired || !strings.Contains(r.stderr, "does not hold") {
		t.Fatalf("wrong token: exit %d %q", r.code, r.stderr)
	}
	keyIs(lock.Token())
	r = mainOut("release", "--nodes", nodes, "--token", "not-the-token-0123456789", "free")
	if r.code != exitNotAcquired || !strings.Contains(r.stderr, "not held") {
		t.Fatalf("wrong token on a free lock: exit %d %q", r.code, r.stderr)
	}
	keyIs(lock.Token())
	for _, n := range c.Nodes {
		eventually(t, 5e9, "nothing left of free", func() bool { v, _ := n.Do("EXISTS", "free"); return v == "0" })
	}
	r = mainOut("release", "--token", lock.Token(), "--nodes", nodes, "job")
	if r.code != 0 {
		t.Fatalf("right token: exit %d %q", r.code, r.stderr)
	}
	c.AssertNoKeys(t)
}
