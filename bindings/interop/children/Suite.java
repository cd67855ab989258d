// The Java side of the shared behaviour suite (core/testkit/locktest, run through
// core/testkit/locktest/remote by bindings/interop/suite_test.go): clients and locks of the Java
// binding (bindings/java) driven by JSON lines on stdin, one answer line per request on stdout,
// and a {"event":"lost"} line when a lock is lost. The protocol is described in
// core/testkit/locktest/remote/remote.go.
//
//   java -cp <liblock jar>:<jna jar> bindings/interop/children/Suite.java
//
// With the arguments `reenter <JSON>` it is instead the Java side of the cross-runtime re-entry
// tests (bindings/interop/reenter.test.js), speaking the protocol of children/node.js.
//
// Every request runs the blocking API on a thread of its own; a cancel line interrupts the
// acquire's thread (the binding's cancellation: an interrupted acquire cancels its attempt). At
// the end of its input it waits for the requests under way, closes every client and exits.

import io.github.liblock.*;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicLong;

public class Suite {
    static final Map<Long, LockClient> clients = new ConcurrentHashMap<>();
    static final Map<Long, Lock> locks = new ConcurrentHashMap<>();
    static final Set<Long> reported = ConcurrentHashMap.newKeySet();
    static final Map<Long, Thread> acquiring = new ConcurrentHashMap<>();
    static final AtomicLong ids = new AtomicLong();
    static final Object out = new Object();

