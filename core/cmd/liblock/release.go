package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/liblock/liblock/core"
)

const releaseSynopsis = "liblock release --token T [--nodes URL,...] [--node-timeout 50ms] [--key-prefix P] NAME"

// releaseTTL is the ttl of the re-entry that proves the token holds the
// lock. A re-entry never shortens a lock; if the token did not hold it,
// the lock taken by mistake is released at once (or expires in this long).
const releaseTTL = 2 * time.Second

func releaseCmd(args []string, stdout, stderr io.Writer) int {
	var c common
	var token string
	fs := newFlagSet("release")
	c.register(fs, false)
	fs.StringVar(&token, "token", "", "the token of the lock (LIBLOCK_TOKEN of the command that holds it)")
	names, err := parseInterleaved(fs, args)
	switch {
	case err == errHelp:
		err = &helpRequest{fs: fs, synopsis: releaseSynopsis}
	case err != nil:
	case len(names) != 1:
		err = usagef("want one NAME, got %d (%s)", len(names), releaseSynopsis)
	case token == "":
		err = usagef("--token is required: only the token's holder may release a lock")
	}
	if code, done := handleParse(err, stdout, stderr, "release"); done {
		return code
	}
	name := names[0]
	client, code := c.client("release", stderr)
	if client == nil {
		return code
	}
	defer client.Close()
	ctx := context.Background()
	// Re-enter the lock by its token: only a re-entry proves the token
	// holds it on a quorum.
	lock, err := client.Acquire(ctx, name, releaseTTL, core.WithToken(token))
	switch {
	case errors.Is(err, core.ErrNotAcquired):
		fmt.Fprintf(stderr, "liblock release: the token does not hold %q: another owner holds it; nothing changed (exit %d)\n", name, exitNotAcquired)
		return exitNotAcquired
	case err != nil:
		return fail(stderr, "release", argUsage(err))
	case !lock.Reentered():
		_ = lock.Release(ctx)
		fmt.Fprintf(stderr, "liblock release: the token does not hold %q: it was not held; nothing changed (exit %d)\n", name, exitNotAcquired)
		return exitNotAcquired
	}
	if err := lock.Release(ctx); err != nil {
		return fail(stderr, "release", err)
	}
	return exitOK
}
