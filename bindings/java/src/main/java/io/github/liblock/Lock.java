package io.github.liblock;

import com.sun.jna.Pointer;
import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A lock held on a quorum (a mutex, a semaphore permit, a side of a read-write lock, a set of
 * resources, or a leadership). try-with-resources releases it: {@link #close()} releases it if
 * it was not released yet, throwing LockLostException when it was no longer held (so the critical
 * section may have overlapped another holder's), and frees its handle. A lock dropped without
 * close is released by a Cleaner once it is garbage collected. Thread-safe.
 */
public final class Lock implements AutoCloseable {
    private final LockClient client;
    private final long handle;
    private final String resource;
    private final Free free;
    private final Cleaner.Cleanable cleanable;
    private final AtomicBoolean closed = new AtomicBoolean(), watching = new AtomicBoolean();
    private final CompletableFuture<Lock> lost = new CompletableFuture<>();
    private volatile Map<String, Object> info; // the fixed part: key, token, fence, ...
    private volatile boolean released;

    /** What the Cleaner runs: it must not refer to the Lock. */
    private static final class Free implements Runnable {
        final long handle;
        final Map<Long, String> resources; // the telemetry's, or null
        volatile long lostKey;

        Free(long handle, Map<Long, String> resources) {
            this.handle = handle;
            this.resources = resources;
        }

        @Override
        public void run() {
            Lib.lock_free(handle); // releases it if still held
            if (lostKey != 0) Lib.PENDING.remove(lostKey);
            if (resources != null) resources.remove(handle);
        }
    }

    Lock(LockClient client, long handle, String resource) {
        this.client = client;
        this.handle = handle;
        this.resource = resource;
        Map<Long, String> resources = client.telemetry == null ? null : client.telemetry.resources;
        if (resources != null) resources.put(handle, resource);
        this.free = new Free(handle, resources);
        this.cleanable = LockClient.CLEANER.register(this, free);
    }

    private void open() {
        if (client.isClosed()) throw Errors.closed();
        if (closed.get()) throw new IllegalStateException("liblock: the lock is closed (its handle is freed)");
    }

    private Map<String, Object> info() {
        long[] out = new long[1], err = new long[1];
        int st = Lib.lock_info(handle, out, err);
        if (st != Spec.OK) {
            Lib.take(err);
            throw client.isClosed() || closed.get() ? Errors.closed() : new IllegalStateException(Errors.message(st, null));
        }
        return Json.parse(Lib.take(out));
    }

    private Map<String, Object> fixed() {
        Map<String, Object> m = info;
        if (m == null) info = m = info();
        return m;
    }

    /** The resource it was acquired on (the election's name for a leadership). */
    public String resource() {
        return resource;
    }

    /** The Redis key (key prefix + resource, or its Cluster form). */
    public String key() {
        return Json.text(fixed(), "key");
    }

    /** The lock's token: another client (any process or runtime) re-enters the lock with it. Keep it secret. */
    public String token() {
        return Json.text(fixed(), "token");
    }

    /** The fencing token (the term of a leadership), or 0 when acquired without fence. */
    public long fence() {
        return Json.num(fixed(), "fence");
    }

    /** Whether this acquire re-entered a lock its token already held. */
    public boolean reentered() {
        return Boolean.TRUE.equals(fixed().get("reentered"));
    }

    /** The resources of a multi-resource lock (the one resource otherwise). */
    @SuppressWarnings("unchecked")
    public List<String> resources() {
        Object r = fixed().get("resources");
        return r == null ? List.of(resource) : List.copyOf((List<String>) r);
    }

    /** How long it certainly stays held by the local monotonic clock; zero once expired, lost, released or freed. */
    public Duration validity() {
        try {
            return Duration.ofMillis(Math.max(0, Json.num(info(), "validity_ms")));
        } catch (IllegalStateException e) {
            return Duration.ZERO;
        }
    }

    /** Whether the library knows the lock is lost. */
    public boolean isLost() {
        try {
            return Boolean.TRUE.equals(info().get("lost"));
        } catch (IllegalStateException e) {
            return false;
        }
    }

    /** Resets the expiry to ttl from now on a quorum; never re-acquires an expired lock. */
    public void extend(Duration ttl) throws LockException {
        open();
        long[] err = new long[1];
        long ms = Errors.ms(ttl, "ttl");
        Telemetry.Op t = client.traceLock("extend", handle, resource);
        int st = Lib.lock_extend(handle, ms, err);
        String msg = Lib.take(err);
        client.traceLockEnd(handle, t, st, msg);
        if (st != Spec.OK) throw Errors.of(st, msg, client.isClosed() || closed.get());
    }

    /** Deletes the key where this token holds it. LockLostException: it was not held on a quorum any more. */
    public void release() throws LockException {
        open();
        long[] err = new long[1];
        Telemetry.Op t = client.traceLock("release", handle, resource);
        int st = Lib.lock_release(handle, err);
        String msg = Lib.take(err);
        client.traceLockEnd(handle, t, st, msg);
        if (st == Spec.OK || st == Spec.LOST) released = true; // nothing left to release: close() stays quiet
        if (st != Spec.OK) throw Errors.of(st, msg, client.isClosed() || closed.get());
    }

    /** extend without blocking; completes on the client's executor. */
    public CompletableFuture<Void> extendAsync(Duration ttl) {
        return async(true, ttl);
    }

    /** release without blocking; completes on the client's executor. */
    public CompletableFuture<Void> releaseAsync() {
        return async(false, null);
    }

    private CompletableFuture<Void> async(boolean extend, Duration ttl) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        try {
            open();
            CompletableFuture<Lib.Result> done = new CompletableFuture<>();
            long ms = extend ? Errors.ms(ttl, "ttl") : 0;
            Telemetry.Op t = client.traceLock(extend ? "extend" : "release", handle, resource);
            Pointer id = Lib.register(r -> {
                client.traceLockEnd(handle, t, r.status(), r.err());
                done.complete(r);
            });
            long[] err = new long[1];
            int st = extend ? Lib.lock_extend_async(handle, ms, Lib.DONE, id, err) : Lib.lock_release_async(handle, Lib.DONE, id, err);
            if (st != Spec.OK) {
                Lib.PENDING.remove(Pointer.nativeValue(id));
                String msg = Lib.take(err);
                client.traceLockEnd(handle, t, st, msg);
                result.completeExceptionally(Errors.of(st, msg, client.isClosed()));
                return result;
            }
            done.thenAcceptAsync(r -> {
                if (r.status() == Spec.OK) {
                    if (!extend) released = true;
                    result.complete(null);
                    return;
                }
                try {
                    result.completeExceptionally(Errors.of(r.status(), r.err(), client.isClosed()));
                } catch (RuntimeException e) {
                    result.completeExceptionally(e);
                }
            }, client.executor);
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /**
     * Completes (with this lock) when the library learns the lock is lost: a background
     * extension could not keep a quorum, an extend found it gone, or its validity ran out. Never
     * after a successful release or close.
     */
    public CompletableFuture<Lock> lost() {
        if (watching.compareAndSet(false, true)) {
            WeakReference<Lock> self = new WeakReference<>(this);
            Pointer id = Lib.register(r -> {
                Lock l = self.get();
                if (l != null) l.lost.complete(l);
            });
            free.lostKey = Pointer.nativeValue(id);
            int st = Lib.lock_on_lost(handle, Lib.LOST, id, null);
            if (st != Spec.OK) Lib.PENDING.remove(free.lostKey);
        }
        return lost.copy();
    }

    /** Calls listener (on the client's executor) when the lock is lost; see {@link #lost()}. */
    public void onLost(Consumer<Lock> listener) {
        lost().thenAcceptAsync(listener, client.executor);
    }

    /**
     * Releases the lock unless it was released, and frees its handle. Idempotent.
     *
     * @throws LockLostException it was no longer held (expired or taken over)
     * @throws UnavailableException too many nodes failed to tell (its keys expire with their ttl)
     */
    @Override
    public void close() throws LockException {
        if (!closed.compareAndSet(false, true)) return;
        try {
            if (!released && !client.isClosed()) {
                long[] err = new long[1];
                Telemetry.Op t = client.traceLock("release", handle, resource);
                int st = Lib.lock_release(handle, err);
                String msg = Lib.take(err);
                client.traceLockEnd(handle, t, st, msg);
                if (st != Spec.OK && st != Spec.INVALID_HANDLE) throw Errors.of(st, msg, false);
                released = true;
            }
        } finally {
            cleanable.clean();
        }
    }

    @Override
    public String toString() {
        return "Lock[" + resource + "]";
    }
}
