package acquireopt

import (
	"time"

	"github.com/liblock/liblock/core/engine"
)

// Settings are the values a list of options sets, unchecked.
type Settings struct {
	Wait       time.Duration
	AutoExtend bool
	Token      string
	Fence      bool
	Permits    int             // a semaphore's permit count, 0 for the mutex
	PermitsSet bool            // Permits was given: 0 is then refused, not the mutex
	Mode       engine.LockMode // Read, Write
}

// Apply applies opts in order over defaults (the host's, with what was
// not given), without checking the values: a nil option is refused (an
// ArgumentError for "opts"), as Acquire refuses it.
func Apply[Option ~func(*Settings)](defaults Settings, opts []Option) (Settings, error) {
	s := defaults
	for _, opt := range opts {
		if opt == nil {
			return Settings{}, engine.InvalidArg("opts", "nil AcquireOption")
		}
		opt(&s)
	}
	return s, nil
}
