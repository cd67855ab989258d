package engine

import "unsafe"

// newToken returns a lock token for an attempt: a version-4 UUID (122
// random bits from the engine's random source; natively drawn by
// google/uuid, see tokenUUID) in google/uuid's text form (TestTokenIsUUID
// checks the formatting byte for byte), after the engine's owner label and
// a '/' when it has one. The text is written into the string arena: one
// allocation per many tokens.
func (e *Engine) newToken() string {
	u := &e.rand
	e.tokenUUID(u)
	n := 36
	if e.owner != "" {
		n += len(e.owner) + len("/")
	}
	b := e.strs.alloc(n)
	j := 0
	if e.owner != "" {
		j = copy(b, e.owner)
		b[j] = '/'
		j++
	}
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexDigits[c>>4], hexDigits[c&0xf]
		j += 2
	}
	return str(b)
}

const hexDigits = "0123456789abcdef"

// setV4 makes 16 random bytes a version-4, variant-10 UUID, as
// google/uuid does (liblock.wasm's tokenUUID; TestTokenIsUUID).
func setV4(u *[16]byte) {
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10
}

// strArena makes the engine's own short strings (tokens, release ids) with
// one allocation for many of them, where a string each cost one: in
// liblock.wasm an allocation costs far more than the bytes it takes. Each
// string is written once into a part of a shared array that alloc never
// hands out again, and nothing writes it after str made it a string, so
// it is as immutable as any other. Any one of them keeps its whole array
// (arenaChunk bytes) alive.
type strArena struct {
	free []byte // the current array's part not yet handed out
}

const arenaChunk = 512

// alloc returns n bytes that no string refers to and alloc never returns
// again.
func (a *strArena) alloc(n int) []byte {
	if n > len(a.free) {
		if n > arenaChunk/4 {
			return make([]byte, n)
		}
		a.free = make([]byte, arenaChunk)
	}
	b := a.free[:n:n]
	a.free = a.free[n:]
	return b
}

// str returns b as a string without copying it: b must come from alloc,
// and be written no more.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
