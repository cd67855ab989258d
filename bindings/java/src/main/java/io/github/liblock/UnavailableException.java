package io.github.liblock;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Too many Redis nodes failed (errors, timeouts, refused connections) for a quorum; {@link #nodes()} says which and why. */
public final class UnavailableException extends LockException {
    /** One failed node: its index in the configuration's nodes, its address and the cause. */
    public record NodeFailure(int node, String addr, String cause) {}

    // The library's message: "...: all 3 nodes failed, quorum is 2; node 0 (127.0.0.1:7001): connection refused; node 1 ..."
    private static final Pattern NODE = Pattern.compile("; node (\\d+) \\(([^()]*)\\): ");
    private final List<NodeFailure> nodes;

    UnavailableException(String message) {
        super(message);
        List<NodeFailure> out = new ArrayList<>();
        Matcher m = NODE.matcher(message);
        int node = -1, from = 0;
        String addr = null;
        while (m.find()) {
            if (node >= 0) out.add(new NodeFailure(node, addr, message.substring(from, m.start())));
            node = Integer.parseInt(m.group(1));
            addr = m.group(2);
            from = m.end();
        }
        if (node >= 0) out.add(new NodeFailure(node, addr, message.substring(from)));
        nodes = List.copyOf(out);
    }

    /** The failed nodes, in the order the library reported them. */
    public List<NodeFailure> nodes() {
        return nodes;
    }
}
