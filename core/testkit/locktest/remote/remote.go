package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/internal/acquireopt"
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/stretchr/testify/require"
)

// Child is one running child process; its Factory makes clients in it.
type Child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser

	wmu sync.Mutex // one line at a time on stdin

	mu        sync.Mutex
	nextID    int64
	pending   map[int64]chan reply
	locks     map[int64]*lock     // by the child's lock id, for lost events
	observers map[int64]*observer // by the child's observer id
	lostEarly map[int64]bool      // locks reported lost before they were registered
	dead      error               // set once stdout ended
}

// Start starts argv as a child (its stderr goes to the test's stderr) and
// stops it when tb ends. Start it before locktest.Run: its reader goroutine
// then counts in every scenario's goroutine baseline, and the leak check
// measures this proxy's own goroutines (the child runs none of Go's).
func Start(tb testing.TB, name string, env []string, argv ...string) *Child {
	tb.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr // an *os.File: no copying goroutine
	stdin, err := cmd.StdinPipe()
	require.NoError(tb, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(tb, err)
	require.NoError(tb, cmd.Start(), name)
	c := &Child{name: name, cmd: cmd, stdin: stdin, pending: map[int64]chan reply{}, locks: map[int64]*lock{}, observers: map[int64]*observer{}, lostEarly: map[int64]bool{}}
	done := make(chan struct{})
	go c.read(stdout, done)
	tb.Cleanup(func() {
		_ = stdin.Close() // the child exits at the end of its input
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = cmd.Wait()
	})
	return c
}

type reply struct {
	raw map[string]json.RawMessage
	err error
}

func (c *Child) read(stdout io.Reader, done chan struct{}) {
	defer close(done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			fmt.Fprintf(os.Stderr, "%s: not a protocol line: %s\n", c.name, sc.Bytes())
			continue
		}
		if ev, ok := m["event"]; ok {
			var id int64
			_ = json.Unmarshal(m["lock"], &id)
			if string(ev) == `"leader"` || string(ev) == `"observed"` {
				c.observed(string(ev) == `"observed"`, m)
				continue
			}
			if string(ev) == `"lost"` {
				c.mu.Lock()
				l := c.locks[id]
				if l == nil {
					// Its acquire's answer is read, but the lock not yet
					// registered: register marks it.
					c.lostEarly[id] = true
				}
				c.mu.Unlock()
				if l != nil {
					l.markLost()
				}
			}
			continue
		}
		var id int64
		if err := json.Unmarshal(m["id"], &id); err != nil {
			fmt.Fprintf(os.Stderr, "%s: a line without id: %s\n", c.name, sc.Bytes())
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- reply{raw: m}
		}
	}
	err := fmt.Errorf("%s: the child's output ended (%v)", c.name, sc.Err())
	c.mu.Lock()
	c.dead = err
	for id, ch := range c.pending {
		ch <- reply{err: err}
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

// send writes req with a fresh id and returns the id and where its answer
// comes.
func (c *Child) send(req map[string]any) (int64, chan reply, error) {
	c.mu.Lock()
	if c.dead != nil {
		c.mu.Unlock()
		return 0, nil, c.dead
	}
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	req["id"] = id
	if err := c.write(req); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return 0, nil, err
	}
	return id, ch, nil
}

func (c *Child) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// call sends req and waits for its answer; when ctx ends first it sends a
// cancel line and still waits for the answer (CANCELED, or what came
// first), so that nothing of it is left behind.
func (c *Child) call(ctx context.Context, req map[string]any) (map[string]json.RawMessage, error) {
	id, ch, err := c.send(req)
	if err != nil {
		return nil, err
	}
	var r reply
	select {
	case r = <-ch:
	case <-ctx.Done():
		_ = c.write(map[string]any{"op": "cancel", "id": id})
		r = <-ch
	}
	if r.err != nil {
		return nil, r.err
	}
	if e, ok := r.raw["error"]; ok {
		return r.raw, decodeError(e)
	}
	return r.raw, nil
}

// wireError is the child's error record.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Arg     string `json:"arg"`
	Nodes   []struct {
		Node  int    `json:"node"`
		Addr  string `json:"addr"`
		Cause string `json:"cause"`
	} `json:"nodes"`
}

// childError is an error the child reported: its message, and the core
// sentinel of its code for errors.Is.
type childError struct {
	code, msg string
	kind      error
}

func (e *childError) Error() string { return e.msg + " [" + e.code + "]" }
func (e *childError) Unwrap() error { return e.kind }

