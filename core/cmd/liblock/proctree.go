package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The process tree of a command run under a lock. The supervisor (and
// liblock itself) is a child subreaper: a descendant whose parent dies is
// re-parented to it, not to init, so every process the command starts —
// through setsid, a double fork or a daemonizing shell — stays a
// descendant, and ending "the tree" means ending every descendant.

// proc is one process as /proc shows it: its pid, its parent, and its start
// time (clock ticks since boot), which tells it apart from a later process
// given the same pid.
type proc struct {
	pid, ppid int
	start     uint64
	zombie    bool
}

// readProc parses /proc/PID/stat.
func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	// The command name, in parentheses, may hold spaces and parentheses:
	// the fields follow its last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return proc{}, false
	}
	f := strings.Fields(s[i+1:])
	// f[0] is the state (field 3), f[1] the parent (4), f[19] the start
	// time (22).
	if len(f) < 20 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, start: start, zombie: f[0] == "Z" || f[0] == "X"}, true
}

// descendants lists every process below this one (zombies included: they
// are gone once reaped).
func descendants() []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []proc
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// signalProc sends sig to p unless its pid now names another process: the
// pidfd pins the process, the start time read after opening it proves it
// is the one listed. It returns the error of the signal (EPERM: a process
// of another user, e.g. a command run through sudo).
func signalProc(p proc, sig syscall.Signal) error {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) {
			return syscall.Kill(p.pid, sig) // kernels before 5.3
		}
		return nil // gone already
	}
	defer unix.Close(fd)
	if now, ok := readProc(p.pid); !ok || now.start != p.start {
		return nil
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0)
}

// signalTree sends sig to every living descendant.
func signalTree(sig syscall.Signal) {
	for _, p := range descendants() {
		if !p.zombie {
			_ = signalProc(p, sig)
		}
	}
}

// reapAll reaps every child that has ended; it returns the wait status of
// the child pid when that one was among them.
func reapAll(pid int) (ws syscall.WaitStatus, reaped bool) {
	for {
		var st syscall.WaitStatus
		got, err := syscall.Wait4(-1, &st, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || got <= 0 {
			return ws, reaped
		}
		if got == pid {
			ws, reaped = st, true
		}
	}
}

// killTree SIGKILLs every descendant and reaps until none is left: a
// process forking while it is killed leaves a child, which is re-parented
// here and killed on the next pass. It returns the wait status of the
// child pid if killTree reaped it.
//
// A descendant it may not signal (another user's: a command run through
// sudo) cannot be killed from here: killTree says so on stderr once and
// waits for it to end, backing off, since nothing of the command may run
// on once liblock reports its end (and releases the lock).
func killTree(pid int) (ws syscall.WaitStatus, reaped bool) {
	pause := time.Millisecond
	warned := map[proc]bool{}
	for {
		if st, ok := reapAll(pid); ok {
			ws, reaped = st, true
		}
		left := descendants()
		if len(left) == 0 {
			return ws, reaped
		}
		stuck := true
		for _, p := range left {
			if p.zombie {
				stuck = false // its parent is being killed: it comes here
				continue
			}
			if err := signalProc(p, syscall.SIGKILL); errors.Is(err, syscall.EPERM) {
				if !warned[p] {
					warned[p] = true
					fmt.Fprintf(os.Stderr, "liblock: process %d of the command may not be killed by this user (%v): waiting for it to end\n", p.pid, err)
				}
				continue
			}
			stuck = false
		}
		// A killed process takes a moment to exit; a zombie whose parent
		// is killed comes here to be reaped. Only unkillable processes
		// left: wait for them without spinning.
		if stuck {
			pause = min(2*pause, 100*time.Millisecond)
		} else {
			pause = time.Millisecond
		}
		time.Sleep(pause)
	}
}

// becomeSubreaper makes this process the subreaper of its descendants.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}
