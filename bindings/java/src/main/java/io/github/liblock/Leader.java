package io.github.liblock;

import java.time.Duration;
import java.util.Map;

/**
 * An election's state: whether a leader is valid on a quorum, its value, its term (strictly
 * greater than every earlier leader's: use it as a fencing token), its owner label, and how long
 * it certainly keeps leading unless it resigns.
 */
public record Leader(boolean leader, String name, String value, long term, String owner, Duration validity) {
    static Leader of(Map<String, Object> m) {
        return new Leader(Boolean.TRUE.equals(m.get("leader")), Json.text(m, "name"), Json.text(m, "value"), Json.num(m, "term"),
                Json.text(m, "owner"), Duration.ofMillis(Math.max(0, Json.num(m, "validity_ms"))));
    }
}
