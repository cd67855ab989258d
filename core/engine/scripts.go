package engine

import _ "embed"

// script is a Lua script run with EVALSHA, falling back to EVAL on a node
// that answers NOSCRIPT (which also caches it there for next time).
type script struct {
	src, sha string
}

var (
	//go:embed release.lua
	releaseSrc string
	//go:embed extend.lua
	extendSrc string
)

// The scripts' SHA-1 sums, the names EVALSHA runs them by
// (TestScriptHashes checks them against crypto/sha1).
const (
	ReleaseSHA = "54f70373f450b6b8faf207c4e59aeab41d4ebe6f"
	ExtendSHA  = "c50343e01dd9310b37fcced0dccd5ac1eecff492"
)

var (
	// releaseScript deletes the key only while it still holds our token,
	// and then publishes the release's id on ReleasedChannel(key), which
	// wakes the processes waiting for the key.
	releaseScript = &script{src: releaseSrc, sha: ReleaseSHA}
	// extendScript resets the expiry only while the key holds our token; it
	// never creates the key, so an expired lock cannot be re-acquired here.
	extendScript = &script{src: extendSrc, sha: ExtendSHA}
)

// ReleasedChannel is the pub/sub channel on which a release of key is
// announced (the message is the release's random id).
func ReleasedChannel(key string) string { return releasedPrefix + key }

const releasedPrefix = "liblock:released:"
