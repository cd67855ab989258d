package io.github.liblock;

/** Another owner holds the resource, and the wait (if any) ran out. */
public final class NotAcquiredException extends LockException {
    NotAcquiredException(String message) {
        super(message);
    }
}
