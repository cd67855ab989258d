package io.github.liblock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@link LockClient#inspect} saw: whether a quorum holds the resource, how long it certainly
 * stays held (null: a key without expiry), the holder's owner label, and each node's view.
 * {@link #json()} has everything the library reported (a semaphore's "permits", "in_use" and
 * "holders", a read-write lock's "readers").
 */
public record Inspection(boolean held, Duration validity, String owner, List<Node> nodes, Map<String, Object> json) {
    /** One node's view, in configuration order: error is null when it answered; ttl null when the key has no expiry (or is absent). */
    public record Node(int node, String addr, boolean locked, boolean holder, String owner, Duration ttl, String error) {}

    @SuppressWarnings("unchecked")
    static Inspection of(Map<String, Object> m) {
        List<Node> nodes = new ArrayList<>();
        for (Object o : (List<Object>) m.getOrDefault("nodes", List.of())) {
            Map<String, Object> n = (Map<String, Object>) o;
            long ttl = Json.num(n, "ttl_ms");
            nodes.add(new Node((int) Json.num(n, "node"), Json.text(n, "addr"), Boolean.TRUE.equals(n.get("locked")),
                    Boolean.TRUE.equals(n.get("holder")), Json.text(n, "owner"), ttl < 0 ? null : Duration.ofMillis(ttl),
                    (String) n.get("error")));
        }
        long v = Json.num(m, "validity_ms");
        return new Inspection(Boolean.TRUE.equals(m.get("held")), v < 0 ? null : Duration.ofMillis(v), Json.text(m, "owner"), List.copyOf(nodes), m);
    }
}
