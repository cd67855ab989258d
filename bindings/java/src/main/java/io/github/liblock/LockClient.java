package io.github.liblock;

import java.lang.ref.Cleaner;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A Redlock client over N independent Redis masters: locks, semaphores, read-write and
 * multi-resource locks, leader election and inspection. Thread-safe; one per application is
 * enough. {@link #close()} releases every lock it still holds. The library does its own I/O on
 * its own threads; blocking calls block the calling thread only for their round trips (each
 * bounded by the node timeout) and, for an acquire, for at most its wait.
 */
public final class LockClient implements AutoCloseable {
    static final Cleaner CLEANER = Cleaner.create();
    /** Losses at WARNING (the engine's text, the same in every language); operations at DEBUG with telemetry. */
    static final System.Logger LOG = System.getLogger("liblock");

    final long handle;
    final Executor executor;
    /** Metrics and spans from the library's reports (Telemetry.java); null when off. */
    final Telemetry telemetry;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Cleaner.Cleanable cleanable;

    private LockClient(String config, Executor executor, Telemetry telemetry) {
        long[] out = new long[1], err = new long[1];
        int st = Lib.lock_client_new(Lib.c(config), out, err);
        if (st != Spec.OK) throw Errors.invalid(Errors.message(st, Lib.take(err)));
        this.handle = out[0];
        this.executor = executor;
        this.telemetry = telemetry;
        long h = handle;
        com.sun.jna.Pointer lost = Lib.register(r -> LOG.log(System.Logger.Level.WARNING, r.err()));
        Lib.lock_client_on_lost(h, Lib.LOST, lost, null);
        long lostKey = com.sun.jna.Pointer.nativeValue(lost), reportKey = telemetry == null ? 0 : Lib.REPORT_IDS.incrementAndGet();
        if (telemetry != null) {
            Lib.REPORTS.put(reportKey, telemetry::report);
            Lib.lock_client_set_report(h, Lib.REPORT, new com.sun.jna.Pointer(reportKey), null);
        }
        this.cleanable = CLEANER.register(this, () -> {
            Lib.lock_free(h); // no callback of the client runs once it returned
            Lib.PENDING.remove(lostKey);
            Lib.REPORTS.remove(reportKey);
        });
    }

    /** A builder: at least one node. */
    public static Builder builder() {
        return new Builder();
    }

    /** The loaded library's version. */
    public static String libraryVersion() {
        return Lib.lock_version();
    }

    boolean isClosed() {
        return closed.get();
    }

    private void open() {
        if (closed.get()) throw Errors.closed();
    }

    /** Acquires the mutex on resource, waiting up to the default 10 s while another owner holds it. */
    public Lock acquire(String resource, Duration ttl) throws LockException, InterruptedException {
        return acquire(resource, ttl, AcquireOptions.defaults());
    }

    /**
     * Acquires resource as the options say. An interrupt while waiting cancels the attempt: the
     * call throws InterruptedException promptly (within about one node timeout) and leaves no
     * key on any node that answers.
     *
     * @throws NotAcquiredException another owner holds it and the wait ran out
     * @throws UnavailableException too many nodes failed
     * @throws InvalidArgumentException a bad argument, named
     * @throws IllegalStateException the client is closed (also when closed during the wait)
     */
    public Lock acquire(String resource, Duration ttl, AcquireOptions options) throws LockException, InterruptedException {
        if (Thread.interrupted()) throw new InterruptedException();
        open();
        long ttlMs = Errors.ms(ttl, "ttl");
        if (options.waitMs() == 0 && telemetry == null) {
            long[] out = new long[1], err = new long[1];
            int st = Lib.lock_acquire(handle, Lib.c(resource), ttlMs, Lib.c(options.json()), out, err);
            if (st != Spec.OK) throw Errors.of(st, Lib.take(err), isClosed());
            return new Lock(this, out[0], resource);
        }
        CompletableFuture<Lib.Result> done = new CompletableFuture<>();
        long op;
        try {
            op = start(done, resource, ttlMs, options);
        } catch (CompletionException e) {
            throw (LockException) e.getCause();
        }
        Lib.Result r;
        try {
            r = done.get();
        } catch (InterruptedException e) {
            Lib.lock_cancel(op);
            r = done.join(); // promptly: the library settles a canceled acquire within about a node timeout
            if (r.status() == Spec.OK) Lib.lock_free(r.handle()); // it won the race: drop it again
            throw e;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
        if (r.status() != Spec.OK) throw Errors.of(r.status(), r.err(), isClosed());
        return new Lock(this, r.handle(), resource);
    }

    private long start(CompletableFuture<Lib.Result> done, String resource, long ttlMs, AcquireOptions options) {
        long[] op = new long[1], err = new long[1];
        com.sun.jna.Pointer id = Lib.register(traced(op, done));
        int st = traced(resource, op, () -> Lib.lock_acquire_async(handle, Lib.c(resource), ttlMs, Lib.c(options.json()), Lib.DONE, id, op, err));
        if (st != Spec.OK) {
            Lib.PENDING.remove(com.sun.jna.Pointer.nativeValue(id));
            String msg = Lib.take(err);
            throw new CompletionException(Errors.of(st, msg, isClosed()));
        }
        return op[0];
    }

    /**
     * Makes an async acquire (or campaign) call with its span, when telemetry is on: the call and
     * the registration of its op handle under the telemetry's lock, which a report of the op that
     * comes before the handle waits for.
     */
    private int traced(String resource, long[] op, java.util.function.IntSupplier call) {
        Telemetry t = telemetry;
        if (t == null) return call.getAsInt();
        Telemetry.Op o = t.begin("acquire", resource);
        synchronized (t.starting) {
            int st = call.getAsInt();
            if (st == Spec.OK) t.acquiring.put(op[0], o);
            else t.end(o, st, null);
            return st;
        }
    }

    /** The completion of a traced call: ends its span (the op handle may not be written yet: see traced), then done. */
    private java.util.function.Consumer<Lib.Result> traced(long[] op, CompletableFuture<Lib.Result> done) {
        Telemetry t = telemetry;
        if (t == null) return done::complete;
        return r -> {
            Telemetry.Op o;
            synchronized (t.starting) {
                o = t.acquiring.remove(op[0]);
            }
            t.end(o, r.status(), r.status() == Spec.OK ? null : Errors.failure(r.status(), r.err(), isClosed()));
            done.complete(r);
        };
    }

    /** Starts the span of a call on a lock (extend, release), when telemetry is on. */
    Telemetry.Op traceLock(String kind, long lock, String resource) {
        Telemetry t = telemetry;
        if (t == null) return null;
        Telemetry.Op o = t.begin(kind, resource);
        t.onLock.put(lock, o);
        return o;
    }

    /** Ends it: status the call's, err its message. */
    void traceLockEnd(long lock, Telemetry.Op o, int status, String err) {
        if (o == null) return;
        telemetry.onLock.remove(lock, o);
        telemetry.end(o, status, status == Spec.OK ? null : Errors.failure(status, err, isClosed()));
    }

    /** One attempt: the lock, or empty when another owner holds it. */
    public Optional<Lock> tryAcquire(String resource, Duration ttl) throws LockException, InterruptedException {
        return tryAcquire(resource, ttl, Duration.ZERO);
    }

    /** Waits up to wait: the lock, or empty when another owner still holds it. */
    public Optional<Lock> tryAcquire(String resource, Duration ttl, Duration wait) throws LockException, InterruptedException {
        try {
            return Optional.of(acquire(resource, ttl, AcquireOptions.defaults().waitFor(wait)));
        } catch (NotAcquiredException e) {
            return Optional.empty();
        }
    }

    /**
     * acquire without blocking: the future completes (on the client's executor) with the lock or
     * exceptionally with the LockException. Canceling the future cancels the attempt, leaving no key.
     */
    public CompletableFuture<Lock> acquireAsync(String resource, Duration ttl, AcquireOptions options) {
        CompletableFuture<Lock> result = new CompletableFuture<>();
        try {
            open();
            CompletableFuture<Lib.Result> done = new CompletableFuture<>();
            long op = start(done, resource, Errors.ms(ttl, "ttl"), options);
            result.whenComplete((l, e) -> {
                if (result.isCancelled()) Lib.lock_cancel(op);
            });
            done.thenAcceptAsync(r -> settle(result, r, resource), executor);
        } catch (CompletionException e) {
            result.completeExceptionally(e.getCause());
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    void settle(CompletableFuture<Lock> result, Lib.Result r, String resource) {
        if (r.status() != Spec.OK) {
            try {
                result.completeExceptionally(Errors.of(r.status(), r.err(), isClosed()));
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        } else if (!result.complete(new Lock(this, r.handle(), resource))) {
            Lib.lock_free(r.handle()); // canceled meanwhile: nobody will release it
        }
    }

    /**
     * The mutex on resource as a {@link java.util.concurrent.locks.Lock}: held, with
     * auto-extension of a ttl-long lease, from lock() to unlock() (see {@link DistributedLock}
     * for where its contract differs: newCondition is unsupported).
     */
    public java.util.concurrent.locks.Lock javaLock(String resource, Duration ttl) {
        open();
        Errors.ms(ttl, "ttl");
        return new DistributedLock(this, resource, ttl);
    }

    /** Looks at a resource's mutex without taking it. */
    public Inspection inspect(String resource) throws LockException {
        return inspect(resource, null);
    }

    /** Looks at a semaphore (permits) or a read-write lock (mode) on the resource. options: permits or mode only. */
    public Inspection inspect(String resource, AcquireOptions options) throws LockException {
        open();
        String opts = null;
        if (options != null) {
            String j = options.json(); // {"wait_ms":N,...}: keep permits and mode only
            Map<String, Object> m = Json.parse(j);
            StringBuilder b = new StringBuilder("{");
            if (m.containsKey("permits")) b.append("\"permits\":").append(m.get("permits"));
            if (m.containsKey("mode")) b.append(b.length() > 1 ? "," : "").append("\"mode\":").append(Json.quote((String) m.get("mode")));
            opts = b.append('}').toString();
        }
        long[] out = new long[1], err = new long[1];
        int st = Lib.lock_inspect_ex(handle, Lib.c(resource), Lib.c(opts), out, err);
        if (st != Spec.OK) throw Errors.of(st, Lib.take(err), isClosed());
        return Inspection.of(Json.parse(Lib.take(out)));
    }

    /**
     * Campaigns in the election name, publishing value, until this client leads (or wait runs
     * out: NotAcquiredException; null: no limit). The returned lock is the leadership: its fence
     * is the term, release resigns, onLost tells a loss. Interrupts cancel the campaign.
     */
    public Lock campaign(String name, String value, Duration ttl, Duration wait) throws LockException, InterruptedException {
        try {
            return campaignAsync(name, value, ttl, wait).get();
        } catch (InterruptedException e) {
            throw e; // the future's cancellation (below) ends the campaign
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LockException) throw (LockException) e.getCause();
            if (e.getCause() instanceof RuntimeException) throw (RuntimeException) e.getCause();
            throw new IllegalStateException(e.getCause());
        }
    }

    /** campaign without blocking; canceling the future ends the campaign. */
    public CompletableFuture<Lock> campaignAsync(String name, String value, Duration ttl, Duration wait) {
        CompletableFuture<Lock> result = new CompletableFuture<>();
        try {
            open();
            CompletableFuture<Lib.Result> done = new CompletableFuture<>();
            long[] op = new long[1], err = new long[1];
            String opts = wait == null ? null : "{\"wait_ms\":" + Errors.ms(wait, "wait") + "}";
            long ttlMs = Errors.ms(ttl, "ttl");
            com.sun.jna.Pointer id = Lib.register(traced(op, done));
            int st = traced(name, op, () -> Lib.lock_campaign_async(handle, Lib.c(name), Lib.c(value), ttlMs, Lib.c(opts), Lib.DONE, id, op, err));
            if (st != Spec.OK) {
                Lib.PENDING.remove(com.sun.jna.Pointer.nativeValue(id));
                throw new CompletionException(Errors.of(st, Lib.take(err), isClosed()));
            }
            result.whenComplete((l, e) -> {
                if (result.isCancelled()) Lib.lock_cancel(op[0]);
            });
            done.thenAcceptAsync(r -> settle(result, r, name), executor);
        } catch (CompletionException e) {
            result.completeExceptionally(e.getCause());
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /** Reads the election's leader (one round to every node). */
    public Leader leader(String name) throws LockException {
        open();
        long[] out = new long[1], err = new long[1];
        int st = Lib.lock_leader(handle, Lib.c(name), out, err);
        if (st != Spec.OK) throw Errors.of(st, Lib.take(err), isClosed());
        return Leader.of(Json.parse(Lib.take(out)));
    }

    /**
     * Calls listener with the election's leader now, then with every change, once each, in order
     * (on one library thread, one call at a time). poll: how often to read the election when
     * pub/sub says nothing (null: 1 s). Close the returned handle to stop; closing the client stops it too.
     */
    public AutoCloseable observe(String name, Duration poll, Consumer<Leader> listener) {
        if (listener == null) throw new InvalidArgumentException("listener", "liblock: invalid argument: listener: null");
        return watch(name, poll, r -> {
            if (r.status() == Spec.OK) listener.accept(Leader.of(Json.parse(r.text())));
        });
    }

    /**
     * The election's leaders as a {@link java.util.concurrent.Flow.Publisher}: each subscription
     * watches the election (as {@link #observe}) and gets the leader now, then the changes, never
     * more than it requested. A subscriber without demand is not queued for: it gets the latest
     * leader when it requests again (terms only grow), and no change in between. Cancel stops the
     * watch; closing the client completes the subscription; a bad name or poll is its onError.
     */
    public java.util.concurrent.Flow.Publisher<Leader> leaders(String name, Duration poll) {
        return s -> LeaderSubscription.start(this, name, poll, s);
    }

    /** lock_observe: every callback, the final LOCK_CANCELED included, to the consumer. */
    AutoCloseable watch(String name, Duration poll, Consumer<Lib.Result> consumer) {
        open();
        long[] out = new long[1], err = new long[1];
        String opts = poll == null ? null : "{\"poll_ms\":" + Errors.ms(poll, "poll") + "}";
        com.sun.jna.Pointer id = Lib.register(consumer);
        long key = com.sun.jna.Pointer.nativeValue(id);
        int st = Lib.lock_observe(handle, Lib.c(name), Lib.c(opts), Lib.TEXT, id, out, err);
        if (st != Spec.OK) {
            Lib.PENDING.remove(key);
            String msg = Lib.take(err);
            if (st == Spec.INVALID_ARGUMENT) throw Errors.invalid(msg);
            throw new IllegalStateException(Errors.message(st, msg));
        }
        long watch = out[0];
        return () -> {
            Lib.lock_free(watch); // no callback runs once it returns
            Lib.PENDING.remove(key);
        };
    }

    /** Releases every lock still held, ends pending acquires (IllegalStateException) and closes the connections. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) cleanable.clean();
    }

    /** Builds a {@link LockClient}. Every time is a Duration; the library checks the values and its message names the setting. */
    public static final class Builder {
        private final List<String> nodes = new ArrayList<>();
        private Duration nodeTimeout;
        private Double driftFactor;
        private String keyPrefix, owner, tlsServerName;
        private Integer waitReplicas;
        private Path tlsCaFile, tlsCertFile, tlsKeyFile;
        private Executor executor = ForkJoinPool.commonPool();
        private Boolean telemetry;
        private Object openTelemetry;
        private java.util.function.Function<String, String> resourceLabel;

        /** Adds nodes: redis://[user:password@]host:port[/db], rediss://... (TLS), unix:///path. */
        public Builder nodes(String... urls) {
            nodes.addAll(List.of(urls));
            return this;
        }

        public Builder nodes(List<String> urls) {
            nodes.addAll(urls);
            return this;
        }

        /** The longest a single node request may take (default 50 ms). */
        public Builder nodeTimeout(Duration d) {
            nodeTimeout = d;
            return this;
        }

        /** The clock drift allowance as a fraction of the ttl (default 0.01). */
        public Builder driftFactor(double f) {
            driftFactor = f;
            return this;
        }

        public Builder keyPrefix(String p) {
            keyPrefix = p;
            return this;
        }

        /** A label carried in the value of every lock this client takes, reported by inspect. */
        public Builder owner(String o) {
            owner = o;
            return this;
        }

        /** WAIT for that many replicas after each grant (default 1 on Sentinel and Cluster nodes, else 0). */
        public Builder waitReplicas(int n) {
            waitReplicas = n;
            return this;
        }

        /** PEM CA certificates verifying every rediss:// node (default: the system's roots). */
        public Builder tlsCaFile(Path p) {
            tlsCaFile = p;
            return this;
        }

        /** A PEM client certificate (chain) for mutual TLS; needs {@link #tlsKeyFile}. */
        public Builder tlsCertFile(Path cert) {
            tlsCertFile = cert;
            return this;
        }

        /** The PEM private key of {@link #tlsCertFile}. */
        public Builder tlsKeyFile(Path key) {
            tlsKeyFile = key;
            return this;
        }

        /** The name the server certificates must be issued for (default: each URL's host). */
        public Builder tlsServerName(String name) {
            tlsServerName = name;
            return this;
        }

        /**
         * Metrics and spans (docs/observability.md) through the OpenTelemetry API (an optional
         * dependency): true uses GlobalOpenTelemetry; false turns them off. By default they are on
         * when the API is on the class path and an SDK is registered globally when the client is
         * built (the Java agent and autoconfigure do that first), off otherwise.
         */
        public Builder telemetry(boolean on) {
            telemetry = on;
            return this;
        }

        /** Metrics and spans through this OpenTelemetry instance (an SDK) instead of the global one. */
        public Builder openTelemetry(io.opentelemetry.api.OpenTelemetry otel) {
            openTelemetry = otel;
            telemetry = otel != null;
            return this;
        }

        /**
         * Labels metrics and spans with liblock.resource = label(resource). Each value is a time
         * series: return a few values (a prefix, a class of resource), never the resource itself.
         */
        public Builder resourceLabel(java.util.function.Function<String, String> label) {
            resourceLabel = label;
            return this;
        }

        /** Where the futures of the *Async methods complete (default: the common pool). */
        public Builder executor(Executor e) {
            executor = e;
            return this;
        }

        public LockClient build() {
            StringBuilder b = new StringBuilder("{\"nodes\":[");
            for (int k = 0; k < nodes.size(); k++) {
                String u = nodes.get(k);
                if (u == null) throw new InvalidArgumentException("nodes[" + k + "]", "liblock: invalid argument: nodes[" + k + "]: null");
                b.append(k > 0 ? "," : "").append(Json.quote(u));
            }
            b.append(']');
            if (nodeTimeout != null) b.append(",\"node_timeout_ms\":").append(Errors.ms(nodeTimeout, "nodeTimeout"));
            if (driftFactor != null) {
                if (driftFactor.isNaN() || driftFactor.isInfinite()) throw new InvalidArgumentException("driftFactor", "liblock: invalid argument: driftFactor: not a number");
                b.append(",\"drift_factor\":").append(java.math.BigDecimal.valueOf(driftFactor).toPlainString());
            }
            str(b, "key_prefix", keyPrefix);
            str(b, "owner", owner);
            if (waitReplicas != null) b.append(",\"wait_replicas\":").append(waitReplicas);
            str(b, "tls_ca_file", tlsCaFile == null ? null : tlsCaFile.toString());
            str(b, "tls_cert_file", tlsCertFile == null ? null : tlsCertFile.toString());
            str(b, "tls_key_file", tlsKeyFile == null ? null : tlsKeyFile.toString());
            str(b, "tls_server_name", tlsServerName);
            if (executor == null) throw new InvalidArgumentException("executor", "liblock: invalid argument: executor: null");
            if (Boolean.TRUE.equals(telemetry) && !apiPresent()) throw new IllegalStateException("liblock: telemetry needs io.opentelemetry:opentelemetry-api on the class path");
            Telemetry t = Boolean.FALSE.equals(telemetry) || (telemetry == null && !apiPresent()) ? null
                    : Telemetry.of(openTelemetry, Boolean.TRUE.equals(telemetry), resourceLabel, addresses());
            return new LockClient(b.append('}').toString(), executor, t);
        }

        private static boolean apiPresent() {
            try {
                Class.forName("io.opentelemetry.api.GlobalOpenTelemetry", false, LockClient.class.getClassLoader());
                return true;
            } catch (ClassNotFoundException | LinkageError e) {
                return false;
            }
        }

        /** The nodes' server.address: host:port (or a socket's path), never the credentials. */
        private List<String> addresses() {
            List<String> out = new ArrayList<>();
            for (String u : nodes) {
                try {
                    java.net.URI uri = java.net.URI.create(u);
                    out.add(uri.getHost() != null ? uri.getHost() + (uri.getPort() >= 0 ? ":" + uri.getPort() : "") : String.valueOf(uri.getPath()));
                } catch (IllegalArgumentException e) {
                    out.add("");
                }
            }
            return out;
        }

        private static void str(StringBuilder b, String key, String v) {
            if (v != null) b.append(",\"").append(key).append("\":").append(Json.quote(v));
        }
    }
}
