//go:build liblockwasm

package xerrors

// As is errors.As(err, target): it walks err's tree as errors.As does
// (depth first: err, then Unwrap() error, or each of Unwrap() []error), and
// sets *target to the first error that is a T (a type assertion: T's own
// type, or an interface T implements, which is what errors.As's
// AssignableTo admits for an error), or whose As(any) method, given target,
// answers true.
func As[T any](err error, target *T) bool {
	if err == nil {
		return false
	}
	if target == nil {
		panic("errors: target must be a non-nil pointer")
	}
	for err != nil {
		if t, ok := err.(T); ok {
			*target = t
			return true
		}
		if x, ok := err.(interface{ As(any) bool }); ok && x.As(target) {
			return true
		}
		switch x := err.(type) {
		case interface{ Unwrap() error }:
			err = x.Unwrap()
		case interface{ Unwrap() []error }:
			for _, err := range x.Unwrap() {
				if err != nil && As(err, target) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}
