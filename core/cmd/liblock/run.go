package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/liblock/liblock/core"
	"golang.org/x/sys/unix"
)

const runSynopsis = "liblock run [--ttl 30s] [--wait 10s] [--fence] [--permits N | --read | --write] [--grace 5s] [--nodes URL,...] [--node-timeout 50ms] [--key-prefix P] [--owner O] NAME -- CMD [ARGS...]"

const runAbout = `Acquires NAME (extended in the background while CMD runs), runs CMD with
LIBLOCK_RESOURCE, LIBLOCK_TOKEN (and LIBLOCK_FENCE with --fence) in its
environment, and releases NAME however it ends. With --permits N it takes one
of N permits of the semaphore NAME instead (LIBLOCK_PERMITS and LIBLOCK_SLOT
added), with --read / --write a side of NAME's read-write lock
(LIBLOCK_MODE added). CMD runs in its own process group under a small
supervisor: SIGINT, SIGTERM and SIGHUP sent to liblock go to CMD's group. If
the lock is lost, every process of CMD gets SIGTERM, then SIGKILL after
--grace, and liblock exits 70 (loss wins over CMD's own code). When CMD
exits, every process it left (in its group or not: setsid and double forks
included) is killed before the lock is released. If liblock dies, even by
SIGKILL, the supervisor kills every process of CMD at once. Exit: CMD's
code, 128+signal, or liblock's own (see liblock --help).
The grace is short on purpose: the lock is already gone, so each second of
grace is a second CMD may run unprotected; 5s allows a clean shutdown and is
short beside typical ttls.
`

// DefaultGrace is how long a command gets between SIGTERM and SIGKILL once
// its lock is lost. The lock is already gone: every moment of grace is a
// moment the command may run unprotected, so it is short — enough for a
// clean shutdown (flush, close, remove a temp file), short beside the
// ttls locks are taken for (30 s by default).
const DefaultGrace = 5 * time.Second

type runOpts struct {
	common
	ttl, wait, grace time.Duration
	fence            bool
	kind             kindOpts // --permits, --read, --write (run_kinds.go)
	name             string
	argv             []string
	// env: more of the command's environment (elect's); command: the
	// subcommand its messages name ("" for run).
	env     []string
	command string
}

// verb is the subcommand the messages name.
func (o *runOpts) verb() string {
	if o.command == "" {
		return "run"
	}
	return o.command
}

// forwarded are the signals liblock passes on to the command.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// forwardedSignals starts catching the forwarded signals (signal.Stop ends
// it): one that arrives while run or elect waits gives up the wait, one
// that arrives while the command runs goes to the command.
func forwardedSignals() chan os.Signal {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	return sigs
}

// gaveUp reports the forwarded signal s that ended the wait (for what) and
// returns the code the command would have exited with: 128+signal.
func (o *runOpts) gaveUp(stderr io.Writer, s os.Signal, what string) int {
	sig := s.(syscall.Signal)
	fmt.Fprintf(stderr, "liblock %s: %s while waiting %s: gave up\n", o.verb(), unix.SignalName(sig), what)
	return 128 + int(sig)
}

func parseRun(args []string) (*runOpts, error) {
	o := &runOpts{ttl: 30 * time.Second, wait: 10 * time.Second, grace: DefaultGrace}
	fs := newFlagSet("run")
	o.register(fs, false)
	fs.Var(durationFlag{&o.ttl}, "ttl", "the lock's lease, extended in the background while CMD runs (a `duration` with a unit)")
	fs.Var(durationFlag{&o.wait}, "wait", "how long to wait for the lock if it is held; 0: one attempt (like flock -n) (a `duration` with a unit)")
	fs.Var(durationFlag{&o.grace}, "grace", "on loss, time between SIGTERM and SIGKILL to every process of CMD (a `duration` with a unit)")
	fs.BoolVar(&o.fence, "fence", false, "take a fencing token and pass it in LIBLOCK_FENCE")
	o.kind.register(fs, true)
	pre, cmd, dashes := splitDashes(args)
	pos, err := parseInterleaved(fs, pre)
	if err == errHelp {
		return nil, &helpRequest{fs: fs, synopsis: runSynopsis, about: runAbout}
	}
	if err == nil {
		err = o.kind.check()
	}
	if err != nil {
		return nil, err
	}
	switch {
	case len(pos) == 0:
		return nil, usagef("missing NAME (%s)", runSynopsis)
	case !dashes:
		return nil, usagef("missing -- between NAME and the command (liblock run NAME -- CMD ARGS...)")
	case len(pos) > 1:
		return nil, usagef("one NAME before --, got %d: %q", len(pos), pos)
	case len(cmd) == 0:
		return nil, usagef("no command after --")
	}
	o.name, o.argv = pos[0], cmd
	return o, nil
}

