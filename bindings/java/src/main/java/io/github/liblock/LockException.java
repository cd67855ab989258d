package io.github.liblock;

/**
 * An outcome of a lock operation that a correct program must plan for: the resource is held
 * ({@link NotAcquiredException}), too many Redis nodes failed ({@link UnavailableException}), or
 * the lock is no longer held ({@link LockLostException}). Checked, as {@code IOException} is:
 * each is a state of the world, not a bug, and the compiler makes sure it is handled. Mistakes in
 * the call itself are unchecked: {@link InvalidArgumentException}, and {@link
 * IllegalStateException} for a closed client.
 */
public class LockException extends Exception {
    LockException(String message) {
        super(message);
    }
}