    // The Java binding's parameter names → the engine's (locktest's ArgumentError.Arg).
    static final Map<String, String> ENGINE = Map.of("nodeTimeout", "node_timeout", "keyPrefix", "key_prefix",
            "driftFactor", "drift_factor", "autoExtend", "auto_extend", "waitReplicas", "wait_replicas");

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("reenter")) {
            reenter(Json.parse(args[1]));
            return;
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<Thread> threads = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> req = Json.parse(line);
            long id = ((Number) req.get("id")).longValue();
            if ("cancel".equals(req.get("op"))) {
                Thread t = acquiring.get(id);
                if (t != null) t.interrupt();
                continue;
            }
            Thread t = new Thread(() -> serve(id, req));
            if ("acquire".equals(req.get("op")) || "campaign".equals(req.get("op"))) acquiring.put(id, t);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) t.join();
        for (LockClient c : clients.values()) c.close();
    }

    // The Go side's observer id -> {client id, the observation}.
    static final Map<Long, Object[]> observers = new ConcurrentHashMap<>();

    static void unobserve(long oid) throws Exception {
        Object[] o = observers.remove(oid);
        if (o == null) return;
        ((AutoCloseable) o[1]).close();
        Map<String, Object> ev = new LinkedHashMap<>();
        ev.put("event", "observed");
        ev.put("observer", oid);
        say(ev);
    }

    /** Keeps a lock under a fresh id and reports its loss. */
    static long track(Lock l) {
        long lid = ids.incrementAndGet();
        locks.put(lid, l);
        l.lost().thenRun(() -> noteLost(lid, true));
        return lid;
    }

    static void say(Map<String, Object> m) {
        String s = Json.write(m);
        synchronized (out) {
            System.out.println(s);
            System.out.flush();
        }
    }

    static Duration dur(Object ms) {
        return Duration.ofNanos(Math.round(((Number) ms).doubleValue() * 1e6));
    }

    static Object ms(Duration d) {
        return d == null ? null : d.toNanos() / 1e6;
    }

    /** Reports a loss the binding knows of, once, before the answer that may report it. */
    static void noteLost(long id, boolean told) {
        Lock l = locks.get(id);
        if (l != null && (told || l.isLost()) && reported.add(id)) say(new LinkedHashMap<>(Map.of("event", "lost", "lock", id)));
    }

    static void serve(long id, Map<String, Object> req) {
        Map<String, Object> ans = new LinkedHashMap<>();
        try {
            ans.putAll(op(req));
        } catch (Throwable e) {
            ans.put("error", wire(e));
        } finally {
            acquiring.remove(id);
        }
        ans.put("id", id);
        say(ans);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> op(Map<String, Object> req) throws Exception {
        Map<String, Object> r = new LinkedHashMap<>();
        switch ((String) req.get("op")) {
            case "client": {
                LockClient.Builder b = LockClient.builder().nodes((List<String>) (List<?>) req.get("nodes"));
                if (req.containsKey("nodeTimeout")) b.nodeTimeout(dur(req.get("nodeTimeout")));
                if (req.containsKey("driftFactor")) b.driftFactor(((Number) req.get("driftFactor")).doubleValue());
                if (!"".equals(req.getOrDefault("keyPrefix", ""))) b.keyPrefix((String) req.get("keyPrefix"));
                if (!"".equals(req.getOrDefault("owner", ""))) b.owner((String) req.get("owner"));
                long cid = ids.incrementAndGet();
                clients.put(cid, b.build());
                r.put("client", cid);
                return r;
            }
            case "acquire": {
                AcquireOptions o = AcquireOptions.defaults().waitFor(dur(req.get("wait")));
                if (Boolean.TRUE.equals(req.get("autoExtend"))) o = o.autoExtend();
                if (Boolean.TRUE.equals(req.get("fence"))) o = o.fence();
                if (!"".equals(req.getOrDefault("token", ""))) o = o.token((String) req.get("token"));
                if (req.containsKey("permits")) o = o.permits(((Number) req.get("permits")).intValue());
                if ("read".equals(req.get("mode"))) o = o.mode(AcquireOptions.Mode.READ);
                if ("write".equals(req.get("mode"))) o = o.mode(AcquireOptions.Mode.WRITE);
                String resource = (String) req.get("resource");
                if (req.containsKey("resources")) {
                    // The binding's set: a first resource and the others (an empty set cannot be said).
                    List<String> all = (List<String>) (List<?>) req.get("resources");
                    resource = all.isEmpty() ? "" : all.get(0);
                    if (all.size() > 1) o = o.resources(all.subList(1, all.size()).toArray(new String[0]));
                }
                Lock l = clients.get(((Number) req.get("client")).longValue()).acquire(resource, dur(req.get("ttl")), o);
                long lid = track(l);
                r.put("lock", lid);
                r.put("key", l.key());
                r.put("token", l.token());
                r.put("ttl", req.get("ttl"));
                r.put("validity", ms(l.validity()));
                r.put("fence", l.fence());
                r.put("reentered", l.reentered());
                return r;
            }
            case "extend":
            case "release": {
                long lid = ((Number) req.get("lock")).longValue();
                Lock l = locks.get(lid);
                try {
                    if (req.get("op").equals("extend")) l.extend(dur(req.get("ttl")));
                    else l.release();
                } finally {
                    if (req.get("op").equals("extend")) noteLost(lid, false);
                }
                if (req.get("op").equals("extend")) r.put("validity", ms(l.validity()));
                return r;
            }
            case "validity": {
                long lid = ((Number) req.get("lock")).longValue();
                noteLost(lid, false);
                r.put("validity", ms(locks.get(lid).validity()));
                return r;
            }
            case "campaign": {
                Object w = req.get("wait");
                Lock l = clients.get(((Number) req.get("client")).longValue()).campaign((String) req.get("name"), (String) req.get("value"),
                        dur(req.get("ttl")), w == null ? null : dur(w));
                r.put("lock", track(l));
                r.put("term", l.fence());
                r.put("value", req.get("value"));
                return r;
            }
            case "observe": {
                long oid = ((Number) req.get("observer")).longValue();
                String name = (String) req.get("name");
                observers.put(oid, new Object[] {((Number) req.get("client")).longValue(),
                    clients.get(((Number) req.get("client")).longValue()).observe(name, Duration.ofMillis(500), ld -> {
                        Map<String, Object> ev = new LinkedHashMap<>();
                        ev.put("event", "leader");
                        ev.put("observer", oid);
                        ev.put("name", name);
                        ev.put("term", ld.leader() ? ld.term() : 0);
                        ev.put("value", ld.leader() ? ld.value() : "");
                        ev.put("owner", ld.leader() ? ld.owner() : "");
                        ev.put("validity", ld.leader() ? ms(ld.validity()) : null);
                        say(ev);
                    })});
                return r;
            }
            case "unobserve":
                unobserve(((Number) req.get("observer")).longValue());
                return r;
            case "inspect": {
                LockClient ic = clients.get(((Number) req.get("client")).longValue());
                Inspection got = req.containsKey("permits")
                    ? ic.inspect((String) req.get("resource"), AcquireOptions.defaults().permits(((Number) req.get("permits")).intValue()))
                    : ic.inspect((String) req.get("resource"));
                Object holders = got.json() == null ? null : got.json().get("holders");
                if (holders instanceof List) {
                    List<Object> hs = new ArrayList<>();
                    for (Object h : (List<?>) holders) {
                        Map<String, Object> hm = (Map<String, Object>) h;
                        Number v = (Number) hm.get("validity_ms");
                        Map<String, Object> m = new LinkedHashMap<>();
                        m.put("slot", hm.get("slot"));
                        m.put("owner", hm.get("owner"));
                        m.put("validity", v == null || v.longValue() < 0 ? null : v);
                        hs.add(m);
                    }
                    r.put("holders", hs);
                }
                r.put("held", got.held());
                r.put("validity", ms(got.validity()));
                r.put("owner", got.owner());
                List<Object> nodes = new ArrayList<>();
                for (Inspection.Node n : got.nodes()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("node", n.node());
                    m.put("addr", n.addr());
                    m.put("locked", n.locked());
                    m.put("holder", n.holder());
                    m.put("owner", n.owner());
                    m.put("ttl", ms(n.ttl()));
                    m.put("error", n.error());
                    nodes.add(m);
                }
                r.put("nodes", nodes);
                return r;
            }
            case "close": {
                long cid = ((Number) req.get("client")).longValue();
                for (Map.Entry<Long, Object[]> e : new ArrayList<>(observers.entrySet())) {
                    if (((Long) e.getValue()[0]) == cid) unobserve(e.getKey());
                }
                clients.get(cid).close();
                return r;
            }
            default:
                r.put("error", Map.of("code", "PROTOCOL", "message", "unknown op " + req.get("op")));
                return r;
        }
    }

    @SuppressWarnings("unchecked")
    static void reenter(Map<String, Object> cfg) throws Exception {
        LockClient.Builder b = LockClient.builder().nodes((List<String>) (List<?>) cfg.get("urls")).nodeTimeout(Duration.ofMillis(500));
        if (cfg.get("owner") != null && !"".equals(cfg.get("owner"))) b.owner((String) cfg.get("owner"));
        String resource = (String) cfg.get("resource");
        Lock lock = null;
        try (LockClient client = b.build()) {
            try {
                AcquireOptions o = AcquireOptions.defaults().waitFor(Duration.ZERO);
                if (cfg.get("token") != null) o = o.token((String) cfg.get("token"));
                lock = client.acquire(resource, Duration.ofMillis(((Number) cfg.get("ttl")).longValue()), o);
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ok", true);
                m.put("runtime", "java");
                m.put("backend", cfg.get("backend"));
                m.put("token", lock.token());
                m.put("reentered", lock.reentered());
                m.put("fence", lock.fence());
                m.put("validity", lock.validity().toMillis());
                say(m);
            } catch (LockException e) {
                Map<String, Object> w = wire(e);
                say(new LinkedHashMap<>(Map.of("ok", false, "code", w.get("code"), "message", w.get("message"))));
            }
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String cmd = line.trim();
                if (cmd.equals("close")) break;
                Map<String, Object> m = new LinkedHashMap<>();
                if (cmd.equals("inspect")) {
                    Inspection got = client.inspect(resource);
                    m.put("held", got.held());
                    m.put("owner", got.owner());
                    m.put("validity", got.validity() == null ? null : got.validity().toMillis());
                } else if (cmd.equals("release")) {
                    try {
                        lock.release();
                        m.put("released", true);
                    } catch (LockException e) {
                        m.put("released", false);
                        m.put("code", wire(e).get("code"));
                    }
                } else {
                    m.put("error", "unknown command " + cmd);
                }
                say(m);
            }
        }
        say(new LinkedHashMap<>(Map.of("closed", true)));
    }

    static Map<String, Object> wire(Throwable e) {
        Map<String, Object> w = new LinkedHashMap<>();
        String code = e instanceof NotAcquiredException ? "NOT_ACQUIRED"
                : e instanceof LockLostException ? "LOST"
                : e instanceof UnavailableException ? "UNAVAILABLE"
                : e instanceof IllegalArgumentException ? "INVALID_ARGUMENT"
                : e instanceof InterruptedException ? "CANCELED"
                : e instanceof IllegalStateException && String.valueOf(e.getMessage()).startsWith("liblock: the client is closed") ? "CLOSED"
                : "FOREIGN";
        w.put("code", code);
        w.put("message", code.equals("FOREIGN") ? e.toString() : String.valueOf(e.getMessage()));
        if (e instanceof InvalidArgumentException) {
            String p = ((InvalidArgumentException) e).parameter();
            w.put("arg", ENGINE.getOrDefault(p, p));
        }
        if (e instanceof UnavailableException) {
            List<Object> nodes = new ArrayList<>();
            for (UnavailableException.NodeFailure n : ((UnavailableException) e).nodes()) {
                nodes.add(new LinkedHashMap<>(Map.of("node", n.node(), "addr", n.addr(), "cause", n.cause())));
            }
            w.put("nodes", nodes);
        }
        return w;
    }

    /** Just enough JSON for the protocol. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> parse(String text) {
            return (Map<String, Object>) new Json(text).value();
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }

        private Object value() {
            skip();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                skip();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    skip();
                    String k = (String) value();
                    skip();
                    i++;
                    m.put(k, value());
                    skip();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                skip();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) {
                    l.add(value());
                    skip();
                    if (s.charAt(i++) == ']') return l;
                }
            }
            if (c == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                while ((c = s.charAt(i++)) != '"') {
                    if (c != '\\') { b.append(c); continue; }
                    c = s.charAt(i++);
                    switch (c) {
                        case 'n': b.append('\n'); break;
                        case 't': b.append('\t'); break;
                        case 'r': b.append('\r'); break;
                        case 'b': b.append('\b'); break;
                        case 'f': b.append('\f'); break;
                        case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                        default: b.append(c);
                    }
                }
                return b.toString();
            }
            if (c == 't') { i += 4; return true; }
            if (c == 'f') { i += 5; return false; }
            if (c == 'n') { i += 4; return null; }
            int from = i;
            while (i < s.length() && "+-.eE0123456789".indexOf(s.charAt(i)) >= 0) i++;
            String n = s.substring(from, i);
            return n.contains(".") || n.contains("e") || n.contains("E") ? (Object) Double.parseDouble(n) : (Object) Long.parseLong(n);
        }

        static String write(Object v) {
            if (v == null) return "null";
            if (v instanceof String) {
                StringBuilder b = new StringBuilder("\"");
                for (char c : ((String) v).toCharArray()) {
                    if (c == '"' || c == '\\') b.append('\\').append(c);
                    else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
                return b.append('"').toString();
            }
            if (v instanceof Map) {
                StringJoiner j = new StringJoiner(",", "{", "}");
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) j.add(write(e.getKey()) + ":" + write(e.getValue()));
                return j.toString();
            }
            if (v instanceof List) {
                StringJoiner j = new StringJoiner(",", "[", "]");
                for (Object o : (List<?>) v) j.add(write(o));
                return j.toString();
            }
            return v.toString();
        }
    }
}