// splitDashes splits args at the first "--".
func splitDashes(args []string) (before, after []string, found bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

// helpRequest carries a command's flag set to print on --help.
type helpRequest struct {
	fs       *flag.FlagSet
	synopsis string
	about    string // optional: what the command does
}

func (h *helpRequest) Error() string { return "help" }

func runCmd(args []string, stdout, stderr io.Writer) int {
	o, err := parseRun(args)
	if code, done := handleParse(err, stdout, stderr, "run"); done {
		return code
	}
	client, code := o.client("run", stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	return o.run(client, stderr)
}

func (o *runOpts) run(client *core.Client, stderr io.Writer) int {
	sigs := forwardedSignals()
	defer signal.Stop(sigs)

	lock, code := o.acquire(client, sigs, stderr)
	if lock == nil {
		return code
	}
	return o.runHolding(lock, sigs, stderr, strconv.Quote(o.name)+" was no longer held")
}

// acquire takes the lock; a forwarded signal during the wait gives up
// (exit 128+signal, as the command would have).
func (o *runOpts) acquire(client *core.Client, sigs chan os.Signal, stderr io.Writer) (*core.Lock, int) {
	opts := []core.AcquireOption{core.AutoExtend()}
	if o.wait > 0 {
		opts = append(opts, core.Wait(o.wait))
	}
	if o.fence {
		opts = append(opts, core.Fence())
	}
	opts = append(opts, o.kind.acquireOptions()...)
	lock, err, s := untilSignal(sigs, func(ctx context.Context) (*core.Lock, error) {
		return client.Acquire(ctx, o.name, o.ttl, opts...)
	}, func(l *core.Lock) { _ = l.Release(context.Background()) })
	if s != nil {
		return nil, o.gaveUp(stderr, s, "for "+strconv.Quote(o.name))
	}
	switch {
	case err == nil:
		return lock, 0
	case errors.Is(err, core.ErrNotAcquired):
		if o.wait > 0 {
			fmt.Fprintf(stderr, "liblock run: %s is held elsewhere: not acquired within %v (exit %d)\n", o.kind.describe(o.name), o.wait, exitNotAcquired)
		} else {
			fmt.Fprintf(stderr, "liblock run: %s is held elsewhere (exit %d)\n", o.kind.describe(o.name), exitNotAcquired)
		}
		return nil, exitNotAcquired
	}
	return nil, fail(stderr, "run", argUsage(err))
}

// untilSignal runs take until it returns or one of sigs arrives. On a
// signal it cancels take, waits for it, and undoes what it got meanwhile (a
// lock taken, a leadership won), returning the signal; otherwise take's
// outcome and a nil signal.
func untilSignal[T any](sigs <-chan os.Signal, take func(context.Context) (T, error), undo func(T)) (T, error, os.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := take(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err, nil
	case s := <-sigs:
		cancel()
		r := <-done
		if r.err == nil {
			undo(r.v)
		}
		var zero T
		return zero, r.err, s
	}
}

// runHolding runs the command while lock is held (run's lock, elect's
// leadership) and releases it when the command's whole tree is gone. It
// returns the command's code, 128+signal, or 70 after a loss (loss wins
// over the command's own code). lostWhat says what was lost, for the
// message.
func (o *runOpts) runHolding(lock *core.Lock, sigs chan os.Signal, stderr io.Writer, lostWhat string) int {
	child, code := o.start(lock, stderr)
	if child == nil {
		o.release(lock, stderr)
		return code
	}
	code = o.supervise(child, lock, sigs, stderr)
	if relCode := o.release(lock, stderr); relCode == exitLost && code != exitLost {
		fmt.Fprintf(stderr, "liblock %s: %s when the command ended (it exited with %d): exit %d\n", o.verb(), lostWhat, code, exitLost)
		code = exitLost
	}
	return code
}

// start starts the command under the supervisor (supervisor.go), in its
// own process group, with the lock's resource, token and fence in its
// environment.
func (o *runOpts) start(lock *core.Lock, stderr io.Writer) (*supervised, int) {
	env := append(os.Environ(), "LIBLOCK_RESOURCE="+lock.Resource(), "LIBLOCK_TOKEN="+lock.Token())
	if o.fence {
		env = append(env, "LIBLOCK_FENCE="+strconv.FormatInt(lock.Fence(), 10))
	}
	env = append(env, o.kind.env(lock)...)
	env = append(env, o.env...)
	child, code, msg := startSupervised(o.argv, env)
	if child == nil {
		fmt.Fprintf(stderr, "liblock %s: %s (exit %d)\n", o.verb(), msg, code)
		return nil, code
	}
	return child, 0
}

// supervise waits for the command's tree to end, forwarding signals to its
// process group; on loss it sends every process of the command SIGTERM,
// then SIGKILL after the grace. It returns the exit code: the command's,
// 128+signal, or 70 after a loss (loss wins over the command's own code).
func (o *runOpts) supervise(child *supervised, lock *core.Lock, sigs chan os.Signal, stderr io.Writer) int {
	lost := lock.Lost()
	var grace <-chan time.Time
	wasLost := false
	var end supervisedEnd
loop:
	for {
		select {
		case s := <-sigs:
			child.send(opGroup, s.(syscall.Signal))
		case <-lost:
			lost, wasLost = nil, true
			fmt.Fprintf(stderr, "liblock %s: lost %q: %s; sending SIGTERM to the command (SIGKILL in %v)\n", o.verb(), o.name, errText(lock.Err()), o.grace)
			child.send(opTree, syscall.SIGTERM)
			grace = time.After(o.grace)
		case <-grace:
			grace = nil
			fmt.Fprintf(stderr, "liblock %s: the command outlived the %v grace: SIGKILL\n", o.verb(), o.grace)
			child.send(opTree, syscall.SIGKILL)
		case end = <-child.done:
			break loop
		}
	}
	// The supervisor reports only once the command and everything it left
	// are gone: nothing of it runs on once the lock is released.
	if end.supErr != nil {
		fmt.Fprintf(stderr, "liblock %s: %v (exit %d)\n", o.verb(), end.supErr, exitInternal)
		if wasLost || lock.IsLost() {
			return exitLost
		}
		return exitInternal
	}
	code := exitStatus(end.ws)
	if wasLost || lock.IsLost() {
		fmt.Fprintf(stderr, "liblock %s: the command ended (%s) after %q was lost: exit %d\n", o.verb(), describe(end.ws), o.name, exitLost)
		return exitLost
	}
	return code
}

func exitStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + unix.SignalName(ws.Signal())
	}
	return fmt.Sprintf("exit %d", ws.ExitStatus())
}

// release releases the lock: 0, or exitLost when it was no longer held.
func (o *runOpts) release(lock *core.Lock, stderr io.Writer) int {
	err := lock.Release(context.Background())
	switch {
	case err == nil:
		return 0
	case errors.Is(err, core.ErrLost):
		return exitLost
	}
	fmt.Fprintf(stderr, "liblock %s: release %q: %s (its keys expire within --ttl %v)\n", o.verb(), o.name, errText(err), o.ttl)
	return exitFor(err)
}

// handleParse deals with a parse error or --help: done reports that the
// command ends here with code.
func handleParse(err error, stdout, stderr io.Writer, cmd string) (code int, done bool) {
	if err == nil {
		return 0, false
	}
	var h *helpRequest
	if errors.As(err, &h) {
		fmt.Fprintf(stdout, "Usage: %s\n\n", h.synopsis)
		if h.about != "" {
			fmt.Fprintf(stdout, "%s\n", h.about)
		}
		fmt.Fprint(stdout, "Flags:\n")
		h.fs.SetOutput(stdout)
		h.fs.PrintDefaults()
		fmt.Fprint(stdout, "\nExit codes: see liblock --help.\n")
		return exitOK, true
	}
	return fail(stderr, cmd, err), true
}
