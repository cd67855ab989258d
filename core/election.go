package core

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/ownthread"
)

// Leader election, the shape of etcd's
// concurrency.Election and client-go's leader election, built in the
// engine: Campaign waits until this client leads the election and returns
// its Leadership (a term that is its fencing token, kept by auto-extension,
// with a loss signal); Leader reads who leads; Observe streams every change.
// Safety: a leadership is a Redlock lock on the election's own key (the
// name + 0xFF + "elect", which no lock's key can be), so two leaders at one
// instant would need two quorums holding that key at once; terms come from
// the fence counters, so a leader's term is greater than every earlier
// leader's (README, "Leader election").

// DefaultCampaignTTL is a campaign's lease when CampaignTTL does not set
// one: a leader that dies is replaced about this long after its last
// extension (client-go's default lease is 15 s, etcd's session 60 s; 10 s
// keeps failover short while an extension every ~3 s costs little).
const DefaultCampaignTTL = engine.DefaultCampaignTTL

// MaxElectionValue is the longest value a campaign may publish, in bytes.
const MaxElectionValue = engine.MaxElectionValue

// ErrNoLeader: the election has no valid leader (Client.Leader).
var ErrNoLeader = errors.New("liblock: the election has no leader")

// CampaignOption configures one Campaign.
type CampaignOption func(*campaignOptions)

type campaignOptions struct {
	ttl     time.Duration
	wait    time.Duration
	hasWait bool
}

// CampaignTTL sets the leadership's lease (default DefaultCampaignTTL): it
// is extended about every ttl/3 while held, and a leader that stops
// extending (its process died) is replaced once it runs out.
func CampaignTTL(d time.Duration) CampaignOption {
	return func(o *campaignOptions) { o.ttl = d }
}

// CampaignWait bounds how long Campaign waits to lead (0: one attempt, as
// Acquire without Wait; ErrNotAcquired when another leads). Without it,
// Campaign waits until ctx ends.
func CampaignWait(d time.Duration) CampaignOption {
	return func(o *campaignOptions) { o.wait, o.hasWait = d, true }
}

// Leadership is this client's leadership of an election, from Campaign.
type Leadership struct {
	name, value string
	l           *Lock
}

// Name returns the election's name.
func (ld *Leadership) Name() string { return ld.name }

// Value returns the value this leader published.
func (ld *Leadership) Value() string { return ld.value }

// Term returns the leadership's term: its fencing token, strictly greater
// than the term of every earlier leader of the election, with the
// guarantee and the size of a fence (see Fence: about 1.8e15, increasing
// across nodes that restart empty after the longest ttl). Pass it to what
// the leader writes to, which refuses a smaller term than it has seen.
func (ld *Leadership) Term() int64 { return ld.l.Fence() }

// Validity returns how long this client certainly still leads, by the
// local clock; 0 once lost or resigned.
func (ld *Leadership) Validity() time.Duration { return ld.l.Validity() }

// Lost returns a channel closed when the leadership is lost (its lease
// could not be extended on a quorum in time); never after Resign.
func (ld *Leadership) Lost() <-chan struct{} { return ld.l.Lost() }

// Err returns why the leadership was lost (errors.Is(err, ErrLost)), or nil.
func (ld *Leadership) Err() error { return ld.l.Err() }

// Resign ends the leadership: the election key is deleted where this
// leadership holds it and observers are told at once. Like Lock.Release,
// it runs even when ctx is already canceled.
func (ld *Leadership) Resign(ctx context.Context) error { return ld.l.Release(ctx) }

// Lock returns the lock behind the leadership (its key is the election's).
func (ld *Leadership) Lock() *Lock { return ld.l }

// Leader is an election's leader as Leader and Observe report it. In
// Observe's stream a Leader with Term 0 means "no leader now".
type Leader struct {
	Name  string
	Value string
	Term  int64
	// Owner is the leader's client label (Config.Owner), if it set one.
	Owner string
	// Validity is how long the leader certainly keeps leading unless it
	// resigns, as seen when the election was read.
	Validity time.Duration
}

// electionEngine is what an Engine needs for elections: *engine.Engine and
// hostabi's Adapter have it.
type electionEngine interface {
	InspectWith(engine.InspectRequest) (engine.OpID, error)
	Watch(engine.WatchRequest) (engine.OpID, error)
	Unwatch(engine.OpID) bool
}

func (c *Client) elections() (electionEngine, error) {
	ee, ok := c.eng.(electionEngine)
	if !ok {
		return nil, invalidArg("engine", "this engine does not implement leader election")
	}
	return ee, nil
}

// Campaign waits until this client leads the election name, publishing
// value to observers, and returns the leadership. It waits until ctx ends
// (or for CampaignWait), and returns ctx's error (wrapped) when ctx ended
// first, ErrNotAcquired when the wait ran out with another leader, and
// ErrUnavailable when too many nodes failed. No key is left behind when it
// fails. The leadership is extended in the background until Resign; Lost
// says when it could not be.
func (c *Client) Campaign(ctx context.Context, name, value string, opts ...CampaignOption) (*Leadership, error) {
	if ctx == nil {
		return nil, invalidArg("ctx", "must not be nil")
	}
	o := campaignOptions{ttl: DefaultCampaignTTL}
	for _, opt := range opts {
		if opt == nil {
			return nil, invalidArg("opts", "must not contain nil")
		}
		opt(&o)
	}
	if _, err := c.elections(); err != nil {
		return nil, err
	}
	req := engine.AcquireRequest{Resource: name, TTL: o.ttl, Election: true, Value: value, Fence: true, AutoExtend: true, Wait: engine.MaxWait}
	if o.hasWait {
		req.Wait = o.wait
	}
	label := "campaign " + strconv.Quote(name)
	for {
		l, err := c.acquire(ctx, req, label)
		if err == nil {
			return &Leadership{name: name, value: value, l: l}, nil
		}
		// Unbounded: a wait budget that ran out (the engine's longest)
		// starts over while ctx lasts.
		if o.hasWait || ctx.Err() != nil || !(errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrUnavailable)) {
			return nil, err
		}
	}
}

