//go:build wasip1

package engine

// tokenSource: the module draws from the Env itself.
type tokenSource = struct{}

// tokenUUID makes a token's version-4 UUID from 16 bytes of the engine's
// random source, as google/uuid's NewRandomFromReader does (the native
// build calls it; TestTokenIsUUID holds the two to the same output).
func (e *Engine) tokenUUID(u *[16]byte) {
	e.env.Random(u[:])
	setV4(u)
}
