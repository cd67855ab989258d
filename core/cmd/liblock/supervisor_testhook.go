//go:build liblocktest

package main

import "os"

// In a test build, LIBLOCK_TEST_SUPERVISOR_NO_KILL=1 switches off the
// supervisor's kill on liblock's death: the negative control of the tests
// that prove the command's tree dies with liblock.
func init() {
	supervisorNoKill = func() bool { return os.Getenv("LIBLOCK_TEST_SUPERVISOR_NO_KILL") == "1" }
}
