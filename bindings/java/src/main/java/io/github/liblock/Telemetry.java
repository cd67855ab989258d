package io.github.liblock;

import static io.opentelemetry.api.common.AttributeKey.booleanKey;
import static io.opentelemetry.api.common.AttributeKey.doubleKey;
import static io.opentelemetry.api.common.AttributeKey.longKey;
import static io.opentelemetry.api.common.AttributeKey.stringKey;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongUpDownCounter;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A client's metrics, spans and debug log lines, made from the library's reports
 * (lock_client_set_report): the instruments, attributes and spans of the Go core (core/otel.go)
 * and of the Node and Python bindings (docs/observability.md). The only class that names
 * OpenTelemetry's API: it is loaded when a client's telemetry is on, so the API is needed only
 * then. The reports carry no token and no password, and nothing here adds one.
 */
final class Telemetry {
    private static final String[] OUTCOMES = {"ok", "not_acquired", "lost", "invalid_argument", "invalid_handle", "unavailable", "canceled", "internal"};
    private static final String[] NODE_ERRORS = {null, "timeout", "connection", "error_reply"};
    private static final List<Double> SECONDS = List.of(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0);
    private static final AttributeKey<String> OUTCOME = stringKey("liblock.outcome"), ADDRESS = stringKey("server.address"),
            ERROR_TYPE = stringKey("error.type"), RESOURCE = stringKey("liblock.resource");
    private static final AttributeKey<Long> NODE = longKey("liblock.node"), ATTEMPTS = longKey("liblock.attempts");
    private static final AttributeKey<Boolean> AUTO = booleanKey("liblock.auto");
    private static final AttributeKey<Double> DURATION_MS = doubleKey("liblock.duration_ms");
    // The report kinds and the lock_report layout (capi/liblock.h, "REPORTS").
    private static final int ACQUIRE_END = 2, WAIT_START = 3, WAIT_END = 4, HAND_OFF = 5, EXTEND_END = 7, RELEASE_END = 9,
            LOST = 10, HOLD = 11, REPORT_NODE = 12, FENCE = 13;

    /** One call's operation: its span (null when none records) and what its reports told. */
    static final class Op {
        final String kind, resource;
        final Span span;
        final long start = System.nanoTime();
        volatile int attempts;

        Op(String kind, String resource, Span span) {
            this.kind = kind;
            this.resource = resource;
            this.span = span;
        }
    }

    private final Tracer tracer;
    private final Function<String, String> label;
    private final List<String> nodes;
    private final DoubleHistogram acquireDur, holdDur, nodeDur;
    private final LongCounter acquires, extendsCount, releases, losses, handOffs, nodeErrors, fenceRounds;
    private final LongUpDownCounter waiters;
    private final Attributes[] byOutcome = new Attributes[OUTCOMES.length], autoExt = new Attributes[OUTCOMES.length];
    private final Attributes[] nodeOK;
    private final Attributes[][] nodeBad;
    /** Acquires in flight by op handle; extensions and releases by lock handle. */
    final Map<Long, Op> acquiring = new ConcurrentHashMap<>(), onLock = new ConcurrentHashMap<>();
    /** The resource of each lock handle (labels and log lines). */
    final Map<Long, String> resources = new ConcurrentHashMap<>();
    /** Held from an async acquire's call to its op's registration: its first reports may come before the handle. */
    final Object starting = new Object();

    /** The telemetry of a client: otel the one given, or null for the global one (null when none is registered). */
    static Telemetry of(Object otel, boolean on, Function<String, String> label, List<String> nodes) {
        OpenTelemetry o = (OpenTelemetry) otel;
        if (o == null) {
            try {
                if (!on && !GlobalOpenTelemetry.isSet()) return null; // the default: on when an SDK is registered
                o = GlobalOpenTelemetry.get();
            } catch (LinkageError e) { // an API older than 1.52, or none
                if (on) throw e;
                return null;
            }
        }
        return new Telemetry(o, label, nodes);
    }

