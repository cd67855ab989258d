package io.github.liblock;

import static org.junit.jupiter.api.Assertions.*;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java binding's metrics and spans (from lock_client_set_report's reports) against the
 * OpenTelemetry SDK's in-memory exporters: the names, attributes and events of
 * docs/observability.md, as Go, Node and Python make them, and never a token.
 */
class TelemetryTest {
    static RedisNodes nodes;
    InMemorySpanExporter spans;
    InMemoryMetricReader metrics;
    OpenTelemetrySdk sdk;
    LockClient a, b;

    @BeforeAll
    static void start() throws Exception {
        nodes = new RedisNodes(3);
    }

    @AfterAll
    static void stop() throws Exception {
        nodes.close();
    }

    @BeforeEach
    void setUp() {
        spans = InMemorySpanExporter.create();
        metrics = InMemoryMetricReader.create();
        sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
                .build();
        a = LockClient.builder().nodes(nodes.urls()).nodeTimeout(Duration.ofMillis(500)).openTelemetry(sdk).build();
        b = nodes.client();
    }

    @AfterEach
    void tearDown() {
        a.close();
        b.close();
        sdk.close();
        RedisNodes.poll(5000, () -> nodes.lockKeys() == 0);
    }

    private SpanData span(String name) {
        RedisNodes.poll(5000, () -> spans.getFinishedSpanItems().stream().anyMatch(s -> s.getName().equals(name)));
        return spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow();
    }

    private static List<EventData> events(SpanData s, String name) {
        return s.getEvents().stream().filter(e -> e.getName().equals(name)).collect(Collectors.toList());
    }

    private MetricData metric(Collection<MetricData> all, String name) {
        return all.stream().filter(m -> m.getName().equals(name)).findFirst().orElseThrow(() -> new AssertionError("no " + name + " in " + names(all)));
    }

    private static List<String> names(Collection<MetricData> all) {
        return all.stream().map(MetricData::getName).sorted().collect(Collectors.toList());
    }

    /** total of the named metric collected now, 0 while it has no point. */
    private long now(String name, String outcome, Boolean auto) {
        return metrics.collectAllMetrics().stream().filter(m -> m.getName().equals(name)).mapToLong(m -> total(m, outcome, auto)).sum();
    }

    /** The sum of a counter's (or the count of a histogram's) points with outcome (and auto, when given). */
    private static long total(MetricData m, String outcome, Boolean auto) {
        long n = 0;
        for (PointData p : m.getData().getPoints()) {
            if (outcome != null && !outcome.equals(p.getAttributes().get(AttributeKey.stringKey("liblock.outcome")))) continue;
            if (auto != null && !auto.equals(Boolean.TRUE.equals(p.getAttributes().get(AttributeKey.booleanKey("liblock.auto"))))) continue;
            if (p instanceof io.opentelemetry.sdk.metrics.data.LongPointData) n += ((io.opentelemetry.sdk.metrics.data.LongPointData) p).getValue();
            else if (p instanceof io.opentelemetry.sdk.metrics.data.HistogramPointData) n += ((io.opentelemetry.sdk.metrics.data.HistogramPointData) p).getCount();
        }
        return n;
    }

    @Test
    void spansAndMetricsOfAPair() throws Exception {
        String token;
        Span parent = sdk.getTracer("test").spanBuilder("parent").startSpan();
        try (Scope s = parent.makeCurrent()) {
            try (Lock l = a.acquire("tel:pair", Duration.ofSeconds(10))) {
                token = l.token();
                l.extend(Duration.ofSeconds(10));
            }
        } finally {
            parent.end();
        }
        SpanData acq = span("liblock.acquire");
        assertEquals(SpanKind.CLIENT, acq.getKind());
        assertEquals(parent.getSpanContext().getSpanId(), acq.getParentSpanId(), "a child of the caller's context");
        assertEquals("ok", acq.getAttributes().get(AttributeKey.stringKey("liblock.outcome")));
        assertEquals(1L, acq.getAttributes().get(AttributeKey.longKey("liblock.attempts")));
        assertNull(acq.getAttributes().get(AttributeKey.stringKey("liblock.resource")), "no resource without a label hook");
        List<EventData> replies = events(acq, "liblock.node.reply");
        assertTrue(replies.size() >= 2, "a liblock.node.reply per answer of the quorum: " + acq.getEvents());
        EventData r = replies.get(0);
        long node = r.getAttributes().get(AttributeKey.longKey("liblock.node"));
        assertEquals(nodes.urls().get((int) node).substring("redis://".length()), r.getAttributes().get(AttributeKey.stringKey("server.address")));
        assertTrue(r.getAttributes().get(AttributeKey.doubleKey("liblock.duration_ms")) > 0);
        assertEquals(StatusCode.UNSET, acq.getStatus().getStatusCode());
        for (String name : List.of("liblock.extend", "liblock.release")) {
            SpanData sd = span(name);
            assertEquals("ok", sd.getAttributes().get(AttributeKey.stringKey("liblock.outcome")), name);
            assertTrue(events(sd, "liblock.node.reply").size() >= 2, name + ": " + sd.getEvents());
            assertEquals(parent.getSpanContext().getSpanId(), sd.getParentSpanId(), name);
        }
        Collection<MetricData> all = metrics.collectAllMetrics();
        assertEquals(1, total(metric(all, "liblock.acquires"), "ok", null));
        assertEquals(1, total(metric(all, "liblock.acquire.duration"), "ok", null));
        assertEquals(1, total(metric(all, "liblock.extends"), "ok", false));
        assertEquals(1, total(metric(all, "liblock.releases"), "ok", null));
        assertEquals(1, total(metric(all, "liblock.hold.duration"), "ok", null));
        assertTrue(total(metric(all, "liblock.node.request.duration"), null, null) >= 6, "node requests");
        assertEquals("s", metric(all, "liblock.acquire.duration").getUnit());
        // No token in any span or metric.
        String dump = spans.getFinishedSpanItems().toString() + all;
        assertFalse(dump.contains(token), "a token in the telemetry");
    }

