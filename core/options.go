package core

import "time"

// AcquireOption configures one Acquire call.
type AcquireOption func(*acquireOptions)

type acquireOptions struct {
	wait       time.Duration
	autoExtend bool
}

// Wait keeps retrying, with randomized backoff, for at most d while another
// owner holds the resource or too few nodes answer. Zero (the default) means
// a single attempt. A release by another Lock of the same Client wakes the
// waiters at once instead of at their next retry.
func Wait(d time.Duration) AcquireOption {
	return func(o *acquireOptions) { o.wait = d }
}

// AutoExtend extends the lock in the background, about every ttl/3, until it
// is released. If it can no longer be kept on a quorum before its validity
// ends, the lock is marked lost and Lock.Lost closes.
func AutoExtend() AcquireOption {
	return func(o *acquireOptions) { o.autoExtend = true }
}

func (o acquireOptions) validate() error {
	if o.wait < 0 || o.wait > MaxWait {
		return invalidArg("wait", "must be between 0 and "+MaxWait.String()+", got "+o.wait.String())
	}
	return nil
}

// AcquireSettings applies opts as Acquire does and returns what they select,
// or the same invalid-argument error Acquire would return ("opts" for a nil
// option, "wait" for one out of range). Backends that carry the options across
// a boundary (the wasm host) use it.
func AcquireSettings(opts ...AcquireOption) (wait time.Duration, autoExtend bool, err error) {
	var o acquireOptions
	for _, opt := range opts {
		if opt == nil {
			return 0, false, invalidArg("opts", "nil AcquireOption")
		}
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return 0, false, err
	}
	return o.wait, o.autoExtend, nil
}
