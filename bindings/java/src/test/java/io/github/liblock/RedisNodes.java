package io.github.liblock;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** redis-server processes on free loopback ports, started and stopped by a test (as core/testkit/redistest does). */
final class RedisNodes implements AutoCloseable {
    final List<Process> procs = new ArrayList<>();
    final List<Integer> ports = new ArrayList<>();
    private final Path dir;

    RedisNodes(int n) throws IOException {
        dir = Files.createTempDirectory("liblock-java-redis");
        for (int i = 0; i < n; i++) {
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            ports.add(port);
            procs.add(start(i));
        }
        for (int i = 0; i < n; i++) {
            int k = i;
            poll(10_000, () -> cli(k, "PING").equals("PONG"));
        }
    }

    private Process start(int i) throws IOException {
        Path d = dir.resolve("n" + i);
        Files.createDirectories(d);
        return new ProcessBuilder("redis-server", "--port", String.valueOf(ports.get(i)), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", d.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    List<String> urls() {
        List<String> u = new ArrayList<>();
        for (int p : ports) u.add("redis://127.0.0.1:" + p);
        return u;
    }

    LockClient client() {
        return LockClient.builder().nodes(urls()).nodeTimeout(java.time.Duration.ofMillis(500)).build();
    }

    /** redis-cli's answer (trimmed), "" when the node does not answer. */
    String cli(int i, String... args) {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-p", String.valueOf(ports.get(i))));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            p.waitFor();
            return out;
        } catch (IOException | InterruptedException e) {
            return "";
        }
    }

    /** The number of keys across all nodes. */
    long keys() {
        long n = 0;
        for (int i = 0; i < ports.size(); i++) n += Long.parseLong(cli(i, "DBSIZE"));
        return n;
    }

    /** Keys other than fence counters (which never expire by design). */
    long lockKeys() {
        long n = 0;
        for (int i = 0; i < ports.size(); i++) {
            for (String k : cli(i, "--raw", "KEYS", "*").split("\n")) {
                if (!k.isEmpty() && !k.endsWith("fence")) n++;
            }
        }
        return n;
    }

    void signal(int i, String sig) throws Exception {
        new ProcessBuilder("kill", "-" + sig, String.valueOf(procs.get(i).pid())).start().waitFor();
    }

    static void poll(long ms, BooleanSupplier cond) {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) throw new AssertionError("condition not met within " + ms + " ms");
            Thread.onSpinWait();
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Override
    public void close() throws Exception {
        for (int i = 0; i < procs.size(); i++) signal(i, "CONT");
        for (Process p : procs) {
            p.destroy();
            p.waitFor();
        }
    }
}
