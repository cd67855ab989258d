package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Exit codes. The child's own code passes through `run` unchanged, so a
// child exiting with one of these is indistinguishable by code alone:
// liblock prints a line on stderr whenever the code is its own.
const (
	exitOK          = 0
	exitDoctorFail  = 1   // doctor: at least one check failed
	exitUsage       = 64  // EX_USAGE: bad command line
	exitNotAcquired = 65  // held elsewhere (not acquired within --wait); release: the token does not hold it
	exitUnavailable = 69  // EX_UNAVAILABLE: too many nodes failed for a quorum
	exitLost        = 70  // the lock was lost while the command ran
	exitInternal    = 71  // anything else
	exitCannotExec  = 126 // run: the command was found but could not be started
	exitNotFound    = 127 // run: the command was not found
)

// version is set at build time with -ldflags "-X main.version=..."; by
// default it is the module's version as the build recorded it.
var version = ""

const helpText = `liblock: a Redlock lock for shell scripts, cron lines and services.

Usage:
  liblock run [flags] NAME -- CMD [ARGS...]   run CMD while holding the lock NAME
                                              (--permits N: one of N permits; --read, --write)
  liblock elect [flags] NAME --value V -- CMD run CMD only while leading the election NAME
  liblock elect --observe [--json] NAME       print each leader change of the election NAME
  liblock inspect [flags] NAME...             is NAME held, for how long, by whom, per node
  liblock release --token T [flags] NAME      release NAME held by token T
  liblock doctor [flags]                      check the nodes against Redlock's assumptions
  liblock version                             print the version
  liblock CMD --help                          the flags of CMD

Nodes come from --nodes URL,URL,... or $LIBLOCK_NODES (comma-separated):
redis://[user:password@]host:port[/db], rediss:// for TLS, unix:///path;
a Sentinel node: redis://sentinel:port?master_name=NAME&addr=sentinel2:port...
TLS of rediss:// nodes: --tls-ca-file (a private CA), --tls-cert-file and
--tls-key-file (mutual TLS), --tls-server-name, or $LIBLOCK_TLS_CA_FILE,
$LIBLOCK_TLS_CERT_FILE, $LIBLOCK_TLS_KEY_FILE, $LIBLOCK_TLS_SERVER_NAME;
a URL's ?skip_verify=true turns verification off for its node.
Use independent primaries, an odd number of them (3 or 5).
Every duration takes a unit: 10s, 500ms, 1m30s.

Exit codes:
  0    ok (run: the command exited 0)
  N    run: the command's own exit code
  128+S run: the command was killed by signal S (as a shell reports it)
  1    doctor: at least one check is "fail"
  64   bad usage (the message names the flag)
  65   the lock is held elsewhere (not acquired within --wait; --permits:
       no permit free; elect:
       another leads and --wait ran out);
       release: the token does not hold NAME
  69   unavailable: too many nodes failed for a quorum
  70   run: the lock was lost while the command ran (the command was
       sent SIGTERM, then SIGKILL after --grace); elect: the leadership
       was lost likewise
  71   internal error (run, elect: also when liblock's supervisor of the
       command was killed; every process of the command was killed too)
  126  run: the command could not be executed
  127  run: the command was not found
Whenever the code is liblock's own (not the command's), liblock says why on stderr.
`

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs the command line args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, helpText)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, helpText)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "liblock", versionString())
		return exitOK
	case "run":
		return runCmd(rest, stdout, stderr)
	case "inspect":
		return inspectCmd(rest, stdout, stderr)
	case "elect":
		return electCmd(rest, stdout, stderr)
	case "release":
		return releaseCmd(rest, stdout, stderr)
	case "doctor":
		return doctorCmd(rest, stdout, stderr)
	case supervisorArg:
		return superviseMain(rest, stderr)
	}
	fmt.Fprintf(stderr, "liblock: unknown command %q (run, elect, inspect, release, doctor, version; see liblock --help)\n", cmd)
	return exitUsage
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v := bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
		if v != "" {
			return v
		}
	}
	return "(devel)"
}

// usageError is a bad command line: exit 64.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// errHelp is returned when --help was asked: print the usage, exit 0.
var errHelp = errors.New("help")