// decodeError turns the child's error record into the error core would
// return: *core.ArgumentError, *core.UnavailableError (per-node causes), or
// an error wrapping ErrNotAcquired, ErrLost, ErrClosed, context.Canceled.
func decodeError(raw json.RawMessage) error {
	var w wireError
	if err := json.Unmarshal(raw, &w); err != nil {
		return fmt.Errorf("remote: undecodable error %s", raw)
	}
	switch w.Code {
	case "INVALID_ARGUMENT":
		return &core.ArgumentError{Arg: w.Arg, Reason: w.Message}
	case "UNAVAILABLE":
		ue := &core.UnavailableError{Op: "remote", Reason: w.Message}
		// "liblock: OP: unavailable: REASON; node 0 (...): ..." as the engine writes it
		if head, _, ok := strings.Cut(w.Message, "; node "); ok {
			if i := strings.Index(head, ": unavailable: "); i >= 0 {
				ue.Op = strings.TrimPrefix(head[:i], "liblock: ")
				ue.Reason = head[i+len(": unavailable: "):]
			}
		}
		for _, n := range w.Nodes {
			var cause error = errors.New(n.Cause)
			if n.Cause == core.ErrNoAnswer.Error() {
				cause = core.ErrNoAnswer
			}
			ue.Nodes = append(ue.Nodes, &core.NodeError{Node: n.Node, Addr: n.Addr, Err: cause})
		}
		return ue
	case "NOT_ACQUIRED":
		return &childError{w.Code, w.Message, core.ErrNotAcquired}
	case "LOST":
		return &childError{w.Code, w.Message, core.ErrLost}
	case "CLOSED":
		return &childError{w.Code, w.Message, core.ErrClosed}
	case "CANCELED":
		// The bindings end an acquire pending at close() with their
		// canceled class (their READMEs), saying why; core with ErrClosed.
		if strings.HasPrefix(w.Message, "liblock: the client is closed") {
			return &childError{w.Code, w.Message, core.ErrClosed}
		}
		return &childError{w.Code, w.Message, context.Canceled}
	}
	return &childError{w.Code, w.Message, nil}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func dur(raw json.RawMessage) time.Duration {
	var v *float64
	_ = json.Unmarshal(raw, &v)
	if v == nil {
		return core.NoExpiry
	}
	return time.Duration(math.Round(*v * float64(time.Millisecond)))
}

// Factory makes clients in the child: a locktest.Factory.
func (c *Child) Factory(_ testing.TB, cfg core.Config) (locktest.Client, error) {
	req := map[string]any{"op": "client", "nodes": cfg.Nodes, "keyPrefix": cfg.KeyPrefix, "owner": cfg.Owner}
	if cfg.Nodes == nil {
		req["nodes"] = []string{}
	}
	if cfg.NodeTimeout != 0 {
		req["nodeTimeout"] = ms(cfg.NodeTimeout)
	}
	if cfg.DriftFactor != nil {
		req["driftFactor"] = *cfg.DriftFactor
	}
	m, err := c.call(context.Background(), req)
	if err != nil {
		return nil, err
	}
	var id int64
	_ = json.Unmarshal(m["client"], &id)
	return &client{c: c, id: id}, nil
}

type client struct {
	c  *Child
	id int64
}

func (cl *client) Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (locktest.Lock, error) {
	return asLock(cl.acquire(ctx, map[string]any{"resource": resource}, ttl, opts))
}

// register keeps l for its lost events, marking it lost if one came first.
func (c *Child) register(l *lock) {
	c.mu.Lock()
	c.locks[l.id] = l
	early := c.lostEarly[l.id]
	delete(c.lostEarly, l.id)
	c.mu.Unlock()
	if early {
		l.markLost()
	}
}

// asLock keeps a failed acquire's nil a nil interface.
func asLock(l *lock, err error) (locktest.Lock, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}

// acquire sends an acquire of what (a resource, with its permits or mode,
// or resources) with opts.
func (cl *client) acquire(ctx context.Context, what map[string]any, ttl time.Duration, opts []core.AcquireOption) (*lock, error) {
	if ctx == nil {
		return nil, errors.New("remote: a nil context cannot be sent to a child")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o, err := acquireopt.Apply(acquireopt.Settings{}, opts) // a wait of 0 when none is given, as in Go
	if err != nil {
		return nil, err
	}
	req := map[string]any{"op": "acquire", "client": cl.id, "ttl": ms(ttl),
		"wait": ms(o.Wait), "autoExtend": o.AutoExtend, "fence": o.Fence, "token": o.Token}
	// The options that also choose a primitive travel too, so that a
	// child's binding meets them where they do not belong (a set given
	// permits or a mode): what says the primitive when it is one.
	if o.Permits != 0 {
		req["permits"] = o.Permits
	}
	if o.Mode != core.ModeExclusive {
		req["mode"] = o.Mode.String()
	}
	for k, v := range what {
		req[k] = v
	}
	m, err := cl.c.call(ctx, req)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return nil, ctx.Err() // the child canceled it for ctx: Canceled or DeadlineExceeded
		}
		return nil, err
	}
	l := &lock{c: cl.c, lost: make(chan struct{})}
	_ = json.Unmarshal(m["lock"], &l.id)
	_ = json.Unmarshal(m["key"], &l.key)
	_ = json.Unmarshal(m["token"], &l.token)
	_ = json.Unmarshal(m["fence"], &l.fence)
	_ = json.Unmarshal(m["reentered"], &l.reentered)
	_ = json.Unmarshal(m["slot"], &l.slot)
	l.ttl = dur(m["ttl"])
	cl.c.register(l)
	if ctx.Err() != nil { // acquired as ctx ended: as core, report ctx's error and leave nothing held
		_ = l.Release(context.Background())
		return nil, ctx.Err()
	}
	return l, nil
}

