package engine

//go:generate go run ./internal/luagen

// script is a Lua script run with EVALSHA, falling back to EVAL on a node
// that answers NOSCRIPT (which also caches it there for next time).
type script struct {
	src, sha string
	bit      uint32 // its bit in node.loaded
}

// The scripts' sources are the .lua files beside this one, as constants
// in scripts_lua.go (releaseSrc, extendSrc, acquireTokenSrc,
// acquireFenceSrc, fenceSrc, inspectSrc), which go generate writes from
// them (TestScriptSources checks they agree); go:embed would link embed,
// io/fs and package time into liblock.wasm.

// The scripts' SHA-1 sums, the names EVALSHA runs them by
// (TestScriptHashes checks them against crypto/sha1).
const (
	ReleaseSHA = "1a2b56a3a26f786c7d11549b1ea9e408b2c3e709"
	ExtendSHA  = "0577f1041d477b7e78c17ede9251f68e078c16fd"
	// AcquireTokenSHA: SET with a caller's token, or re-enter when the key
	// already holds it (2), its expiry raised to at least the ttl.
	AcquireTokenSHA = "f6fa04265dfc1a8ebcd586500e4ab78f82a5bc4e"
	// AcquireFenceSHA: SET NX PX, answering the node's fence counter.
	AcquireFenceSHA = "69b2d8c83f0021a123297ce123569bf6b457a83e"
	// FenceSHA: raise the fence counter to the lock's fence while the key
	// holds its token (-1: the counter is already higher).
	FenceSHA = "43ec98bc2553b904ba4ff625d51c36073d402a7c"
	// InspectSHA: the key's value and PTTL.
	InspectSHA = "cd900b58988cdf49eaa96b67a5b7188155725e84"
)

var (
	// releaseScript deletes the key only while it still holds our token,
	// and then publishes the release's id on ReleasedChannel(key), which
	// wakes the processes waiting for the key (with pcall: a user whose ACL
	// forbids PUBLISH still releases; its waiters poll). An empty id (a
	// hand-off to the releaser's own waiter) publishes nothing and counts
	// the channel's subscribers (PUBSUB NUMSUB). It answers 0 when the key
	// was not ours, else 1 + the subscribers: the releaser learns whether
	// other clients wait (see handOff).
	releaseScript = &script{src: releaseSrc, sha: ReleaseSHA, bit: 1}
	// extendScript raises the expiry to at least the ttl only while the key
	// holds our token (never lowers it: the other holders of a handed-over
	// token keep what they were promised); it never creates the key, so an
	// expired lock cannot be re-acquired here.
	extendScript       = &script{src: extendSrc, sha: ExtendSHA, bit: 2}
	acquireTokenScript = &script{src: acquireTokenSrc, sha: AcquireTokenSHA, bit: 4}
	acquireFenceScript = &script{src: acquireFenceSrc, sha: AcquireFenceSHA, bit: 8}
	fenceScript        = &script{src: fenceSrc, sha: FenceSHA, bit: 16}
	inspectScript      = &script{src: inspectSrc, sha: InspectSHA, bit: 32}
)

// FenceKey is the key of the fence counter of the lock key: key + 0xFF +
// "fence". A 0xFF byte never occurs in UTF-8, so no resource's key can be
// another's counter.
func FenceKey(key string) string { return key + "\xfffence" }

// ReleasedChannel is the pub/sub channel on which a release of key is
// announced (the message is the release's random id).
func ReleasedChannel(key string) string { return releasedPrefix + key }

const releasedPrefix = "liblock:released:"
