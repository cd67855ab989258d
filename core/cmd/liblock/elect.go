package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/liblock/liblock/core"
)

const electSynopsis = "liblock elect [--ttl 10s] [--wait D] [--grace 5s] [--nodes URL,...] [--node-timeout 50ms] [--key-prefix P] [--owner O] NAME --value V -- CMD [ARGS...]\n       liblock elect --observe [--json] [--poll 1s] [--count N] [--nodes URL,...] NAME"

const electAbout = `Campaigns in the election NAME, publishing V, and runs CMD only while
leading: once elected, CMD runs with LIBLOCK_ELECTION (NAME), LIBLOCK_VALUE
(V), LIBLOCK_TERM and LIBLOCK_FENCE (the term: greater than every earlier
leader's) in its environment; the leadership is extended in the background.
As with run: CMD runs in its own process group under a supervisor,
SIGINT, SIGTERM and SIGHUP go to it, if the leadership is lost every
process of CMD gets SIGTERM, then SIGKILL after --grace, and liblock exits
70; if liblock dies, even by SIGKILL, every process of CMD is killed. When CMD exits, liblock
resigns (observers learn it at once) and exits with CMD's code.
By default it waits to lead for as long as it takes (a standby replica);
--wait bounds that (65 when another still leads).

With --observe it prints the election's leader now and then each change,
one line each (JSON lines with --json), until SIGINT or SIGTERM (exit 0),
or after --count lines.
`

type electOpts struct {
	runOpts
	value   string
	hasWait bool
	observe bool
	poll    time.Duration
	count   int
}

// optionalDuration is a durationFlag that remembers it was given.
type optionalDuration struct {
	durationFlag
	set *bool
}

func (f optionalDuration) Set(s string) error {
	*f.set = true
	return f.durationFlag.Set(s)
}

func parseElect(args []string) (*electOpts, error) {
	o := &electOpts{runOpts: runOpts{ttl: core.DefaultCampaignTTL, grace: DefaultGrace, command: "elect"}}
	fs := newFlagSet("elect")
	o.register(fs, true)
	fs.Var(durationFlag{&o.ttl}, "ttl", "the leadership's lease, extended in the background while CMD runs; a dead leader is replaced about this long after (a `duration` with a unit)")
	fs.Var(optionalDuration{durationFlag{&o.wait}, &o.hasWait}, "wait", "how long to wait to lead; default: as long as it takes; 0: one attempt (a `duration` with a unit)")
	fs.Var(durationFlag{&o.grace}, "grace", "on loss, time between SIGTERM and SIGKILL to every process of CMD (a `duration` with a unit)")
	fs.StringVar(&o.value, "value", "", "the value observers see while this process leads (e.g. its address)")
	fs.BoolVar(&o.observe, "observe", false, "print each leader change of NAME instead of campaigning")
	fs.Var(durationFlag{&o.poll}, "poll", "--observe: how often to read the election when pub/sub says nothing (default 1s) (a `duration` with a unit)")
	fs.IntVar(&o.count, "count", 0, "--observe: exit 0 after this many lines (0: never)")
	pre, cmd, dashes := splitDashes(args)
	pos, err := parseInterleaved(fs, pre)
	if err == errHelp {
		return nil, &helpRequest{fs: fs, synopsis: electSynopsis, about: electAbout}
	}
	if err != nil {
		return nil, err
	}
	switch {
	case len(pos) == 0:
		return nil, usagef("missing NAME (%s)", electSynopsis)
	case len(pos) > 1:
		return nil, usagef("one NAME, got %d: %q", len(pos), pos)
	case o.count < 0:
		return nil, usagef("--count: must not be negative, got %d", o.count)
	}
	o.name = pos[0]
	if o.observe {
		if dashes || o.value != "" {
			return nil, usagef("--observe takes no --value and no command")
		}
		return o, nil
	}
	switch {
	case o.value == "":
		return nil, usagef("--value: missing (what observers see while this process leads)")
	case !dashes:
		return nil, usagef("missing -- between NAME and the command (liblock elect NAME --value V -- CMD ARGS...)")
	case len(cmd) == 0:
		return nil, usagef("no command after --")
	}
	o.argv = cmd
	return o, nil
}

