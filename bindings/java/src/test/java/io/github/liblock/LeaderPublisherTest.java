package io.github.liblock;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** LockClient.leaders: the election as a Flow.Publisher, within the subscriber's demand. */
class LeaderPublisherTest {
    static RedisNodes nodes;
    LockClient a, b;

    @BeforeAll
    static void start() throws Exception {
        nodes = new RedisNodes(3);
    }

    @AfterAll
    static void stop() throws Exception {
        nodes.close();
    }

    @BeforeEach
    void clients() {
        a = nodes.client();
        b = nodes.client();
    }

    @AfterEach
    void closeAll() {
        a.close();
        b.close();
        RedisNodes.poll(5000, () -> nodes.lockKeys() == 0);
    }

    /** Records every signal, and whether one came beyond the demand or overlapped another. */
    static final class Recorder implements Flow.Subscriber<Leader> {
        final List<Leader> items = new ArrayList<>();
        Flow.Subscription sub;
        long requested;
        boolean overflow, overlap, inSignal, complete;
        Throwable error;
        final long initial;

        Recorder(long initial) {
            this.initial = initial;
        }

        private void enter() {
            synchronized (this) {
                if (inSignal) overlap = true;
                inSignal = true;
            }
        }

        private synchronized void leave() {
            inSignal = false;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            synchronized (this) {
                sub = s;
            }
            if (initial > 0) request(initial);
        }

        void request(long n) {
            synchronized (this) {
                requested += n;
            }
            sub.request(n);
        }

        @Override
        public void onNext(Leader l) {
            enter();
            synchronized (this) {
                items.add(l);
                if (items.size() > requested) overflow = true;
            }
            leave();
        }

        @Override
        public void onError(Throwable t) {
            enter();
            synchronized (this) {
                error = t;
            }
            leave();
        }

        @Override
        public void onComplete() {
            enter();
            synchronized (this) {
                complete = true;
            }
            leave();
        }

        synchronized int count() {
            return items.size();
        }

        synchronized Leader last() {
            return items.isEmpty() ? null : items.get(items.size() - 1);
        }
    }

    @Test
    void deliversWithinDemandThenTheLatest() throws Exception {
        long handles = Lib.lock_debug_handles();
        Recorder r = new Recorder(1);
        b.leaders("pub", Duration.ofMillis(100)).subscribe(r);
        RedisNodes.poll(10_000, () -> r.count() == 1);
        assertEquals(1, r.count());
        assertFalse(r.last().leader());
        // Three terms pass while the subscriber asks for nothing: none of them is delivered.
        long term = 0;
        for (int i = 0; i < 3; i++) {
            try (Lock lead = a.campaign("pub", "node-" + i, Duration.ofSeconds(5), Duration.ofSeconds(10))) {
                term = lead.fence();
            }
        }
        try (Lock lead = a.campaign("pub", "now", Duration.ofSeconds(5), Duration.ofSeconds(10))) {
            long now = lead.fence();
            assertTrue(now > term);
            // One at a time: each delivery is newer than the one before, and the current leader comes.
            for (int k = 0; k < 50 && !(r.last().leader() && r.last().term() == now); k++) {
                int before = r.count();
                r.request(1);
                RedisNodes.poll(10_000, () -> r.count() > before);
                assertEquals(before + 1, r.count(), "one request, one leader");
            }
            assertTrue(r.last().leader());
            assertEquals("now", r.last().value());
            assertEquals(now, r.last().term());
            synchronized (r) {
                long max = 0;
                for (Leader q : r.items) {
                    if (!q.leader()) continue;
                    assertTrue(q.term() > max, "each leader delivered is newer: " + r.items);
                    max = q.term();
                }
                assertFalse(r.overflow, "more leaders than requested: " + r.items);
                assertFalse(r.overlap, "signals overlapped");
            }
        }
        r.sub.cancel();
        r.sub.cancel(); // idempotent
        RedisNodes.poll(5000, () -> Lib.lock_debug_handles() == handles);
        assertEquals(handles, Lib.lock_debug_handles(), "the watch's handle is freed by cancel");
        int seen = r.count();
        r.request(5); // after cancel: a no-op
        try (Lock lead = a.campaign("pub", "after", Duration.ofSeconds(5), Duration.ofSeconds(10))) {
            assertEquals(seen, r.count());
        }
        assertNull(r.error);
        assertFalse(r.complete);
    }

    @Test
    void unboundedDemandSeesChangesAndCloseCompletes() throws Exception {
        Recorder r = new Recorder(Long.MAX_VALUE);
        b.leaders("pub2", null).subscribe(r);
        RedisNodes.poll(10_000, () -> r.count() == 1);
        r.request(Long.MAX_VALUE); // demand stays capped at Long.MAX_VALUE
        try (Lock lead = a.campaign("pub2", "x", Duration.ofSeconds(5), Duration.ofSeconds(10))) {
            RedisNodes.poll(10_000, () -> r.last().leader());
            assertEquals(lead.fence(), r.last().term());
        }
        b.close();
        RedisNodes.poll(10_000, () -> {
            synchronized (r) {
                return r.complete;
            }
        });
        synchronized (r) {
            assertTrue(r.complete, "closing the client completes the subscription");
            assertNull(r.error);
            assertFalse(r.overlap);
        }
    }

    @Test
    void badRequestAndBadArgumentsAreOnError() throws Exception {
        Recorder r = new Recorder(0);
        b.leaders("pub3", null).subscribe(r);
        r.sub.request(0);
        RedisNodes.poll(5000, () -> { // delivered here, or by the watch's thread if it is delivering
            synchronized (r) {
                return r.error != null;
            }
        });
        synchronized (r) {
            assertInstanceOf(IllegalArgumentException.class, r.error, "rule 3.9: request(0) is onError");
        }
        Recorder bad = new Recorder(1);
        b.leaders("", null).subscribe(bad);
        synchronized (bad) {
            InvalidArgumentException e = assertInstanceOf(InvalidArgumentException.class, bad.error);
            assertEquals("name", e.parameter());
        }
        Recorder poll = new Recorder(1);
        b.leaders("pub3", Duration.ofMillis(-1)).subscribe(poll);
        synchronized (poll) {
            assertInstanceOf(InvalidArgumentException.class, poll.error);
        }
        assertThrows(NullPointerException.class, () -> b.leaders("pub3", null).subscribe(null));
        b.close();
        Recorder closed = new Recorder(1);
        b.leaders("pub3", null).subscribe(closed);
        synchronized (closed) {
            assertInstanceOf(IllegalStateException.class, closed.error);
        }
    }

    @Test
    void cancelFromOnNextStopsTheWatch() throws Exception {
        long handles = Lib.lock_debug_handles();
        AtomicReference<Flow.Subscription> s = new AtomicReference<>();
        List<Leader> got = new ArrayList<>();
        b.leaders("pub4", null).subscribe(new Flow.Subscriber<Leader>() {
            public void onSubscribe(Flow.Subscription x) {
                s.set(x);
                x.request(Long.MAX_VALUE);
            }

            public void onNext(Leader l) {
                synchronized (got) {
                    got.add(l);
                }
                s.get().cancel();
            }

            public void onError(Throwable t) {}

            public void onComplete() {}
        });
        RedisNodes.poll(10_000, () -> Lib.lock_debug_handles() == handles);
        assertEquals(handles, Lib.lock_debug_handles());
        try (Lock lead = a.campaign("pub4", "x", Duration.ofSeconds(5), Duration.ofSeconds(10))) {
            assertTrue(lead.fence() > 0);
        }
        synchronized (got) {
            assertEquals(1, got.size());
        }
    }
}
