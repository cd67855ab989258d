package io.github.liblock;

/** extend or release: the lock is no longer held on a quorum (it expired, was released, or someone else holds it). */
public final class LockLostException extends LockException {
    LockLostException(String message) {
        super(message);
    }
}