    @Test
    void refusedAcquireWaitsAndFailsItsSpan() throws Exception {
        try (Lock held = b.acquire("tel:busy", Duration.ofSeconds(10))) {
            assertThrows(NotAcquiredException.class,
                    () -> a.acquire("tel:busy", Duration.ofSeconds(5), AcquireOptions.defaults().waitFor(Duration.ofMillis(300))));
        }
        SpanData acq = span("liblock.acquire");
        assertEquals("not_acquired", acq.getAttributes().get(AttributeKey.stringKey("liblock.outcome")));
        assertEquals(StatusCode.ERROR, acq.getStatus().getStatusCode());
        assertEquals(1, events(acq, "liblock.wait").size(), acq.getEvents().toString());
        assertFalse(events(acq, "exception").isEmpty(), "the failure is recorded");
        assertTrue(acq.getAttributes().get(AttributeKey.longKey("liblock.attempts")) >= 1);
        Collection<MetricData> all = metrics.collectAllMetrics();
        assertEquals(1, total(metric(all, "liblock.acquires"), "not_acquired", null));
        long waiting = 0;
        for (PointData p : metric(all, "liblock.acquire.waiters").getData().getPoints()) waiting += ((io.opentelemetry.sdk.metrics.data.LongPointData) p).getValue();
        assertEquals(0, waiting, "the waiter counted up and down again");
    }

    @Test
    void autoExtensionLossLabelAndAsync() throws Exception {
        a.close();
        List<String> labelled = new ArrayList<>();
        a = LockClient.builder().nodes(nodes.urls()).nodeTimeout(Duration.ofMillis(500)).openTelemetry(sdk)
                .resourceLabel(r -> {
                    synchronized (labelled) {
                        labelled.add(r);
                    }
                    return r.substring(0, r.indexOf(':'));
                }).build();
        Lock l = a.acquireAsync("job:1", Duration.ofMillis(900), AcquireOptions.defaults().autoExtend()).get();
        RedisNodes.poll(10_000, () -> now("liblock.extends", "ok", true) >= 1);
        for (int i = 0; i < 3; i++) nodes.cli(i, "SET", "job:1", "someone-else");
        l.lost().get();
        RedisNodes.poll(10_000, () -> now("liblock.losses", "lost", null) == 1);
        assertThrows(LockLostException.class, l::close);
        for (int i = 0; i < 3; i++) nodes.cli(i, "DEL", "job:1");
        SpanData acq = span("liblock.acquire");
        assertEquals("job", acq.getAttributes().get(AttributeKey.stringKey("liblock.resource")));
        Collection<MetricData> all = metrics.collectAllMetrics();
        for (PointData p : metric(all, "liblock.losses").getData().getPoints()) {
            assertEquals("job", p.getAttributes().get(AttributeKey.stringKey("liblock.resource")));
        }
        assertEquals(1, total(metric(all, "liblock.hold.duration"), "lost", null));
        assertEquals(0, spans.getFinishedSpanItems().stream().filter(s -> s.getName().equals("liblock.extend")).count(), "auto-extensions have no span");
    }

    @Test
    void offWhenAskedAndByDefaultWithoutAnSdk() throws Exception {
        try (LockClient off = LockClient.builder().nodes(nodes.urls()).telemetry(false).build()) {
            assertNull(off.telemetry);
            off.acquire("tel:off", Duration.ofSeconds(5)).close();
        }
        assertNull(b.telemetry, "no SDK registered globally: off");
        assertTrue(spans.getFinishedSpanItems().isEmpty());
    }

    @Test
    void aLossIsAWarningOnTheLiblockLogger() throws Exception {
        List<LogRecord> seen = new ArrayList<>();
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                synchronized (seen) {
                    seen.add(r);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger log = Logger.getLogger("liblock");
        log.addHandler(h);
        try {
            Lock l = b.acquire("tel:expire", Duration.ofMillis(100));
            l.lost().get();
            RedisNodes.poll(5000, () -> {
                synchronized (seen) {
                    return !seen.isEmpty();
                }
            });
            synchronized (seen) {
                assertEquals(java.util.logging.Level.WARNING, seen.get(0).getLevel());
                assertTrue(seen.get(0).getMessage().startsWith("liblock: lock lost: "), seen.get(0).getMessage());
                assertTrue(seen.get(0).getMessage().contains("tel:expire"), seen.get(0).getMessage());
            }
            assertThrows(LockLostException.class, l::close);
        } finally {
            log.removeHandler(h);
        }
    }
}
