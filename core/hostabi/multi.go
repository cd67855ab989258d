package hostabi

import (
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
