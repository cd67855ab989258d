// Command faultproxy runs package faultproxy for tests in any language:
//
//	faultproxy -signal STOP|KILL [-faults N] (-fence | -match HEX[,HEX...]) -route HOST:PORT=PID [-route ...]
//
// It listens on one free 127.0.0.1 port per route and prints them, space
// separated and in route order, as its first line of output. A client's
// bytes to a route's node that contain a pattern (-fence: the fence round's
// command, faultproxy.FencePatterns; -match: hex-encoded bytes) make it send
// the signal to that node's PID before forwarding them — to at most N routes
// in all (default 1), the first to match.
//
// It then reads commands from standard input, one per line:
//
//	fired    answers "fired I J ..." with the routes signalled so far, in order
//
// and exits at the end of its input, on SIGTERM or SIGINT.
//
// Layer: a test command (build/faultproxy), beside the library: it imports
// only the standard library and core/testkit/redistest/faultproxy.
package main