    private Telemetry(OpenTelemetry otel, Function<String, String> label, List<String> nodes) {
        this.tracer = otel.getTracer("liblock");
        this.label = label;
        this.nodes = nodes;
        Meter m = otel.getMeter("liblock");
        acquireDur = m.histogramBuilder("liblock.acquire.duration").setUnit("s").setDescription("Duration of lock acquires, from the request to the outcome, waits included.")
                .setExplicitBucketBoundariesAdvice(SECONDS).build();
        holdDur = m.histogramBuilder("liblock.hold.duration").setUnit("s").setDescription("How long locks were held, from the acquire's success to their release or loss.")
                .setExplicitBucketBoundariesAdvice(List.of(0.001, 0.01, 0.1, 1.0, 10.0, 60.0, 300.0, 1800.0, 3600.0)).build();
        nodeDur = m.histogramBuilder("liblock.node.request.duration").setUnit("s").setDescription("Duration of single requests to one Redis node.")
                .setExplicitBucketBoundariesAdvice(SECONDS).build();
        acquires = m.counterBuilder("liblock.acquires").setUnit("{acquire}").setDescription("Acquires ended, by outcome.").build();
        extendsCount = m.counterBuilder("liblock.extends").setUnit("{extend}").setDescription("Extensions ended (the caller's and auto-extensions), by outcome.").build();
        releases = m.counterBuilder("liblock.releases").setUnit("{release}").setDescription("Releases ended, by outcome.").build();
        losses = m.counterBuilder("liblock.losses").setUnit("{lock}").setDescription("Locks lost while held.").build();
        handOffs = m.counterBuilder("liblock.handoffs").setUnit("{handoff}").setDescription("Releases that handed the key straight to a waiter of the same client.").build();
        nodeErrors = m.counterBuilder("liblock.node.errors").setUnit("{error}").setDescription("Failed requests to one Redis node, by node and kind.").build();
        fenceRounds = m.counterBuilder("liblock.fence.rounds").setUnit("{round}").setDescription("Fence rounds (the second round of a fenced acquire), by outcome.").build();
        waiters = m.upDownCounterBuilder("liblock.acquire.waiters").setUnit("{acquire}").setDescription("Acquires waiting now.").build();
        for (int i = 0; i < OUTCOMES.length; i++) {
            byOutcome[i] = Attributes.of(OUTCOME, OUTCOMES[i]);
            autoExt[i] = Attributes.of(OUTCOME, OUTCOMES[i], AUTO, true);
        }
        nodeOK = new Attributes[nodes.size()];
        nodeBad = new Attributes[nodes.size()][NODE_ERRORS.length];
        for (int i = 0; i < nodes.size(); i++) {
            nodeOK[i] = Attributes.of(NODE, (long) i, ADDRESS, nodes.get(i));
            for (int e = 1; e < NODE_ERRORS.length; e++) nodeBad[i][e] = Attributes.of(NODE, (long) i, ADDRESS, nodes.get(i), ERROR_TYPE, NODE_ERRORS[e]);
        }
    }

    private static String outcome(int s) {
        return s >= 0 && s < OUTCOMES.length ? OUTCOMES[s] : "internal";
    }

    private Attributes attrs(int outcome, String resource, boolean auto) {
        int o = outcome >= 0 && outcome < OUTCOMES.length ? outcome : OUTCOMES.length - 1;
        if (label == null) return auto ? autoExt[o] : byOutcome[o];
        var b = (auto ? autoExt[o] : byOutcome[o]).toBuilder();
        try {
            b.put(RESOURCE, String.valueOf(label.apply(resource)));
        } catch (RuntimeException e) { // the label hook's bug: the record keeps its other attributes
        }
        return b.build();
    }

    /** A call starts: its span, a child of the caller's current context. */
    Op begin(String kind, String resource) {
        Span span = tracer.spanBuilder("liblock." + kind).setSpanKind(SpanKind.CLIENT).startSpan();
        if (!span.isRecording()) span = null;
        else if (label != null) span.setAttribute(RESOURCE, String.valueOf(label.apply(resource)));
        return new Op(kind, resource, span);
    }

