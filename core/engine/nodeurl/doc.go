// Package nodeurl reads liblock's node URLs: the one parser every binding
// uses. Parse accepts exactly the URLs go-redis v9.23.0's redis.ParseURL
// accepts, reads the same fields from them and refuses the others with
// go-redis's message (the password scrubbed from it).
//
// Accepted forms (go-redis's):
//
//	redis://[user[:password]@][host][:port][/db][?options]   (host localhost, port 6379 when empty)
//	rediss://...                                             (the same over TLS)
//	unix://[user[:password]@]/path/to/socket[?db=N][&options]
//
// A URL whose query has master_name is a Sentinel node instead, read as
// go-redis's ParseFailoverURL reads it (failover.go); one whose query has
// cluster=yes is a Redis Cluster node, read as go-redis's ParseClusterURL
// reads it (cluster.go).
//
// A TCP port (of the server, of every cluster seed and of every sentinel)
// must be a number from 1 to 65535: go-redis accepts any digits there and
// fails at dial, but every host would then meet the bad port in its own
// socket layer, with its own error (Node throws ERR_SOCKET_BAD_PORT), so
// liblock refuses it here, once, for every language (ports.go).
//
// Options: db, client_name and skip_verify (rediss only) are read; the
// other options go-redis knows (protocol, max_retries, the timeouts, the
// pool sizes, ...) are checked as go-redis checks them and ignored;
// anything else is refused.
//
// The package does no I/O and imports neither net/url nor fmt: it is linked
// into liblock.wasm, whose size budget forbids them (nodeurl_deps_test.go).
//
// Layer: the engine's (no I/O). It imports only the standard library and
// core/internal/xtime; core/engine, the Go driver and the command import
// it.
package nodeurl
