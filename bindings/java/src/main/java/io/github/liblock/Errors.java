package io.github.liblock;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Status codes to exceptions. */
final class Errors {
    private Errors() {}

    private static final Pattern ARG = Pattern.compile("^liblock: invalid argument: ([^:\\s]+):");

    static String message(int status, String err) {
        return err != null ? err : Spec.STATUS_MESSAGES[status];
    }

    /**
     * The exception of a failed call: checked ones are returned (the caller throws them),
     * unchecked ones thrown here. closed: whether the client was closed (a canceled call and an
     * unknown handle then mean that).
     */
    static LockException of(int status, String err, boolean closed) {
        String msg = message(status, err);
        switch (status) {
            case Spec.NOT_ACQUIRED: return new NotAcquiredException(msg);
            case Spec.LOST: return new LockLostException(msg);
            case Spec.UNAVAILABLE: return new UnavailableException(msg);
            case Spec.INVALID_ARGUMENT: throw invalid(msg);
            case Spec.INVALID_HANDLE:
            case Spec.CANCELED:
                if (closed) throw closed();
                throw new IllegalStateException(msg);
            default: throw new IllegalStateException(msg);
        }
    }

    /** The exception of a failed call, checked or not, as a value (for a span, or a subscriber's onError). */
    static Throwable failure(int status, String err, boolean closed) {
        try {
            return of(status, err, closed);
        } catch (RuntimeException e) {
            return e;
        }
    }

    static IllegalStateException closed() {
        return new IllegalStateException("liblock: the client is closed");
    }

    /** The library's "liblock: invalid argument: ttl_ms: ..." in the Java names: "...: ttl: ...". */
    static InvalidArgumentException invalid(String msg) {
        Matcher m = ARG.matcher(msg);
        if (!m.find()) return new InvalidArgumentException("", msg);
        String c = m.group(1);
        String java = Spec.JAVA_NAMES.getOrDefault(c, c);
        if (c.startsWith("tls_") || c.equals("auto_extend")) java = camel(c); // not limits: not in the spec's table
        return new InvalidArgumentException(java, msg.substring(0, m.start(1)) + java + msg.substring(m.end(1)));
    }

    private static String camel(String c) {
        StringBuilder b = new StringBuilder();
        for (String part : c.split("_")) b.append(b.length() == 0 ? part : Character.toUpperCase(part.charAt(0)) + part.substring(1));
        return b.toString();
    }

    /** A Duration as the ABI's milliseconds (sub-millisecond parts dropped: 1 µs is 0, which the library refuses naming the parameter). */
    static long ms(java.time.Duration d, String name) {
        if (d == null) throw new InvalidArgumentException(name, "liblock: invalid argument: " + name + ": null");
        try {
            return d.toMillis();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }
}
