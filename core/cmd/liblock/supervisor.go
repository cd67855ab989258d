package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// The supervisor: a small process between liblock and the command, so that
// the command's whole tree ends when liblock dies, even by SIGKILL.
//
// liblock starts it (its own binary, `liblock __supervise -- CMD ARGS...`)
// with two pipes: a control pipe liblock writes to (fd 3 here) and a status
// pipe liblock reads (fd 4). The supervisor makes itself a child subreaper,
// starts CMD in its own process group and reaps everything below it. When
// the control pipe reaches end-of-file without a goodbye, liblock is gone
// (the kernel closes a dead process's descriptors, whatever killed it, and
// no other process holds that end): the supervisor SIGKILLs every
// descendant, reaps until none is left, and exits. A pipe rather than
// PR_SET_PDEATHSIG: it has no race between the start and the parent's
// death (the end-of-file is there even if liblock died first) and is not
// tied to the thread that forked.
//
// Control messages are two bytes: an operation and a signal number.
// Status lines: "pid N" once the command runs, "err CODE MESSAGE" when it
// could not start, "status W" (its raw wait status) once it and every
// process it left are gone.
const supervisorArg = "__supervise"

const (
	opGroup = 'g' // send the signal to the command's process group (forwarding)
	opTree  = 't' // send the signal to every descendant (loss: SIGTERM, then SIGKILL)
)

const (
	ctlFD    = 3
	statusFD = 4
)

// supervisorNoKill reports whether the kill on liblock's death is switched
// off: only a test build (-tags liblocktest) can, for the negative control
// of the tests that prove the tree dies.
var supervisorNoKill = func() bool { return false }

func superviseMain(args []string, stderr io.Writer) int {
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(stderr, "liblock: __supervise is liblock's own helper, not a command")
		return exitUsage
	}
	argv := args[1:]
	ctl := os.NewFile(ctlFD, "control")
	status := os.NewFile(statusFD, "status")
	if ctl == nil || status == nil {
		fmt.Fprintln(stderr, "liblock: __supervise is liblock's own helper, not a command")
		return exitUsage
	}
	// The command must not inherit either pipe: a copy of the control
	// pipe's read end is harmless, of the status pipe's write end would
	// keep liblock from seeing the supervisor go.
	syscall.CloseOnExec(ctlFD)
	syscall.CloseOnExec(statusFD)
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintf(status, "err %d cannot become the subreaper of the command: %v\n", exitInternal, err)
		return exitInternal
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Setpgid: the command and what it starts form one group, so a
	// forwarded signal reaches its children as a terminal's would.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		code := exitCannotExec
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = exitNotFound
		}
		fmt.Fprintf(status, "err %d %s\n", code, strings.ReplaceAll(err.Error(), "\n", " "))
		return 0
	}
	pid := cmd.Process.Pid
	fmt.Fprintf(status, "pid %d\n", pid)

	msgs := make(chan [2]byte)
	go func() {
		defer close(msgs)
		var m [2]byte
		for {
			if _, err := io.ReadFull(ctl, m[:]); err != nil {
				return
			}
			msgs <- m
		}
	}()

	// The command's status, once reaped. Never exec.Cmd.Wait: this process
	// reaps every child itself (wait4 on any pid), the command included.
	var ws syscall.WaitStatus
	for done := false; !done; {
		select {
		case s := <-sigs:
			if s == syscall.SIGCHLD {
				ws, done = reapAll(pid)
				continue
			}
			// Someone signalled the supervisor itself: pass it on.
			_ = syscall.Kill(-pid, s.(syscall.Signal))
		case m, ok := <-msgs:
			if !ok {
				// liblock is gone: nothing must run on. The group first,
				// in one call (most of the tree, at once), then every
				// process left below, wherever it went.
				if !supervisorNoKill() {
					_ = syscall.Kill(-pid, syscall.SIGKILL)
					killTree(pid)
				}
				return 0
			}
			switch m[0] {
			case opGroup:
				_ = syscall.Kill(-pid, syscall.Signal(m[1]))
			case opTree:
				signalTree(syscall.Signal(m[1]))
			}
		}
	}
	// The command ended: what it left (in its group or out of it) ends
	// before liblock hears of it, so before the lock is released.
	killTree(pid)
	fmt.Fprintf(status, "status %d\n", uint32(ws))
	return 0
}

