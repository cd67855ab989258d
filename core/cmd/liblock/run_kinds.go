package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/liblock/liblock/core"
)

// The lock kinds `run` (and `inspect`) can take besides the mutex: one
// permit of a counting semaphore (--permits N) and either side of a
// read-write lock (--read, --write). They are the library's own kinds
// (core.Permits, core.Read, core.Write): the command only picks one and
// passes what the lock says about itself to the child's environment.

// kindOpts are the flags that choose the lock kind.
type kindOpts struct {
	permits     int  // 0: not a semaphore
	permitsSet  bool // --permits was given (so that --permits 0 is refused, not ignored)
	read, write bool
}

// permitsFlag parses --permits as a whole number; the range is checked
// after parsing (check), with the engine's own bound.
type permitsFlag struct{ k *kindOpts }

func (f permitsFlag) String() string {
	if f.k == nil || !f.k.permitsSet {
		return ""
	}
	return strconv.Itoa(f.k.permits)
}

func (f permitsFlag) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a whole number of permits (1 to %d)", s, core.MaxPermits)
	}
	f.k.permits, f.k.permitsSet = n, true
	return nil
}

// register adds the kind flags; rw adds --read and --write too (run: yes;
// inspect has --rw instead, since both sides are one lock to look at).
func (k *kindOpts) register(fs *flag.FlagSet, rw bool) {
	what := "take one permit of"
	if !rw {
		what = "inspect"
	}
	fs.Var(permitsFlag{k}, "permits", what+" the counting semaphore NAME of `N` permits (1 to "+strconv.Itoa(core.MaxPermits)+"); N is part of the semaphore's identity")
	if rw {
		fs.BoolVar(&k.read, "read", false, "take a reader of NAME's read-write lock (shared with other readers, never with its writer)")
		fs.BoolVar(&k.write, "write", false, "take the writer of NAME's read-write lock (no other writer, no reader)")
	}
}

// check refuses a bad count or a contradictory combination, naming the
// flag, before anything is sent.
func (k *kindOpts) check() error {
	switch {
	case k.permitsSet && (k.permits < 1 || k.permits > core.MaxPermits):
		return usagef("--permits: must be 1 to %d, got %d", core.MaxPermits, k.permits)
	case k.read && k.write:
		return usagef("--read and --write: a command holds one side of a read-write lock, not both")
	case k.permitsSet && (k.read || k.write):
		return usagef("--permits and --%s name two different locks (a semaphore, a read-write lock): pick one", map[bool]string{true: "read", false: "write"}[k.read])
	}
	return nil
}

// acquireOptions are the library options for the chosen kind (none for the
// mutex).
func (k *kindOpts) acquireOptions() []core.AcquireOption {
	switch {
	case k.permitsSet:
		return []core.AcquireOption{core.Permits(k.permits)}
	case k.read:
		return []core.AcquireOption{core.Read()}
	case k.write:
		return []core.AcquireOption{core.Write()}
	}
	return nil
}

// env is what the child learns of its lock's kind: LIBLOCK_PERMITS and
// LIBLOCK_SLOT for a permit (the slot tells N concurrent commands apart,
// e.g. to pick one of N worker directories), LIBLOCK_MODE for a side of a
// read-write lock. Nothing for the mutex, whose environment is unchanged.
func (k *kindOpts) env(lock *core.Lock) []string {
	switch {
	case k.permitsSet:
		return []string{"LIBLOCK_PERMITS=" + strconv.Itoa(lock.Permits()), "LIBLOCK_SLOT=" + strconv.Itoa(lock.Slot())}
	case k.read:
		return []string{"LIBLOCK_MODE=read"}
	case k.write:
		return []string{"LIBLOCK_MODE=write"}
	}
	return nil
}

// describe names the lock in messages: `"job"`, `a permit of "job" (3 permits)`.
func (k *kindOpts) describe(name string) string {
	switch {
	case k.permitsSet:
		return fmt.Sprintf("a permit of %q (%d permits)", name, k.permits)
	case k.read:
		return fmt.Sprintf("a reader of %q", name)
	case k.write:
		return fmt.Sprintf("the writer of %q", name)
	}
	return strconv.Quote(name)
}