// Leader reads the election name's leader: its value, term and how long it
// certainly stays valid. ErrNoLeader when none is valid on a quorum;
// ErrUnavailable when too many nodes failed to tell.
func (c *Client) Leader(ctx context.Context, name string) (*Leader, error) {
	if ctx == nil {
		return nil, invalidArg("ctx", "must not be nil")
	}
	ee, err := c.elections()
	if err != nil {
		return nil, err
	}
	if err := engine.CheckElectionName(name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, wrap("liblock: leader "+strconv.Quote(name), err)
	}
	_, ch, in, err := c.start(true, ownthread.Is(ctx), func() (engine.OpID, error) {
		return ee.InspectWith(engine.InspectRequest{Resource: name, Election: true})
	})
	if err != nil {
		return nil, err
	}
	r, ok := c.outcome(in, ch, ctx.Done(), ownthread.Is(ctx))
	if !ok {
		return nil, wrap("liblock: leader "+strconv.Quote(name), ctx.Err())
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.inspection == nil || !r.inspection.Held {
		return nil, ErrNoLeader
	}
	ld := leaderOf(name, r.inspection)
	return &ld, nil
}

func leaderOf(name string, in *engine.Inspection) Leader {
	if in == nil || !in.Held {
		return Leader{Name: name}
	}
	return Leader{Name: name, Value: in.Value, Term: in.Term, Owner: in.Owner, Validity: in.Validity}
}

// ObserveOption configures one Observe.
type ObserveOption func(*observeOptions)

type observeOptions struct{ poll time.Duration }

// ObservePoll sets how often the election is read when pub/sub announces
// nothing and no leader's validity ends sooner (default 1 s): the bound on
// how late a change pub/sub missed is seen.
func ObservePoll(d time.Duration) ObserveOption {
	return func(o *observeOptions) { o.poll = d }
}

// observer is one Observe: the engine's LEADER actions, queued under c.mu
// (never blocking the driver) and handed to the caller's channel in order
// by the observer's goroutine.
type observer struct {
	name  string
	mu    sync.Mutex
	queue []Leader
	ended bool
	wake  chan struct{} // 1-buffered: something was queued
	done  chan struct{} // closed when the watch ended (Close)
}

func (w *observer) push(l Leader, end bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	if end {
		w.ended = true
		close(w.done)
		return
	}
	w.queue = append(w.queue, l)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Observe streams the leader changes of the election name: first the
// current leader (a Leader with Term 0 when there is none), then each
// change once, in order — a new term, a resignation or a loss (Term 0) —
// pushed by pub/sub, with polling as the fallback, so a change pub/sub
// missed is still seen (within ObservePoll, or when the leader's validity
// ends). The channel is closed when ctx ends or the Client closes. A
// reader that falls behind misses nothing: the changes queue.
func (c *Client) Observe(ctx context.Context, name string, opts ...ObserveOption) (<-chan Leader, error) {
	if ctx == nil {
		return nil, invalidArg("ctx", "must not be nil")
	}
	ee, err := c.elections()
	if err != nil {
		return nil, err
	}
	var o observeOptions
	for _, opt := range opts {
		if opt == nil {
			return nil, invalidArg("opts", "must not contain nil")
		}
		opt(&o)
	}
	req := engine.WatchRequest{Name: name, Poll: o.poll}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, wrap("liblock: observe "+strconv.Quote(name), err)
	}
	w := &observer{name: name, wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	op, err := ee.Watch(req)
	if err == nil {
		if c.observers == nil {
			c.observers = map[engine.OpID]*observer{}
		}
		c.observers[op] = w
	}
	c.carryOut()
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := make(chan Leader)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer close(out)
		stop := ctx.Done()
		for {
			w.mu.Lock()
			q := w.queue
			w.queue = nil
			w.mu.Unlock()
			for _, l := range q {
				select {
				case out <- l:
				case <-stop:
					c.unwatch(op)
					return
				case <-w.done: // the Client closed
					return
				}
			}
			if len(q) > 0 {
				continue
			}
			select {
			case <-w.wake:
			case <-stop:
				c.unwatch(op)
				return
			case <-w.done:
				return
			}
		}
	}()
	return out, nil
}

func (c *Client) unwatch(op engine.OpID) {
	c.guard(func() {
		delete(c.observers, op)
		if ee, ok := c.eng.(electionEngine); ok && !c.closing {
			ee.Unwatch(op)
		}
	})
}

// observed carries a watch's action to its observer; c.mu is held. It
// reports whether the action was a watch's.
func (c *Client) observed(a engine.Action) bool {
	w := c.observers[a.Op]
	if w == nil {
		return false
	}
	if a.Kind == engine.ActLeader {
		w.push(leaderOf(w.name, a.Inspection), false)
		return true
	}
	// Its DONE: Unwatch or Close ended it.
	delete(c.observers, a.Op)
	w.push(Leader{}, true)
	return true
}