func (cl *client) Inspect(ctx context.Context, resource string) (*core.Inspection, error) {
	if ctx == nil {
		return nil, errors.New("remote: a nil context cannot be sent to a child")
	}
	return cl.inspect(ctx, map[string]any{"op": "inspect", "client": cl.id, "resource": resource})
}

func (cl *client) inspect(ctx context.Context, req map[string]any) (*core.Inspection, error) {
	m, err := cl.c.call(ctx, req)
	if err != nil {
		return nil, err
	}
	in := &core.Inspection{Validity: dur(m["validity"])}
	_ = json.Unmarshal(m["held"], &in.Held)
	_ = json.Unmarshal(m["owner"], &in.Owner)
	var nodes []struct {
		Node   int             `json:"node"`
		Addr   string          `json:"addr"`
		Locked bool            `json:"locked"`
		Holder bool            `json:"holder"`
		Owner  string          `json:"owner"`
		TTL    json.RawMessage `json:"ttl"`
		Error  *string         `json:"error"`
	}
	_ = json.Unmarshal(m["nodes"], &nodes)
	for _, n := range nodes {
		st := core.NodeState{Node: n.Node, Addr: n.Addr, Locked: n.Locked, Holder: n.Holder, Owner: n.Owner, TTL: dur(n.TTL)}
		if n.Error != nil {
			st.Err = errors.New(*n.Error)
		}
		in.Nodes = append(in.Nodes, st)
	}
	var holders []struct {
		Slot     int             `json:"slot"`
		Owner    string          `json:"owner"`
		Validity json.RawMessage `json:"validity"`
	}
	_ = json.Unmarshal(m["holders"], &holders)
	for _, h := range holders {
		in.Holders = append(in.Holders, core.Holder{Slot: h.Slot, Owner: h.Owner, Validity: dur(h.Validity)})
	}
	return in, nil
}

func (cl *client) Close() error {
	_, err := cl.c.call(context.Background(), map[string]any{"op": "close", "client": cl.id})
	return err
}

type lock struct {
	c          *Child
	id         int64
	key, token string
	fence      int64
	reentered  bool
	slot       int
	mu         sync.Mutex
	ttl        time.Duration
	lost       chan struct{}
	lostOnce   sync.Once
}

func (l *lock) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

func (l *lock) Extend(ctx context.Context, ttl time.Duration) error {
	if ctx == nil {
		return errors.New("remote: a nil context cannot be sent to a child")
	}
	_, err := l.c.call(ctx, map[string]any{"op": "extend", "lock": l.id, "ttl": ms(ttl)})
	if err == nil {
		l.mu.Lock()
		l.ttl = ttl
		l.mu.Unlock()
	}
	return err
}

func (l *lock) Release(ctx context.Context) error {
	if ctx == nil {
		return errors.New("remote: a nil context cannot be sent to a child")
	}
	_, err := l.c.call(ctx, map[string]any{"op": "release", "lock": l.id})
	return err
}

func (l *lock) Validity() time.Duration {
	m, err := l.c.call(context.Background(), map[string]any{"op": "validity", "lock": l.id})
	if err != nil {
		return 0
	}
	return dur(m["validity"])
}

func (l *lock) TTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

func (l *lock) Key() string           { return l.key }
func (l *lock) Token() string         { return l.token }
func (l *lock) Fence() int64          { return l.fence }
func (l *lock) Reentered() bool       { return l.reentered }
func (l *lock) Slot() int             { return l.slot }
func (l *lock) Lost() <-chan struct{} { return l.lost }
