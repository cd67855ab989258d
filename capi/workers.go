package main

import "time"

// Async operations run on reused goroutines. A new goroutine starts with a
// small stack, and an acquire or a release through go-redis is deep enough
// to grow it two or three times: each growth copies the stack and walks its
// frames, which showed as about 7% of the CPU of an acquire+release loop
// driven from Node. A worker keeps its grown stack for the next operation.
//
// A worker lives while there is work and exits after workerIdle without
// any, so a burst (a thousand waiting acquires) leaves no goroutines behind
// for long.

// workerIdle is how long an idle worker waits for a job before it exits.
const workerIdle = time.Second

// jobs is unbuffered: a send succeeds only when an idle worker is receiving.
var jobs = make(chan func())

// spawn runs job on an idle worker, or on a new one if none is idle.
func spawn(job func()) {
	select {
	case jobs <- job:
	default:
		go worker(job)
	}
}

func worker(job func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		job()
		job = nil
		idle.Reset(workerIdle) // since Go 1.23, Reset leaves no stale tick in idle.C
		select {
		case job = <-jobs:
		case <-idle.C:
			return
		}
	}
}
