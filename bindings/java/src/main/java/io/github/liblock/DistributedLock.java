package io.github.liblock;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * A {@link java.util.concurrent.locks.Lock} over a liblock mutex, from {@link
 * LockClient#javaLock}: held with auto-extension (a ttl-long lease renewed about every ttl/3)
 * from lock() to unlock(), reentrant per thread as ReentrantLock is. Where its contract cannot
 * be honoured: {@link #newCondition()} is unsupported (a condition's wait/signal would need
 * notifications tied to this lock across processes); lock() cannot report a Redis outage in its
 * signature, so it throws IllegalStateException with the UnavailableException as cause (as
 * lockInterruptibly and tryLock do); unlock() after the lock was lost throws
 * IllegalMonitorStateException with the LockLostException as cause.
 */
final class DistributedLock implements java.util.concurrent.locks.Lock {
    private final LockClient client;
    private final String resource;
    private final Duration ttl;
    private Thread owner; // guarded by this
    private int holds;
    private Lock held;

    DistributedLock(LockClient client, String resource, Duration ttl) {
        this.client = client;
        this.resource = resource;
        this.ttl = ttl;
    }

    private synchronized boolean reenter() {
        if (owner != Thread.currentThread()) return false;
        holds++;
        return true;
    }

    private synchronized void hold(Lock l) {
        owner = Thread.currentThread();
        holds = 1;
        held = l;
    }

    private boolean attempt(Duration wait) throws InterruptedException {
        if (reenter()) return true;
        try {
            hold(client.acquire(resource, ttl, AcquireOptions.defaults().autoExtend().waitFor(wait)));
            return true;
        } catch (NotAcquiredException e) {
            return false;
        } catch (LockException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    if (attempt(Duration.ofMillis(Spec.WAIT_MAX))) return;
                } catch (InterruptedException e) {
                    interrupted = true; // lock() is not interruptible: keep waiting, restore the flag after
                }
            }
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        while (!attempt(Duration.ofMillis(Spec.WAIT_MAX))) {
            // the longest wait ran out: wait again
        }
    }

    @Override
    public boolean tryLock() {
        try {
            return attempt(Duration.ZERO);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return attempt(Duration.ofNanos(Math.max(0, unit.toNanos(time))));
    }

    @Override
    public void unlock() {
        Lock l;
        synchronized (this) {
            if (owner != Thread.currentThread()) throw new IllegalMonitorStateException("liblock: this thread does not hold " + resource);
            if (--holds > 0) return;
            l = held;
            owner = null;
            held = null;
        }
        try {
            l.close();
        } catch (LockException e) {
            IllegalMonitorStateException x = new IllegalMonitorStateException("liblock: " + resource + ": " + e.getMessage());
            x.initCause(e);
            throw x;
        }
    }

    /** Unsupported: a Condition would need wait/signal across processes tied to this lock. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("liblock: a distributed lock has no Condition");
    }
}
