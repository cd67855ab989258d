package core

import "github.com/liblock/liblock/core/engine"

// LockMode is what an Acquire takes: the mutex (the default), or one side
// of the resource's read-write lock.
type LockMode = engine.LockMode

// The lock modes (Lock.Mode).
const (
	ModeExclusive = engine.ModeExclusive
	ModeRead      = engine.ModeRead
	ModeWrite     = engine.ModeWrite
)

// Read acquires a reader of resource's read-write lock: any number of
// readers hold it together, never with its writer. A read-write lock has
// keys of its own: it never meets the mutex of the same name. While a
// writer waits for the readers to leave, new readers are refused (the
// writer's intent, on the nodes it reached), so that a stream of readers
// cannot starve it. The reader's Lock behaves as a mutex's: validity,
// Extend, AutoExtend, Lost, Release, Fence. Its Key is the lock's writer
// key (the name's key + 0xFF + "rw:w"), which names the lock's keys on the
// nodes. Not with WithToken.
func Read() AcquireOption {
	return func(o *acquireOptions) { o.Mode = engine.ModeRead }
}

// Write acquires the writer of resource's read-write lock: held by no
// other writer and no reader. With Fence, its fence is greater than that
// of every reader and writer of the resource that held it before. Not
// with WithToken.
func Write() AcquireOption {
	return func(o *acquireOptions) { o.Mode = engine.ModeWrite }
}

// Mode returns what the lock holds: ModeExclusive (the mutex), ModeRead or
// ModeWrite.
func (l *Lock) Mode() LockMode { return l.mode }

// ReaderState is one reader of a read-write lock in an Inspection
// (Inspection.Readers): its token, owner label, and validity.
type ReaderState = engine.ReaderState

// InspectReadWrite makes Inspect report on the resource's read-write lock:
// its writer as Held, Owner and Validity, its readers as Readers.
func InspectReadWrite() InspectOption {
	return func(o *inspectOptions) { o.rw = true }
}
