package main

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Package core links go-redis (core.NewFromClients takes go-redis clients),
// and go-redis's default logger writes to the process's stderr. A library
// loaded into someone else's process must not write there: failures are
// reported through status codes and messages instead.
type silentLogger struct{}

func (silentLogger) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(silentLogger{}) }
