package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/liblock/liblock/core"
)

// Leader election: three replicas — this program run
// again as child processes — campaign for "scheduler"; one leads; it is
// killed (SIGKILL: no resignation), and once its lease runs out another
// takes over with a higher term. An observer prints every change.

const replicaEnv = "LIBLOCK_DEMO_REPLICA"

// replicaMain runs a replica when this process is one: campaign, say so,
// lead until SIGTERM (resign) or SIGKILL. It reports whether it ran.
func replicaMain() bool {
	name := os.Getenv(replicaEnv)
	if name == "" {
		return false
	}
	client, err := core.New(core.Config{Nodes: strings.Split(os.Getenv("LIBLOCK_NODES"), ","), KeyPrefix: "demo:", Owner: name})
	if err != nil {
		fail(err)
	}
	defer client.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ld, err := client.Campaign(ctx, "scheduler", name, core.CampaignTTL(time.Second))
	if err != nil {
		return true // stopped while standing by
	}
	fmt.Printf("LEADER %d\n", ld.Term())
	select {
	case <-ctx.Done():
		_ = ld.Resign(context.Background())
	case <-ld.Lost():
	}
	return true
}

func electionStory(ctx context.Context, client *core.Client, say func(string, ...any)) error {
	say("three replicas campaign to lead \"scheduler\" (a 1s lease, auto-extended)")
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := client.Observe(octx, "scheduler", core.ObservePoll(100*time.Millisecond))
	if err != nil {
		return err
	}
	go func() {
		for l := range changes {
			if l.Term == 0 {
				say("observer: no leader")
			} else {
				say("observer: %s leads, term %d", l.Value, l.Term)
			}
		}
	}()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	replicas := map[string]*exec.Cmd{}
	for _, name := range []string{"replica-a", "replica-b", "replica-c"} {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), replicaEnv+"="+name)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				say("%s: %s", name, strings.ToLower(sc.Text()))
			}
		}()
		replicas[name] = cmd
	}
	defer func() {
		for _, cmd := range replicas {
			_ = cmd.Process.Signal(syscall.SIGTERM) // the standbys stop, the leader resigns
			_ = cmd.Wait()
		}
	}()
	waitLeader := func(after int64) (*core.Leader, error) {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if l, err := client.Leader(ctx, "scheduler"); err == nil && l.Term > after {
				return l, nil
			}
			time.Sleep(20 * time.Millisecond) // a demo's poll
		}
		return nil, fmt.Errorf("no new leader after term %d within 20s", after)
	}
	first, err := waitLeader(0)
	if err != nil {
		return err
	}
	say("leader: %s, term %d; killing its process (SIGKILL: it cannot resign)", first.Value, first.Term)
	killed := time.Now()
	_ = replicas[first.Value].Process.Kill()
	_ = replicas[first.Value].Wait()
	delete(replicas, first.Value)
	second, err := waitLeader(first.Term)
	if err != nil {
		return err
	}
	say("new leader: %s, term %d > %d, %v after the kill (lease 1s)", second.Value, second.Term, first.Term, time.Since(killed).Round(time.Millisecond))
	return nil
}
