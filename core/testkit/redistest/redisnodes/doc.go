// Command redisnodes starts a set of real redis-server processes on free
// loopback ports and drives them, so that tests and demos in any language
// share one harness (package redistest).
//
// Two modes:
//
//	redisnodes -n 3 [-dir DIR] -- CMD ARGS...
//
// starts the nodes, runs CMD with LIBLOCK_NODES (comma-separated redis://
// URLs) and LIBLOCK_NODE_PIDS (comma-separated pids) in its environment,
// stops the nodes when CMD ends (whatever the outcome) and exits with CMD's
// status.
//
//	redisnodes -n 3 [-dir DIR]
//
// starts the nodes, prints one JSON line
//
//	{"nodes":[{"index":0,"port":7001,"pid":123,"url":"redis://127.0.0.1:7001"},...]}
//
// and then reads commands from standard input, one per line, answering
// each with one JSON line ({"ok":true,...} or {"ok":false,"error":"..."}):
//
//	kill I      SIGKILL node I and wait for it to exit
//	freeze I    SIGSTOP node I
//	thaw I      SIGCONT node I
//	restart I   kill node I if needed and start it again, empty, on the same port
//	flush       FLUSHALL on every live node
//	keys        {"ok":true,"keys":[["k1"],[],...]} per node (live, unfrozen nodes)
//	nodes       the JSON line above again (pids change on restart)
//	quit        stop every node and exit
//
// End of input stops every node too, so a test runner that dies takes its
// nodes with it.
//
//	redisnodes -n 3 -port 7001 -hold
//
// starts the nodes on fixed ports, 7001, 7002, 7003 (-port P: node i on
// P+i; a port in use is an error naming it), says where they listen and
// keeps them until SIGINT (Ctrl-C) or SIGTERM, then stops them and exits
// 0: what `make nodes` runs. -port works with the two modes above too.
//
// With -sentinel, the nodes are a Sentinel deployment instead
// (redistest.StartSentinel): node 0 the primary as started, nodes 1..n-1
// its replicas, and 3 sentinels. Its node URL is LIBLOCK_SENTINEL_URL in
// CMD's environment, and "sentinel_url" in the first JSON line; the
// commands above act on the data nodes (kill 0 kills the first primary).
//
// With -cluster, the nodes are a Redis Cluster instead
// (redistest.StartRedisClusterIn): n primaries and -replicas replicas each
// (default 1), nodes 0..n-1 the primaries as started. Its node URL
// (cluster=yes, every node a seed) is LIBLOCK_CLUSTER_URL in CMD's
// environment, and "cluster_url" in the first JSON line; the commands above
// act on every node of the cluster ("keys" lists each node's, replicas
// included; "restart" is not supported: a cluster node restarted empty
// would have to rejoin). With -cluster and -tls DIR (the files of
// core/testkit/tlstest/mkcerts.sh), every node also listens with TLS and
// runs its bus and replication over it; the cluster's rediss:// URL is
// LIBLOCK_CLUSTER_TLS_URL and "cluster_tls_url".
//
// Layer: a test command (build/redisnodes), beside the library: it imports
// only the standard library and core/testkit/redistest.
package main
