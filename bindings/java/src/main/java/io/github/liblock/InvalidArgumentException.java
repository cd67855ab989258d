package io.github.liblock;

/**
 * A bad argument: the message and {@link #parameter()} name the caller's parameter as this
 * binding spells it (ttl, wait, nodeTimeout, nodes[1], resources[2], ...).
 */
public final class InvalidArgumentException extends IllegalArgumentException {
    private final String parameter;

    InvalidArgumentException(String parameter, String message) {
        super(message);
        this.parameter = parameter;
    }

    /** The parameter that was wrong. */
    public String parameter() {
        return parameter;
    }
}
