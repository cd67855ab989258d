package engine

import "strconv"

// A node's answer counts only when it has the shape of its command's
// answer. Anything else (another service on the port, a proxy out of step,
// a stream cut and resumed, a script of another version) fails that node's
// request: a grant is never read into a reply that does not say so. Error
// and nil replies have their own meanings and pass.

// acquireShape returns why r cannot be the answer to the acquire command
// o sent (SET NX, or one of the acquire scripts), or "" when it can be.
// set is a semaphore's SET of its preferred slot.
func acquireShape(o *acquireOp, r Reply, set bool) string {
	if r.Err != nil || r.Nil {
		return ""
	}
	switch {
	case set || (o.permits == 0 && o.mode == ModeExclusive && o.keys == nil && o.token == "" && !o.fence):
		if r.Kind == '+' && r.Str == "OK" {
			return ""
		}
		return "SET answered " + describeReply(r) + ", not OK"
	case o.permits > 0:
		// The semaphore's script: [slot, reentered, fence, free slots...].
		if r.Kind != '*' {
			return "a semaphore acquire answered " + describeReply(r) + ", not an array"
		}
		for i := range min(len(r.Elems), 3) {
			if r.Elems[i].Kind != ':' {
				return "a semaphore acquire answered an array holding " + describeReply(r.Elems[i])
			}
		}
		return ""
	}
	if r.Kind != ':' {
		return "an acquire script answered " + describeReply(r) + ", not an integer"
	}
	return ""
}

// misshapen is r as the failure of its node when it does not have the
// shape why describes.
func misshapen(why string) Reply {
	return Reply{Err: protocolError(why)}
}

// describeReply names a reply's type for a message, with a short prefix
// of its text.
func describeReply(r Reply) string {
	switch r.Kind {
	case '+':
		return "the status " + strconv.Quote(cutText(r.Str, 32))
	case ':':
		return "the integer " + strconv.FormatInt(r.Int, 10)
	case '$':
		return "the bulk string " + strconv.Quote(cutText(r.Str, 32))
	case '*':
		return "an array of " + strconv.Itoa(len(r.Elems))
	}
	return "a reply of type " + strconv.Quote(string(rune(r.Kind)))
}

func cutText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
