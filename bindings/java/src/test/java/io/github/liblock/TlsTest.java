package io.github.liblock;

import static org.junit.jupiter.api.Assertions.*;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** TLS to a redis-server that requires client certificates (core/testkit/tlstest/mkcerts.sh's certificates). */
class TlsTest {
    static Path dir;
    static Process redis;
    static int port;

    @BeforeAll
    static void start() throws Exception {
        dir = Files.createTempDirectory("liblock-java-tls");
        Path mk = Path.of(System.getProperty("user.dir")).resolve("../../core/testkit/tlstest/mkcerts.sh").normalize();
        assertEquals(0, new ProcessBuilder("sh", mk.toString(), dir.toString()).inheritIO().start().waitFor(), "mkcerts.sh");
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        redis = new ProcessBuilder("redis-server", "--port", "0", "--tls-port", String.valueOf(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", dir.toString(),
                "--tls-cert-file", dir.resolve("server.pem").toString(), "--tls-key-file", dir.resolve("server.key").toString(),
                "--tls-ca-cert-file", dir.resolve("ca.pem").toString(), "--tls-auth-clients", "yes")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        RedisNodes.poll(10_000, () -> {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                return true;
            } catch (java.io.IOException e) {
                return false;
            }
        });
    }

    @AfterAll
    static void stop() throws Exception {
        redis.destroy();
        redis.waitFor();
    }

    LockClient.Builder builder() {
        return LockClient.builder().nodes("rediss://127.0.0.1:" + port).nodeTimeout(Duration.ofSeconds(2));
    }

    @Test
    void mutualTls() throws Exception {
        try (LockClient c = builder().tlsCaFile(dir.resolve("ca.pem")).tlsCertFile(dir.resolve("client.pem")).tlsKeyFile(dir.resolve("client.key")).build();
             Lock l = c.acquire("tls", Duration.ofSeconds(5))) {
            assertTrue(c.inspect("tls").held());
        }
    }

    @Test
    void serverNotTrustedIsUnavailableWithTheReason() {
        try (LockClient c = builder().tlsCertFile(dir.resolve("client.pem")).tlsKeyFile(dir.resolve("client.key")).build()) {
            UnavailableException e = assertThrows(UnavailableException.class, () -> c.acquire("tls", Duration.ofSeconds(5)));
            assertTrue(e.nodes().get(0).cause().contains("x509"), e.getMessage());
        }
    }

    @Test
    void badFilesNameTheSetting() {
        InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> builder().tlsCaFile(dir.resolve("missing.pem")).build());
        assertEquals("tlsCaFile", e.parameter(), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> builder().tlsCertFile(dir.resolve("client.pem")).build());
        assertTrue(e.parameter().startsWith("tls"), e.getMessage());
        e = assertThrows(InvalidArgumentException.class, () -> builder().tlsCertFile(dir.resolve("client.pem")).tlsKeyFile(dir.resolve("server.key")).build());
        assertEquals("tlsKeyFile", e.parameter(), e.getMessage());
    }
}
