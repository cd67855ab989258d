package io.github.liblock;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Flow;

/**
 * One subscription of {@link LockClient#leaders}: a watch of the election whose leaders go to the
 * subscriber within its demand. The watch's thread and the threads calling request() both deliver;
 * one at a time (the emitting flag), so that the subscriber's signals never overlap (Flow's rule
 * 1.3). Without demand only the latest leader is kept: the watch never waits for a subscriber.
 */
final class LeaderSubscription implements Flow.Subscription {
    private final Flow.Subscriber<? super Leader> subscriber;
    private long demand;
    private Leader latest; // seen and not delivered yet
    private Throwable error; // the terminal signal to deliver: with ended, onError(error) or onComplete
    private boolean ended, cancelled, emitting;
    private AutoCloseable watch;

    private LeaderSubscription(Flow.Subscriber<? super Leader> s) {
        subscriber = s;
    }

    static void start(LockClient client, String name, Duration poll, Flow.Subscriber<? super Leader> s) {
        LeaderSubscription sub = new LeaderSubscription(Objects.requireNonNull(s, "subscriber"));
        s.onSubscribe(sub); // first, before any leader can come (rule 1.9)
        AutoCloseable w;
        try {
            w = client.watch(name, poll, r -> {
                if (r.status() == Spec.OK) sub.offer(Leader.of(Json.parse(r.text())));
                else if (r.status() == Spec.CANCELED) sub.end(null); // the client was closed
                else sub.end(Errors.failure(r.status(), r.err(), client.isClosed()));
            });
        } catch (RuntimeException e) {
            sub.end(e);
            return;
        }
        boolean stop;
        synchronized (sub) {
            sub.watch = w;
            stop = sub.cancelled;
        }
        if (stop) sub.stopWatch();
    }

    @Override
    public void request(long n) {
        synchronized (this) {
            if (cancelled) return;
            if (n <= 0) {
                ended = true; // rule 3.9
                error = new IllegalArgumentException("liblock: invalid argument: n: a request must be positive, got " + n);
            } else {
                demand = demand + n < 0 ? Long.MAX_VALUE : demand + n; // rule 3.17: Long.MAX_VALUE is unbounded
            }
        }
        drain();
    }

    @Override
    public void cancel() {
        synchronized (this) {
            if (cancelled) return;
            cancelled = true;
            latest = null;
        }
        stopWatch();
    }

    private void offer(Leader l) {
        synchronized (this) {
            if (cancelled) return;
            latest = l;
        }
        drain();
    }

    private void end(Throwable e) {
        synchronized (this) {
            if (cancelled || ended) return;
            ended = true;
            error = e;
        }
        drain();
    }

    /** Delivers what may be delivered, on this thread, unless another one is delivering (it will). */
    private void drain() {
        synchronized (this) {
            if (emitting) return;
            emitting = true;
        }
        for (;;) {
            Leader next = null;
            Throwable err = null;
            boolean terminal = false;
            synchronized (this) {
                if (cancelled) {
                    emitting = false;
                    return;
                }
                if (ended) { // a terminal signal needs no demand, and ends the subscription
                    terminal = true;
                    err = error;
                    cancelled = true;
                    latest = null;
                } else if (latest != null && demand > 0) {
                    next = latest;
                    latest = null;
                    if (demand != Long.MAX_VALUE) demand--;
                } else {
                    emitting = false;
                    return;
                }
            }
            if (terminal) {
                stopWatch();
                if (err == null) subscriber.onComplete();
                else subscriber.onError(err);
                synchronized (this) {
                    emitting = false;
                }
                return;
            }
            try {
                subscriber.onNext(next);
            } catch (RuntimeException e) { // a subscriber's bug (rule 2.13): this subscription ends
                cancel();
            }
        }
    }

    private void stopWatch() {
        AutoCloseable w;
        synchronized (this) {
            w = watch;
            watch = null;
        }
        if (w == null) return;
        try {
            w.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
