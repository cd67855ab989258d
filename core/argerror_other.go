//go:build !wasip1

package core

import "fmt"

// argError is invalidArg with a fmt-formatted reason, for the native-only
// go-redis transport (redis.go). The wasm module does not link this file:
// fmt and reflect would cost it ≈ 190 KB (wasm/README.md).
func argError(arg, format string, a ...any) error {
	return invalidArg(arg, fmt.Sprintf(format, a...))
}
