package hostabi

import (
	"errors"
	"strconv"

	"github.com/liblock/liblock/core/engine"
)

// parseResources parses the options key "resources" of a multi-resource
// lock: a non-empty array of strings, the set's resources after the
// resource argument. Errors name an element by its index in the whole set,
// as the engine's do (engine.CheckResources): the resource argument is
// resources[0], so the array's first element is resources[1].
func parseResources(v jvalue) ([]string, error) {
	if v.kind != jArray {
		return nil, argErr("resources", "must be an array of resource names (the resources after the resource argument)")
	}
	if len(v.arr) == 0 {
		return nil, argErr("resources", "must name at least one more resource (leave the key out for a one-resource lock)")
	}
	if len(v.arr)+1 > engine.MaxResources {
		return nil, argErr("resources", "at most "+strconv.Itoa(engine.MaxResources)+" resources in one lock, got "+strconv.Itoa(len(v.arr)+1))
	}
	out := make([]string, len(v.arr))
	for i, e := range v.arr {
		if e.kind != jString {
			return nil, argErr("resources["+strconv.Itoa(i+1)+"]", "must be a string")
		}
		out[i] = e.s
	}
	return out, nil
}

// The Adapter's memory of multi-resource locks: the host protocol's INFO
// does not carry a lock's set, so the Adapter keeps the set of each
// multi-resource acquire it started, keyed by its op and then by its lock
// (kept apart: see setKey).

// setKey files a set: ops and locks apart (an op and a lock may share a
// number).
func setKey(id uint64, lock bool) uint64 {
	if lock {
		return id | 1<<63
	}
	return id
}

func (a *Adapter) noteSet(op engine.OpID, r engine.AcquireRequest) {
	if a.sets == nil {
		a.sets = map[uint64][]string{}
	}
	a.sets[setKey(uint64(op), false)] = append([]string{r.Resource}, r.Resources...)
}

// noteRelease remembers a release of a multi-resource lock: once it has
// ended the lock (released, or found lost), its set is dropped. The op's
// entry holds the lock's id (a set of one element never needs it).
func (a *Adapter) noteRelease(op engine.OpID, l engine.LockID) {
	if _, ok := a.sets[setKey(uint64(l), true)]; ok {
		a.sets[setKey(uint64(op), false)] = []string{"", strconv.FormatUint(uint64(l), 10)}
	}
}

// setDone moves a finished acquire's set to its lock (or drops it), and
// drops the set of a lock a release ended.
func (a *Adapter) setDone(act *Action) {
	k := setKey(uint64(act.Op), false)
	set, ok := a.sets[k]
	if !ok {
		return
	}
	delete(a.sets, k)
	if len(set) == 2 && set[0] == "" { // a release (noteRelease)
		if act.Err == nil || errors.Is(act.Err, engine.ErrLost) {
			l, _ := strconv.ParseUint(set[1], 10, 64)
			a.forgetSet(engine.LockID(l))
		}
		return
	}
	if act.Lock != 0 {
		a.sets[setKey(uint64(act.Lock), true)] = set
	}
}

// setInfo adds the lock's set to its info.
func (a *Adapter) setInfo(l engine.LockID, info *engine.LockInfo) {
	if set, ok := a.sets[setKey(uint64(l), true)]; ok {
		info.Resources = append([]string(nil), set...)
	}
}

func (a *Adapter) forgetSet(l engine.LockID) { delete(a.sets, setKey(uint64(l), true)) }
