package io.github.liblock;

import java.time.Duration;
import java.util.List;

/**
 * How to acquire: how long to wait, auto-extension, a fencing token, re-entry by token, a
 * semaphore permit, several resources at once, or a side of a read-write lock. Immutable: each
 * method returns a new value. Checked by the library (its message names the option).
 */
public final class AcquireOptions {
    /** A side of a resource's read-write lock. */
    public enum Mode { READ, WRITE }

    private final Duration wait;
    private final boolean autoExtend, fence;
    private final String token;
    private final Integer permits;
    private final List<String> resources;
    private final Mode mode;

    private AcquireOptions(Duration wait, boolean autoExtend, boolean fence, String token, Integer permits, List<String> resources, Mode mode) {
        this.wait = wait;
        this.autoExtend = autoExtend;
        this.fence = fence;
        this.token = token;
        this.permits = permits;
        this.resources = resources;
        this.mode = mode;
    }

    /** The defaults: wait up to 10 s (the spec's default wait), no auto-extension, no fence. */
    public static AcquireOptions defaults() {
        return new AcquireOptions(Duration.ofMillis(Spec.DEFAULT_WAIT), false, false, null, null, null, null);
    }

    /** Retry for at most this long while another owner holds it; {@code Duration.ZERO}: one attempt. */
    public AcquireOptions waitFor(Duration wait) {
        if (wait == null) throw new InvalidArgumentException("wait", "liblock: invalid argument: wait: null");
        return new AcquireOptions(wait, autoExtend, fence, token, permits, resources, mode);
    }

    /** Extend the lock in the background (about every ttl/3) until released; losses reach {@link Lock#onLost}. */
    public AcquireOptions autoExtend() {
        return new AcquireOptions(wait, true, fence, token, permits, resources, mode);
    }

    /** Also obtain a fencing token ({@link Lock#fence()}), strictly greater than every earlier lock's on the resource. */
    public AcquireOptions fence() {
        return new AcquireOptions(wait, autoExtend, true, token, permits, resources, mode);
    }

    /** Acquire with this token (16..512 bytes); re-enters the lock if that token already holds it (from any process or runtime). */
    public AcquireOptions token(String token) {
        return new AcquireOptions(wait, autoExtend, fence, token, permits, resources, mode);
    }

    /** Take one permit of the counting semaphore of this many permits (1..1024) on the resource instead of its mutex. */
    public AcquireOptions permits(int permits) {
        return new AcquireOptions(wait, autoExtend, fence, token, permits, resources, mode);
    }

    /** Also lock these resources, all or none (up to 16 in all). */
    public AcquireOptions resources(String... more) {
        return new AcquireOptions(wait, autoExtend, fence, token, permits, List.of(more), mode);
    }

    /** Take a side of the resource's read-write lock instead of its mutex. */
    public AcquireOptions mode(Mode mode) {
        return new AcquireOptions(wait, autoExtend, fence, token, permits, resources, mode);
    }

    long waitMs() {
        return Errors.ms(wait, "wait");
    }

    String json() {
        StringBuilder b = new StringBuilder("{\"wait_ms\":").append(waitMs());
        if (autoExtend) b.append(",\"auto_extend\":true");
        if (fence) b.append(",\"fence\":true");
        if (token != null) b.append(",\"token\":").append(Json.quote(token));
        if (permits != null) b.append(",\"permits\":").append(permits);
        if (mode != null) b.append(",\"mode\":").append(mode == Mode.READ ? "\"read\"" : "\"write\"");
        if (resources != null) {
            b.append(",\"resources\":[");
            for (int k = 0; k < resources.size(); k++) {
                if (resources.get(k) == null) throw new InvalidArgumentException("resources[" + (k + 1) + "]", "liblock: invalid argument: resources[" + (k + 1) + "]: null");
                b.append(k > 0 ? "," : "").append(Json.quote(resources.get(k)));
            }
            b.append(']');
        }
        return b.append('}').toString();
    }
}
