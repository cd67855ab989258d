package core

import "github.com/liblock/liblock/core/engine"

// Counting semaphores: N permits per name. Acquire with Permits(n) takes
// one permit of the semaphore of n permits on a resource; the returned
// Lock is that permit, and works as a mutex's Lock does (Release, Extend,
// AutoExtend, Lost, Fence, WithToken). A semaphore's count is part of its
// identity: Permits(3) and Permits(5) on one name are two semaphores, and
// neither is the mutex of that name. See README.md, "Semaphore".

// MaxPermits is the most permits a semaphore may have.
const MaxPermits = engine.MaxPermits

// Permits makes Acquire take one permit of the counting semaphore of n
// permits on the resource instead of its mutex: at most n Locks of it are
// valid at any moment. n is 1 to MaxPermits; anything else (0 included)
// is an ArgumentError naming "permits", and nothing is sent.
func Permits(n int) AcquireOption {
	return func(o *acquireOptions) { o.Permits, o.PermitsSet = n, true }
}

// Permits returns the permit count of the semaphore the lock is a permit
// of, or 0 for a mutex.
func (l *Lock) Permits() int { return l.permits }

// Slot returns which of its semaphore's permits the lock holds (0 to
// Permits()-1); 0 for a mutex.
func (l *Lock) Slot() int { return l.slot }

// Holder is one held permit of a semaphore (Inspection.Holders): its slot,
// its holder's owner label, and how long it certainly stays held.
type Holder = engine.Holder

// InspectOption configures one Inspect call.
type InspectOption func(*inspectOptions)

type inspectOptions struct {
	permits    int
	permitsSet bool
	rw         bool // InspectReadWrite (rwlock.go)
}

// InspectPermits makes Inspect report on the semaphore of n permits on the
// resource: Inspection.Permits, InUse (permits held on a quorum) and
// Holders (each with its slot, owner and validity); Held, Validity and
// Owner are then the first holder's. n as for Permits.
func InspectPermits(n int) InspectOption {
	return func(o *inspectOptions) { o.permits, o.permitsSet = n, true }
}

// inspectRequest applies Inspect's options and checks them.
func inspectRequest(resource string, opts []InspectOption) (engine.InspectRequest, error) {
	var o inspectOptions
	for _, opt := range opts {
		if opt == nil {
			return engine.InspectRequest{}, invalidArg("opts", "nil InspectOption")
		}
		opt(&o)
	}
	req := engine.InspectRequest{Resource: resource, Permits: o.permits}
	if o.rw {
		req.Mode = engine.ModeWrite // either side names the read-write lock
		if o.permitsSet {
			return req, invalidArg("opts", "InspectPermits and InspectReadWrite name two different locks")
		}
	}
	if o.permitsSet {
		if err := engine.CheckPermits(o.permits); err != nil {
			return req, err
		}
	}
	return req, req.Validate()
}
