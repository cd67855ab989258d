package io.github.liblock;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class LockClientTest {
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

    @org.junit.jupiter.api.BeforeEach
    void clients() {
        a = nodes.client();
        b = nodes.client();
    }

    @AfterEach
    void closeAll() {
        a.close();
        b.close();
        RedisNodes.poll(5000, () -> nodes.lockKeys() == 0); // nothing left behind by any test
    }

    @Test
    void acquireExcludesAndTryWithResourcesReleases() throws Exception {
        try (Lock l = a.acquire("orders:1", Duration.ofSeconds(10))) {
            assertEquals("orders:1", l.key());
            assertTrue(l.token().length() >= 16);
            assertTrue(l.validity().compareTo(Duration.ZERO) > 0);
            assertEquals(Optional.empty(), b.tryAcquire("orders:1", Duration.ofSeconds(1)));
            NotAcquiredException e = assertThrows(NotAcquiredException.class,
                    () -> b.acquire("orders:1", Duration.ofSeconds(1), AcquireOptions.defaults().waitFor(Duration.ZERO)));
            assertTrue(e.getMessage().startsWith("liblock: "), e.getMessage());
            assertTrue(b.inspect("orders:1").held());
        }
        assertFalse(b.inspect("orders:1").held());
        try (Lock l = b.tryAcquire("orders:1", Duration.ofSeconds(1)).orElseThrow()) {
            l.extend(Duration.ofSeconds(5));
        }
    }

    @Test
    void releaseTwiceAndCloseAfterLossSayLost() throws Exception {
        Lock l = a.acquire("r", Duration.ofSeconds(10));
        l.release();
        assertThrows(LockLostException.class, l::release);
        assertThrows(LockLostException.class, () -> l.extend(Duration.ofSeconds(1)));
        l.close(); // already released: nothing to say
        IllegalStateException closed = assertThrows(IllegalStateException.class, l::release);
        assertTrue(closed.getMessage().contains("the lock is closed"), closed.getMessage());
        Lock m = a.acquire("r2", Duration.ofSeconds(10));
        for (int i = 0; i < 3; i++) nodes.cli(i, "SET", "r2", "someone-else");
        assertThrows(LockLostException.class, m::close);
        for (int i = 0; i < 3; i++) assertEquals("someone-else", nodes.cli(i, "GET", "r2"));
        for (int i = 0; i < 3; i++) nodes.cli(i, "DEL", "r2");
    }

    @Test
    void ttlTooShortForTheRoundTripSaysSo() {
        // 2 ms less its clock-drift allowance (2 ms and 1 %) leaves no validity, however fast the
        // nodes: no ttl is refused for its length, the grant's validity decides, and the error says why.
        UnavailableException e = assertThrows(UnavailableException.class,
                () -> a.acquire("short", Duration.ofMillis(2), AcquireOptions.defaults().waitFor(Duration.ZERO)));
        assertTrue(e.getMessage().contains("too slowly for the ttl: ") && e.getMessage().contains("a 2ms ttl")
                && e.getMessage().contains("node timeout ("), e.getMessage());
    }

    @Test
    void waitWinsAfterRelease() throws Exception {
        Lock l = a.acquire("w", Duration.ofSeconds(10));
        CompletableFuture<Lock> f = b.acquireAsync("w", Duration.ofSeconds(10), AcquireOptions.defaults().waitFor(Duration.ofMinutes(1)));
        assertFalse(f.isDone());
        l.close();
        try (Lock got = f.get(30, TimeUnit.SECONDS)) {
            assertEquals("w", got.resource());
        }
    }

    @Test
    void badArgumentsNameTheParameter() {
        record Case(String param, org.junit.jupiter.api.function.Executable call) {}
        List<Case> cases = List.of(
                new Case("ttl", () -> a.acquire("r", Duration.ZERO)),
                new Case("ttl", () -> a.acquire("r", Duration.ofNanos(1000))),
                new Case("ttl", () -> a.acquire("r", Duration.ofDays(365))),
                new Case("ttl", () -> a.acquire("r", null)),
                new Case("resource", () -> a.acquire("", Duration.ofSeconds(1))),
                new Case("resource", () -> a.acquire(null, Duration.ofSeconds(1))),
                new Case("wait", () -> a.acquire("r", Duration.ofSeconds(1), AcquireOptions.defaults().waitFor(Duration.ofMillis(-1)))),
                new Case("token", () -> a.acquire("r", Duration.ofSeconds(1), AcquireOptions.defaults().token("short"))),
                new Case("permits", () -> a.acquire("r", Duration.ofSeconds(1), AcquireOptions.defaults().permits(0))),
                new Case("resources[2]", () -> a.acquire("r", Duration.ofSeconds(1), AcquireOptions.defaults().resources("s", "s"))),
                new Case("nodeTimeout", () -> LockClient.builder().nodes(nodes.urls()).nodeTimeout(Duration.ofHours(2)).build()),
                new Case("nodes", () -> LockClient.builder().build()),
                new Case("nodes[0]", () -> LockClient.builder().nodes("127.0.0.1:6379").build()),
                new Case("driftFactor", () -> LockClient.builder().nodes(nodes.urls()).driftFactor(0.5).build()),
                new Case("owner", () -> LockClient.builder().nodes(nodes.urls()).owner("a/b").build()));
        for (Case c : cases) {
            InvalidArgumentException e = assertThrows(InvalidArgumentException.class, c.call, c.param);
            assertEquals(c.param, e.parameter(), e.getMessage());
            assertTrue(e.getMessage().contains(c.param + ":"), e.getMessage());
        }
        assertEquals(0, nodes.keys());
    }

    @Test
    void closedClient() throws Exception {
        LockClient c = nodes.client();
        Lock held = c.acquire("c1", Duration.ofSeconds(10), AcquireOptions.defaults().autoExtend());
        Lock other = b.acquire("c2", Duration.ofSeconds(10));
        CompletableFuture<Lock> waiting = c.acquireAsync("c2", Duration.ofSeconds(1), AcquireOptions.defaults().waitFor(Duration.ofMinutes(1)));
        AtomicReference<Throwable> blocked = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                c.acquire("c2", Duration.ofSeconds(1), AcquireOptions.defaults().waitFor(Duration.ofMinutes(1)));
            } catch (Throwable e) {
                blocked.set(e);
            }
        });
        t.start();
        RedisNodes.poll(10_000, () -> t.getState() == Thread.State.WAITING); // parked on its pending acquire
        c.close();
        t.join();
        assertTrue(blocked.get() instanceof IllegalStateException, String.valueOf(blocked.get()));
        ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IllegalStateException, e.getCause().toString());
        assertThrows(IllegalStateException.class, held::release);
        assertThrows(IllegalStateException.class, () -> c.acquire("c3", Duration.ofSeconds(1)));
        c.close();
        held.close();
        assertFalse(a.inspect("c1").held());
        other.close();
    }

    @Test
    void interruptedAcquireReturnsPromptlyAndLeavesNoKey() throws Exception {
        Lock l = a.acquire("i", Duration.ofSeconds(30));
        AtomicReference<Throwable> got = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                b.acquire("i", Duration.ofSeconds(10), AcquireOptions.defaults().waitFor(Duration.ofMinutes(5)));
            } catch (Throwable e) {
                got.set(e);
            }
        });
        t.start();
        RedisNodes.poll(10_000, () -> Lib.lock_debug_handles() > 0 && t.getState() == Thread.State.WAITING);
        t.interrupt();
        t.join(30_000); // a deadline for the failure only
        assertFalse(t.isAlive(), "an interrupted acquire kept waiting");
        assertTrue(got.get() instanceof InterruptedException, String.valueOf(got.get()));
        l.close();
        assertEquals(0, nodes.lockKeys(), "the interrupted acquire left a key");
        // An interrupt before the call: it does not start.
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> b.acquire("i", Duration.ofSeconds(1)));
    }

    @Test
    void canceledFutureLeavesNoKey() throws Exception {
        Lock l = a.acquire("f", Duration.ofSeconds(30));
        CompletableFuture<Lock> f = b.acquireAsync("f", Duration.ofSeconds(10), AcquireOptions.defaults().waitFor(Duration.ofMinutes(5)));
        assertTrue(f.cancel(true));
        l.close();
        // The library ends the canceled attempt; then the resource is free.
        RedisNodes.poll(10_000, () -> {
            try {
                a.tryAcquire("f", Duration.ofSeconds(1)).orElseThrow().close();
                return true;
            } catch (Exception e) {
                return false;
            }
        });
    }

    @Test
    void lossIsReportedToListenerAndFuture() throws Exception {
        Lock l = a.acquire("lost", Duration.ofSeconds(3), AcquireOptions.defaults().autoExtend());
        CountDownLatch told = new CountDownLatch(1);
        l.onLost(x -> told.countDown());
        for (int i = 0; i < 3; i++) nodes.cli(i, "SET", "lost", "intruder");
        assertSame(l, l.lost().get(30, TimeUnit.SECONDS));
        assertTrue(told.await(30, TimeUnit.SECONDS));
        assertTrue(l.isLost());
        assertThrows(LockLostException.class, l::close);
        for (int i = 0; i < 3; i++) nodes.cli(i, "DEL", "lost");
    }

    @Test
    void unavailableNamesEachNode() throws Exception {
        LockClient c = LockClient.builder().nodes("redis://127.0.0.1:1", "redis://127.0.0.1:2", nodes.urls().get(0)).nodeTimeout(Duration.ofMillis(200)).build();
        try {
            UnavailableException e = assertThrows(UnavailableException.class, () -> c.acquire("u", Duration.ofSeconds(1)));
            assertEquals(2, e.nodes().size(), e.getMessage());
            assertEquals(0, e.nodes().get(0).node());
            assertEquals("127.0.0.1:1", e.nodes().get(0).addr());
            assertFalse(e.nodes().get(0).cause().isEmpty());
        } finally {
            c.close();
        }
    }

    @Test
    void reentryByTokenFencesSemaphoreRwMulti() throws Exception {
        try (Lock l = a.acquire("t", Duration.ofSeconds(10), AcquireOptions.defaults().fence())) {
            assertTrue(l.fence() >= 1);
            try (Lock again = b.acquire("t", Duration.ofSeconds(10), AcquireOptions.defaults().token(l.token()))) {
                assertTrue(again.reentered());
                again.release();
                assertThrows(LockLostException.class, l::release);
            }
        }
        // A semaphore of 2: two holders, the third refused.
        AcquireOptions sem = AcquireOptions.defaults().permits(2).waitFor(Duration.ZERO);
        try (Lock p1 = a.acquire("s", Duration.ofSeconds(10), sem); Lock p2 = b.acquire("s", Duration.ofSeconds(10), sem)) {
            assertThrows(NotAcquiredException.class, () -> a.acquire("s", Duration.ofSeconds(10), sem));
            assertEquals(2L, a.inspect("s", sem).json().get("in_use"));
        }
        // Readers together, the writer alone.
        AcquireOptions read = AcquireOptions.defaults().mode(AcquireOptions.Mode.READ).waitFor(Duration.ZERO);
        AcquireOptions write = AcquireOptions.defaults().mode(AcquireOptions.Mode.WRITE).waitFor(Duration.ZERO);
        try (Lock r1 = a.acquire("rw", Duration.ofSeconds(10), read); Lock r2 = b.acquire("rw", Duration.ofSeconds(10), read)) {
            assertThrows(NotAcquiredException.class, () -> a.acquire("rw", Duration.ofSeconds(10), write));
        }
        try (Lock w = a.acquire("rw", Duration.ofSeconds(10), write)) {
            assertThrows(NotAcquiredException.class, () -> b.acquire("rw", Duration.ofSeconds(10), read));
        }
        // A set, all or none.
        try (Lock set = a.acquire("m1", Duration.ofSeconds(10), AcquireOptions.defaults().resources("m2", "m3"))) {
            assertEquals(List.of("m1", "m2", "m3"), set.resources());
            NotAcquiredException e = assertThrows(NotAcquiredException.class,
                    () -> b.acquire("m3", Duration.ofSeconds(10), AcquireOptions.defaults().waitFor(Duration.ZERO)));
            assertNotNull(e.getMessage());
        }
    }

    @Test
    void leaderElection() throws Exception {
        List<Leader> seen = new ArrayList<>();
        CountDownLatch one = new CountDownLatch(1);
        CountDownLatch two = new CountDownLatch(2);
        try (AutoCloseable watch = b.observe("svc", Duration.ofMillis(100), l -> {
            synchronized (seen) {
                seen.add(l);
            }
            one.countDown();
            two.countDown();
        })) {
            // The watch's first report is the state when it started: no leader, once its
            // first inspection has answered (on a busy machine, not before the campaign
            // below unless awaited).
            assertTrue(one.await(30, TimeUnit.SECONDS));
            try (Lock lead = a.campaign("svc", "10.0.0.1:80", Duration.ofSeconds(3), Duration.ofSeconds(10))) {
                Leader now = b.leader("svc");
                assertTrue(now.leader());
                assertEquals("10.0.0.1:80", now.value());
                assertEquals(lead.fence(), now.term());
                assertThrows(NotAcquiredException.class, () -> b.campaign("svc", "other", Duration.ofSeconds(3), Duration.ZERO));
                assertTrue(two.await(30, TimeUnit.SECONDS));
            }
        }
        synchronized (seen) {
            assertFalse(seen.get(0).leader());
            assertTrue(seen.get(1).leader());
        }
        assertFalse(a.leader("svc").leader());
    }

    @Test
    void javaUtilConcurrentLock() throws Exception {
        java.util.concurrent.locks.Lock x = a.javaLock("juc", Duration.ofSeconds(3));
        java.util.concurrent.locks.Lock y = b.javaLock("juc", Duration.ofSeconds(3));
        x.lock();
        x.lock(); // reentrant per thread
        assertFalse(y.tryLock());
        x.unlock();
        assertFalse(y.tryLock(10, TimeUnit.MILLISECONDS));
        x.unlock();
        assertTrue(y.tryLock(10, TimeUnit.SECONDS));
        assertThrows(IllegalMonitorStateException.class, x::unlock);
        y.unlock();
        assertThrows(UnsupportedOperationException.class, x::newCondition);
    }

    @Test
    void droppedLockIsReleasedByTheCleaner() throws Exception {
        dropALock();
        RedisNodes.poll(30_000, () -> {
            System.gc();
            return nodes.lockKeys() == 0;
        });
    }

    private void dropALock() throws Exception {
        a.acquire("dropped", Duration.ofSeconds(60));
        // Granted by a quorum: the third node's grant may still be on its way.
        assertTrue(nodes.lockKeys() >= 2, "keys of the held lock");
    }

    @Test
    void manyThreadsOneHolderAtATimeAndNoLeaks() throws Exception {
        long handles = Lib.lock_debug_handles();
        AtomicInteger inside = new AtomicInteger(), max = new AtomicInteger(), done = new AtomicInteger();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            LockClient c = i % 2 == 0 ? a : b;
            Thread t = new Thread(() -> {
                for (int k = 0; k < 20; k++) {
                    try (Lock l = c.acquire("hot", Duration.ofSeconds(10), AcquireOptions.defaults().waitFor(Duration.ofMinutes(1)))) {
                        max.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        inside.decrementAndGet();
                        done.incrementAndGet();
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }
            });
            ts.add(t);
            t.start();
        }
        for (Thread t : ts) t.join();
        assertEquals(160, done.get());
        assertEquals(1, max.get());
        assertEquals(handles, Lib.lock_debug_handles(), "lock handles left behind");
    }

    @Test
    void asyncCyclesLeaveNoHandleGoroutineOrThread() throws Exception {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 20; i++) a.acquireAsync("warm", Duration.ofSeconds(5), AcquireOptions.defaults()).get().close();
        long handles = Lib.lock_debug_handles(), goroutines = Lib.lock_debug_goroutines();
        int threads = mx.getThreadCount();
        for (int round = 0; round < 10; round++) {
            List<CompletableFuture<Void>> all = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                all.add(a.acquireAsync("leak-" + i, Duration.ofSeconds(5), AcquireOptions.defaults())
                        .thenCompose(l -> l.releaseAsync().whenComplete((v, e) -> {
                            try {
                                l.close();
                            } catch (LockException x) {
                                throw new AssertionError(x);
                            }
                        })));
            }
            for (CompletableFuture<Void> f : all) f.get(60, TimeUnit.SECONDS);
        }
        assertEquals(handles, Lib.lock_debug_handles(), "handles left behind");
        // The library's idle workers exit after about a second: poll for the baseline.
        RedisNodes.poll(20_000, () -> Lib.lock_debug_goroutines() <= goroutines);
        // Library (Go) threads that ran a callback stay attached to the JVM as daemon threads named
        // liblock-callback: as many as ran callbacks at once (50 acquires here), not one per operation
        // (500 here); every other thread is back to the baseline.
        java.util.Map<String, Long> names = new java.util.TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) names.merge(t.getName().replaceAll("[0-9]+", "N"), 1L, Long::sum);
        long callbackThreads = names.getOrDefault("liblock-callback", 0L);
        assertTrue(callbackThreads <= 50 + 8, "callback threads: " + names);
        assertTrue(mx.getThreadCount() - callbackThreads <= threads + 2, "threads " + threads + " -> " + mx.getThreadCount() + ": " + names);
        assertTrue(Lib.PENDING.isEmpty() || Lib.PENDING.size() < 5, "callbacks left registered: " + Lib.PENDING.size());
    }
}