    /** A call ended: status its outcome, err the exception its caller gets (null on success). */
    void end(Op op, int status, Throwable err) {
        if (op == null) return;
        LockClient.LOG.log(System.Logger.Level.DEBUG, () -> String.format("liblock: %s resource=%s outcome=%s attempts=%d duration=%.6fs",
                op.kind, op.resource, outcome(status), op.attempts, (System.nanoTime() - op.start) / 1e9));
        Span s = op.span;
        if (s == null) return;
        s.setAttribute(OUTCOME, outcome(status));
        if (op.kind.equals("acquire")) s.setAttribute(ATTEMPTS, op.attempts);
        if (err != null) {
            s.recordException(err);
            s.setStatus(StatusCode.ERROR, err.getMessage());
        }
        s.end();
    }

    /** One lock_report (read by offset: capi/liblock.h), on the library's thread. */
    void report(com.sun.jna.Pointer r) {
        int what = r.getByte(0), status = r.getByte(1) & 0xff, node = r.getShort(2) & 0xffff, attempts = r.getInt(4);
        double secs = r.getLong(8) / 1e6;
        long opHandle = r.getLong(16), lock = r.getLong(24);
        boolean call = r.getByte(32) != 0;
        Op op = null;
        if (call && opHandle != 0) {
            op = acquiring.get(opHandle);
            if (op == null) {
                synchronized (starting) { // its call may not have registered it yet
                    op = acquiring.get(opHandle);
                }
            }
        } else if (call && lock != 0) {
            op = onLock.get(lock);
        }
        String resource = op != null ? op.resource : resources.get(lock);
        switch (what) {
            case ACQUIRE_END:
                acquireDur.record(secs, attrs(status, resource, false));
                acquires.add(1, attrs(status, resource, false));
                if (op != null) op.attempts = attempts;
                break;
            case WAIT_START:
                waiters.add(1);
                if (op != null && op.span != null) op.span.addEvent("liblock.wait");
                break;
            case WAIT_END:
                waiters.add(-1);
                break;
            case HAND_OFF:
                handOffs.add(1);
                break;
            case EXTEND_END:
                extendsCount.add(1, attrs(status, resource, !call));
                // A failed auto-extension that lost the lock is told by the loss's warning; one
                // that could not tell (nodes failing) here: the lock stays valid until its validity ends.
                if (!call && status != Spec.OK && status != Spec.LOST) {
                    LockClient.LOG.log(System.Logger.Level.WARNING, "liblock: auto-extension failed resource=" + resource + " outcome=" + outcome(status));
                }
                break;
            case RELEASE_END:
                releases.add(1, attrs(status, resource, false));
                break;
            case LOST:
                losses.add(1, attrs(Spec.LOST, resource, false));
                break;
            case HOLD:
                holdDur.record(secs, attrs(status, resource, false));
                break;
            case REPORT_NODE:
                if (node >= nodeOK.length) break;
                boolean bad = status > 0 && status < NODE_ERRORS.length;
                Attributes at = bad ? nodeBad[node][status] : nodeOK[node];
                if (bad) {
                    nodeErrors.add(1, at);
                    LockClient.LOG.log(System.Logger.Level.DEBUG, () -> "liblock: node request failed node=" + node + " address=" + nodes.get(node) + " error.type=" + NODE_ERRORS[status]);
                }
                nodeDur.record(secs, at);
                if (op != null && op.span != null) {
                    var ev = Attributes.builder().put(NODE, (long) node).put(ADDRESS, nodes.get(node)).put(DURATION_MS, secs * 1000);
                    if (bad) ev.put(ERROR_TYPE, NODE_ERRORS[status]);
                    op.span.addEvent("liblock.node.reply", ev.build());
                }
                break;
            case FENCE:
                fenceRounds.add(1, attrs(status, resource, false));
                if (op != null && op.span != null) op.span.addEvent("liblock.fence", byOutcome[Math.min(status, OUTCOMES.length - 1)]);
                break;
            default: // a start, or a kind this binding does not know yet
        }
    }
}