func electCmd(args []string, stdout, stderr io.Writer) int {
	o, err := parseElect(args)
	if code, done := handleParse(err, stdout, stderr, "elect"); done {
		return code
	}
	client, code := o.client("elect", stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	if o.observe {
		return o.watch(client, stdout, stderr)
	}
	return o.lead(client, stderr)
}

// electUsage is argUsage with the election's own arguments.
func electUsage(err error) error {
	var ae *core.ArgumentError
	if errors.As(err, &ae) {
		switch ae.Arg {
		case "name":
			return usagef("NAME: %s", errText(err))
		case "value":
			return usagef("--value: %s", errText(err))
		case "poll":
			return usagef("--poll: %s", errText(err))
		}
	}
	return argUsage(err)
}

// lead campaigns, then runs the command as run does, resigning at the end.
func (o *electOpts) lead(client *core.Client, stderr io.Writer) int {
	sigs := forwardedSignals()
	defer signal.Stop(sigs)

	opts := []core.CampaignOption{core.CampaignTTL(o.ttl)}
	if o.hasWait {
		opts = append(opts, core.CampaignWait(o.wait))
	}
	ld, err, s := untilSignal(sigs, func(ctx context.Context) (*core.Leadership, error) {
		return client.Campaign(ctx, o.name, o.value, opts...)
	}, func(ld *core.Leadership) { _ = ld.Resign(context.Background()) })
	if s != nil {
		return o.gaveUp(stderr, s, "to lead "+strconv.Quote(o.name))
	}
	switch {
	case errors.Is(err, core.ErrNotAcquired):
		fmt.Fprintf(stderr, "liblock elect: another leads %q: not elected within %v (exit %d)\n", o.name, o.wait, exitNotAcquired)
		return exitNotAcquired
	case err != nil:
		return fail(stderr, "elect", electUsage(err))
	}
	lock := ld.Lock()
	term := strconv.FormatInt(ld.Term(), 10)
	o.fence = true // LIBLOCK_FENCE: the term
	o.env = []string{"LIBLOCK_ELECTION=" + o.name, "LIBLOCK_VALUE=" + o.value, "LIBLOCK_TERM=" + term}
	fmt.Fprintf(stderr, "liblock elect: leading %q with term %s\n", o.name, term)
	return o.runHolding(lock, sigs, stderr, "the leadership of "+strconv.Quote(o.name)+" was lost")
}

// leaderLine is one --observe --json line.
type leaderLine struct {
	Name       string `json:"name"`
	Leader     bool   `json:"leader"`
	Value      string `json:"value,omitempty"`
	Term       int64  `json:"term,omitempty"`
	Owner      string `json:"owner,omitempty"`
	ValidityMS int64  `json:"validity_ms,omitempty"`
}

// watch prints each change until a signal, or --count lines.
func (o *electOpts) watch(client *core.Client, stdout, stderr io.Writer) int {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opts []core.ObserveOption
	if o.poll > 0 {
		opts = append(opts, core.ObservePoll(o.poll))
	}
	changes, err := client.Observe(ctx, o.name, opts...)
	if err != nil {
		return fail(stderr, "elect", electUsage(err))
	}
	enc := json.NewEncoder(stdout)
	lines := 0
	for {
		select {
		case <-sigs:
			return exitOK
		case l, ok := <-changes:
			if !ok {
				return exitOK
			}
			switch {
			case o.json:
				_ = enc.Encode(leaderLine{Name: o.name, Leader: l.Term != 0, Value: l.Value, Term: l.Term, Owner: l.Owner, ValidityMS: l.Validity.Milliseconds()})
			case l.Term == 0:
				fmt.Fprintf(stdout, "%s: no leader\n", o.name)
			default:
				fmt.Fprintf(stdout, "%s: leader %q term %d (valid %v)\n", o.name, l.Value, l.Term, l.Validity.Round(time.Millisecond))
			}
			if lines++; o.count > 0 && lines >= o.count {
				return exitOK
			}
		}
	}
}
