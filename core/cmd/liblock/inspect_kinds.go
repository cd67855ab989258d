package main

import (
	"fmt"
	"io"
	"time"

	"github.com/liblock/liblock/core"
)

// inspect --permits N and --rw: what a semaphore's or a read-write lock's
// inspection adds to the mutex's (permits in use and their holders; the
// writer and the readers). Tokens are never printed: a token is what
// release needs, and inspect is for looking.

// holderJSON is one held permit in `inspect --permits N --json`.
type holderJSON struct {
	Slot       int    `json:"slot"`
	Owner      string `json:"owner"`
	ValidityMS *int64 `json:"validity_ms"` // null: no expiry
}

// readerJSON is one reader in `inspect --rw --json`.
type readerJSON struct {
	Owner      string `json:"owner"`
	ValidityMS *int64 `json:"validity_ms"`
	Nodes      int    `json:"nodes"` // how many nodes hold it
}

// inspectOptions are the library's options for the kind asked.
func inspectOptions(k *kindOpts, rw bool) ([]core.InspectOption, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	switch {
	case k.permitsSet && rw:
		return nil, usagef("--permits and --rw name two different locks (a semaphore, a read-write lock): pick one")
	case k.permitsSet:
		return []core.InspectOption{core.InspectPermits(k.permits)}, nil
	case rw:
		return []core.InspectOption{core.InspectReadWrite()}, nil
	}
	return nil, nil
}

// addKindJSON fills the JSON line's semaphore or read-write fields.
func addKindJSON(out *inspectJSON, in *core.Inspection, k *kindOpts, rw bool) {
	switch {
	case k.permitsSet:
		out.Permits, out.InUse = in.Permits, &in.InUse
		out.Holders = []holderJSON{}
		for _, h := range in.Holders {
			out.Holders = append(out.Holders, holderJSON{Slot: h.Slot, Owner: h.Owner, ValidityMS: ms(h.Validity)})
		}
	case rw:
		out.Readers = []readerJSON{}
		for _, r := range in.Readers {
			out.Readers = append(out.Readers, readerJSON{Owner: r.Owner, ValidityMS: ms(r.Validity), Nodes: r.Nodes})
		}
	}
}

// kindHeader is the table's header for a semaphore or a read-write lock
// ("" for the mutex: inspect's own).
func kindHeader(k *kindOpts, rw bool) string {
	switch {
	case k.permitsSet:
		return "NAME\tPERMITS\tIN USE\tSLOT\tOWNER\tVALIDITY\t"
	case rw:
		return "NAME\tHOLDER\tOWNER\tVALIDITY\tNODES\t"
	}
	return ""
}

// kindRows prints a semaphore's held permits, or a read-write lock's
// writer and readers; ok is false for the mutex (inspect's own rows).
func kindRows(w io.Writer, name string, in *core.Inspection, k *kindOpts, rw bool) (ok bool) {
	switch {
	case k.permitsSet:
		first := fmt.Sprintf("%s\t%d\t%d", name, in.Permits, in.InUse)
		if len(in.Holders) == 0 {
			fmt.Fprintf(w, "%s\t-\t-\t-\t\n", first)
		}
		for i, h := range in.Holders {
			if i > 0 {
				first = "\t\t"
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t\n", first, h.Slot, dash(h.Owner), validityOf(h.Validity))
		}
		return true
	case rw:
		if in.Held {
			fmt.Fprintf(w, "%s\twriter\t%s\t%s\t-\t\n", name, dash(in.Owner), validity(in))
			name = ""
		}
		for _, r := range in.Readers {
			fmt.Fprintf(w, "%s\treader\t%s\t%s\t%d\t\n", name, dash(r.Owner), validityOf(r.Validity), r.Nodes)
			name = ""
		}
		if name != "" {
			fmt.Fprintf(w, "%s\tnone\t-\t-\t-\t\n", name)
		}
		return true
	}
	return false
}

func validityOf(d time.Duration) string {
	if d == core.NoExpiry {
		return "no expiry"
	}
	return d.Round(time.Millisecond).String()
}
