// Command liblock-demo-rw tells the read-write lock's story in Go against
// the nodes in LIBLOCK_NODES (make demo starts three): four readers serve
// the catalog, several at a time, back to back, when the nightly report job
// arrives as the writer. New readers are held back by its intent, the ones
// inside finish, the report runs alone, and the readers go on after it.
//
// Layer: a command, at the top, over the Go driver: it imports only core
// and the standard library.
package main
