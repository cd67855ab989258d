package main

import (
	"context"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// A library loaded into someone else's process must not write on its
// stderr: failures are reported through status codes and messages, and a
// lost lock through lock_on_lost, lock_client_on_lost and LOCK_LOST (the
// program decides what to log). Two writers are silenced here.

// Package core links go-redis (core.NewFromClients takes go-redis clients),
// and go-redis's default logger writes to the process's stderr.
type silentLogger struct{}

func (silentLogger) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(silentLogger{}) }

// quietLogger is every client's core.Config.Logger: without one, core logs
// a lost lock to slog.Default(), which in a C or JVM process is Go's
// default handler, printing on stderr.
var quietLogger = slog.New(slog.DiscardHandler)