// supervised is a command running under the supervisor, seen from liblock.
type supervised struct {
	sup  *exec.Cmd
	ctl  *os.File // write end of the control pipe
	pid  int      // the command's pid (its process group)
	done chan supervisedEnd
}

// supervisedEnd is how a supervised command ended.
type supervisedEnd struct {
	ws syscall.WaitStatus
	// supErr is set when the supervisor died before reporting: the
	// command's tree was re-parented to liblock, which killed it.
	supErr error
}

// startSupervised starts argv under a supervisor with env as its
// environment. On failure it returns the exit code and the message to
// print.
func startSupervised(argv, env []string) (*supervised, int, string) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, exitInternal, err.Error()
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, exitInternal, err.Error()
	}
	// liblock adopts the tree if the supervisor dies first.
	if err := becomeSubreaper(); err != nil {
		return nil, exitInternal, "cannot become a subreaper: " + err.Error()
	}
	sup := exec.Command("/proc/self/exe", append([]string{supervisorArg, "--"}, argv...)...)
	sup.Args[0] = os.Args[0]
	sup.Stdin, sup.Stdout, sup.Stderr = os.Stdin, os.Stdout, os.Stderr
	sup.Env = env
	sup.ExtraFiles = []*os.File{ctlR, statusW}
	// Its own process group: a terminal's Ctrl-C reaches liblock, which
	// forwards it once, not the supervisor too.
	sup.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = sup.Start()
	ctlR.Close()
	statusW.Close()
	if err != nil {
		ctlW.Close()
		statusR.Close()
		return nil, exitInternal, "cannot start the supervisor: " + err.Error()
	}
	s := &supervised{sup: sup, ctl: ctlW, done: make(chan supervisedEnd, 1)}
	lines := bufio.NewScanner(statusR)
	first := ""
	if lines.Scan() {
		first = lines.Text()
	}
	switch op, rest, _ := strings.Cut(first, " "); op {
	case "pid":
		s.pid, _ = strconv.Atoi(rest)
	case "err":
		codeText, msg, _ := strings.Cut(rest, " ")
		code, _ := strconv.Atoi(codeText)
		statusR.Close()
		_ = sup.Wait()
		ctlW.Close()
		return nil, code, msg
	default:
		s.finish(lines, statusR)
		end := <-s.done
		return nil, exitInternal, end.supErr.Error()
	}
	go s.finish(lines, statusR)
	return s, 0, ""
}

// finish reads the supervisor's last line, waits for it, and reports how
// the command ended on s.done.
func (s *supervised) finish(lines *bufio.Scanner, statusR *os.File) {
	var end supervisedEnd
	got := false
	for lines.Scan() {
		if op, rest, _ := strings.Cut(lines.Text(), " "); op == "status" {
			if w, err := strconv.ParseUint(rest, 10, 32); err == nil {
				end.ws, got = syscall.WaitStatus(w), true
			}
		}
	}
	statusR.Close()
	werr := s.sup.Wait()
	s.ctl.Close()
	if !got {
		// The supervisor died (killed by someone) before the command's
		// tree was gone: that tree is liblock's now; end it here.
		killTree(-1)
		end.supErr = fmt.Errorf("the supervisor died (%v) before the command ended: every process of the command was killed", werr)
	}
	s.done <- end
}

// send asks the supervisor to deliver sig (opGroup: to the command's
// group; opTree: to every process of the command).
func (s *supervised) send(op byte, sig syscall.Signal) {
	_, _ = s.ctl.Write([]byte{op, byte(sig)})
}
