package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core/hostabi"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/core/testkit/tlstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tlsJSON is a lock_client_new config of one node with the TLS keys kv.
func tlsJSON(node string, kv ...string) string {
	m := map[string]any{"nodes": []string{node}, "node_timeout_ms": 2000}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// TestAPITLS: the config JSON's tls_ca_file, tls_cert_file, tls_key_file
// and tls_server_name against TLS-only redis-servers.
func TestAPITLS(t *testing.T) {
	c := tlstest.Make(t)
	url := func(port int, q string) string { return "rediss://127.0.0.1:" + strconv.Itoa(port) + q }
	plain := url(c.Start(t, c.Server, c.ServerKey, false), "")
	mutual := url(c.Start(t, c.Server, c.ServerKey, true), "")
	internal := url(c.Start(t, c.Internal, c.InternalKey, false), "")
	cases := []struct {
		name, js string
		cause    string // "": the lock is taken
	}{
		{"private CA verifies", tlsJSON(plain, "tls_ca_file", c.CA), ""},
		{"system roots do not", tlsJSON(plain), "certificate signed by unknown authority"},
		{"an unrelated CA does not", tlsJSON(plain, "tls_ca_file", c.OtherCA), "certificate signed by unknown authority"},
		{"mutual TLS with the client certificate", tlsJSON(mutual, "tls_ca_file", c.CA, "tls_cert_file", c.Client, "tls_key_file", c.ClientKey), ""},
		{"mutual TLS without a client certificate", tlsJSON(mutual, "tls_ca_file", c.CA), "certificate required"},
		{"tls_server_name verifies redis.internal at 127.0.0.1", tlsJSON(internal, "tls_ca_file", c.CA, "tls_server_name", "redis.internal"), ""},
		{"without tls_server_name the name does not match", tlsJSON(internal, "tls_ca_file", c.CA), "doesn't contain any IP SANs"},
		{"skip_verify=true still works", tlsJSON(plain + "?skip_verify=true"), ""},
	}
	for _, k := range cases {
		t.Run(k.name, func(t *testing.T) {
			co := mustClient(t, k.js)
			defer freeHandle(co.id)
			id, r := acquire(co, "tls", 10*time.Second, acquireOptions{})
			if k.cause == "" {
				require.Nil(t, r, "acquire")
				lo, _ := lookupLock(id)
				require.Nil(t, release(lo), "release")
				freeHandle(id)
				return
			}
			assertFailure(t, statusUnavailable, r, "acquire: want LOCK_UNAVAILABLE naming node 0 and its cause", "node 0 (127.0.0.1:", k.cause)
		})
	}
}

// TestAPITLSBadInput: unreadable or unparsable files and a key that does
// not match its certificate are LOCK_INVALID_ARGUMENT at lock_client_new,
// naming the key and never quoting key material.
func TestAPITLSBadInput(t *testing.T) {
	c := tlstest.Make(t)
	node := "rediss://127.0.0.1:1"
	missing := filepath.Join(c.Dir, "missing.pem")
	key, err := os.ReadFile(c.ClientKey)
	require.NoError(t, err)
	keyLine := strings.Split(string(key), "\n")[1] // a line of base64 key material
	cases := []struct{ js, want string }{
		{tlsJSON(node, "tls_ca_file", missing), "tls_ca_file: cannot read \"" + missing + "\": no such file or directory"},
		{tlsJSON(node, "tls_ca_file", c.Garbage), "tls_ca_file: no PEM certificate in"},
		{tlsJSON(node, "tls_ca_file", c.ClientKey), "tls_ca_file: no PEM certificate in"},
		{tlsJSON(node, "tls_cert_file", c.Client), "tls_cert_file: needs tls_key_file"},
		{tlsJSON(node, "tls_key_file", c.ClientKey), "tls_key_file: needs tls_cert_file"},
		{tlsJSON(node, "tls_cert_file", missing, "tls_key_file", c.ClientKey), "tls_cert_file: cannot read"},
		{tlsJSON(node, "tls_cert_file", c.Client, "tls_key_file", missing), "tls_key_file: cannot read"},
		{tlsJSON(node, "tls_cert_file", c.Garbage, "tls_key_file", c.ClientKey), "tls_cert_file: no PEM certificate in"},
		{tlsJSON(node, "tls_cert_file", c.ClientKey, "tls_key_file", c.ClientKey), "tls_cert_file: no PEM certificate in"},
		{tlsJSON(node, "tls_cert_file", c.Client, "tls_key_file", c.Garbage), "tls_key_file: no usable PEM private key"},
		{tlsJSON(node, "tls_cert_file", c.Client, "tls_key_file", c.ServerKey), "tls_key_file: does not match tls_cert_file"},
		{`{"nodes":["` + node + `"],"tls_ca_file":1}`, "tls_ca_file: must be a string"},
		{`{"nodes":["` + node + `"],"tls_server_name":null}`, "tls_server_name: must not be null"},
	}
	h0 := handles.len()
	for _, k := range cases {
		_, r := clientNew(k.js)
		if !assertFailure(t, statusInvalidArgument, r, k.js, k.want) {
			continue
		}
		assert.NotContains(t, r.msg, keyLine, "%s: the message quotes key material", k.js)
		assert.NotContains(t, r.msg, "PRIVATE KEY", "%s: the message quotes key material", k.js)
	}
	require.Equal(t, h0, handles.len(), "handles left")
}

// lock_engine_new's JSON stays strict: its host (Node, Python asyncio)
// builds TLS connections from its own options, so the TLS keys are unknown
// there.
func TestEngineConfigRefusesTLSKeys(t *testing.T) {
	for _, key := range []string{"tls_ca_file", "tls_cert_file", "tls_key_file", "tls_server_name"} {
		_, err := hostabi.New(`{"nodes":["rediss://127.0.0.1:1"],"` + key + `":"x"}`)
		assert.ErrorContains(t, err, `unknown key "`+key+`"`, key)
	}
}

// TestAPITLSPerNode: a nodes item may be an object with the node's own TLS
// keys, which replace the client-level ones for it: two TLS nodes from two
// private CAs and a plain node in one client.
func TestAPITLSPerNode(t *testing.T) {
	c := tlstest.Make(t)
	url := func(port int) string { return "rediss://127.0.0.1:" + strconv.Itoa(port) }
	a := url(c.Start(t, c.Server, c.ServerKey, false)) // from CA
	b := url(c.Start(t, c.Other, c.OtherKey, false))   // from OtherCA
	plain := redistest.Start(t, 1).Nodes[0].URL()
	js := func(n0, n1 any) string {
		m := map[string]any{"nodes": []any{n0, n1, plain}, "node_timeout_ms": 2000, "tls_ca_file": c.CA}
		j, _ := json.Marshal(m)
		return string(j)
	}
	t.Run("each node its own CA", func(t *testing.T) {
		co := mustClient(t, js(a, map[string]any{"url": b, "tls_ca_file": c.OtherCA}))
		defer freeHandle(co.id)
		id, r := acquire(co, "tls:pernode", 10*time.Second, acquireOptions{})
		require.Nil(t, r, "acquire")
		defer freeHandle(id)
		s, r := inspect(co, "tls:pernode", false)
		require.Nil(t, r, "inspect")
		var in struct {
			Nodes []struct {
				Holder bool
				Error  *string
			}
		}
		require.NoError(t, json.Unmarshal([]byte(s), &in), s)
		require.Len(t, in.Nodes, 3, "inspect: %s", s)
		for i, n := range in.Nodes { // the key is on every node
			require.True(t, n.Holder, "node %d: %s", i, s)
			require.Nil(t, n.Error, "node %d: %s", i, s)
		}
		lo, _ := lookupLock(id)
		require.Nil(t, release(lo), "release")
	})
	t.Run("the client's CA only", func(t *testing.T) {
		co := mustClient(t, js(a, map[string]any{"url": b}))
		defer freeHandle(co.id)
		id, r := acquire(co, "tls:clientca", 10*time.Second, acquireOptions{}) // 2 of 3
		require.Nil(t, r, "acquire")
		defer freeHandle(id)
		s, r := inspect(co, "tls:clientca", false)
		require.Nil(t, r, "inspect")
		require.Contains(t, s, `"error":"`, "want node 1's verification failure")
		require.Equal(t, 1, strings.Count(s, "certificate signed by unknown authority"), "verification failures in %s", s)
		require.Contains(t, s, `"node":1,`, "want node 1's verification failure")
		var in struct{ Nodes []struct{ Error *string } }
		_ = json.Unmarshal([]byte(s), &in)
		require.NotNil(t, in.Nodes[1].Error, "inspect: %s, want node 1's verification failure", s)
		require.Contains(t, *in.Nodes[1].Error, "certificate signed by unknown authority", "node 1's error")
	})
	t.Run("a node's keys replace the client's", func(t *testing.T) {
		// node 0 given the other CA fails too: 2 of 3 failing.
		co := mustClient(t, js(map[string]any{"url": a, "tls_ca_file": c.OtherCA}, b))
		defer freeHandle(co.id)
		_, r := acquire(co, "tls:replaced", 10*time.Second, acquireOptions{})
		if assertFailure(t, statusUnavailable, r, "acquire: want LOCK_UNAVAILABLE naming nodes 0 and 1", "node 0 (127.0.0.1:", "node 1 (127.0.0.1:") {
			assert.Equal(t, 2, strings.Count(r.msg, "certificate signed by unknown authority"), "verification failures in %q", r.msg)
		}
	})
}

// TestAPITLSPerNodeBadInput: a bad node object is LOCK_INVALID_ARGUMENT
// naming the entry.
func TestAPITLSPerNodeBadInput(t *testing.T) {
	c := tlstest.Make(t)
	missing := filepath.Join(c.Dir, "missing.pem")
	n := func(item string) string { return `{"nodes":["redis://127.0.0.1:1",` + item + `]}` }
	q := strconv.Quote
	cases := []struct{ js, want string }{
		{n(`{"url":"rediss://127.0.0.1:2","tls_ca_file":` + q(missing) + `}`), "nodes[1].tls_ca_file: cannot read"},
		{n(`{"url":"rediss://127.0.0.1:2","tls_ca_file":` + q(c.Garbage) + `}`), "nodes[1].tls_ca_file: no PEM certificate in"},
		{n(`{"url":"rediss://127.0.0.1:2","tls_cert_file":` + q(c.Client) + `}`), "nodes[1].tls_cert_file: needs tls_key_file"},
		{n(`{"url":"rediss://127.0.0.1:2","tls_cert_file":` + q(c.Client) + `,"tls_key_file":` + q(c.ServerKey) + `}`), "nodes[1].tls_key_file: does not match"},
		{n(`{"url":"rediss://127.0.0.1:2","tls_ca_file":1}`), "nodes[1].tls_ca_file: must be a string"},
		{n(`{"url":"rediss://127.0.0.1:2","tls_server_name":null}`), "nodes[1].tls_server_name: must not be null"},
		{n(`{"url":"rediss://127.0.0.1:2","x":1}`), "nodes[1].x: unknown key"},
		{n(`{"url":"rediss://127.0.0.1:2","url":"rediss://127.0.0.1:3"}`), `duplicate key "nodes[1].url"`},
		{n(`{"tls_ca_file":` + q(c.CA) + `}`), "nodes[1].url: required"},
		{n(`{"url":7}`), "nodes[1].url: must be a string"},
		{n(`{"url":"http://x"}`), "nodes[1]"},
		{n(`7`), "nodes[1]: must be a URL string or an object"},
	}
	for _, k := range cases {
		_, r := clientNew(k.js)
		assertFailure(t, statusInvalidArgument, r, k.js, k.want)
	}
}

// lock_engine_new takes the object form too, with "url" only: its host
// builds TLS connections itself, so a node's TLS keys are unknown there as
// the client-level ones are.
func TestEngineConfigNodeObjects(t *testing.T) {
	_, err := hostabi.New(`{"nodes":[{"url":"rediss://127.0.0.1:1"}]}`)
	require.NoError(t, err, "object form")
	for _, key := range []string{"tls_ca_file", "tls_cert_file", "tls_key_file", "tls_server_name"} {
		_, err := hostabi.New(`{"nodes":["redis://127.0.0.1:2",{"url":"rediss://127.0.0.1:1","` + key + `":"x"}]}`)
		assert.ErrorContains(t, err, "nodes[1]."+key+": unknown key", key)
	}
}
