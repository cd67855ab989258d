package io.github.liblock;

import static org.junit.jupiter.api.Assertions.*;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Go runtime inside a JVM: both install signal handlers. Loading liblock.so replaces the
 * JVM's SIGSEGV, SIGBUS, SIGFPE and SIGPIPE handlers with Go's, which forwards every signal it
 * did not cause to the handler it saved (Go's os/signal, "Non-Go programs that call Go code").
 * This runs {@link SignalChild} in a fresh JVM: locks on 8 threads while NPEs in compiled code,
 * StackOverflowErrors and full GCs need the JVM's SIGSEGV handling, three `jcmd Thread.print`
 * dumps, then a clean exit (status 0) — without LD_PRELOAD, with the JVM's libjsig (signal
 * chaining), and on Java 25 when it is installed.
 */
class JvmSignalsTest {
    static RedisNodes nodes;

    @BeforeAll
    static void start() throws Exception {
        nodes = new RedisNodes(1);
    }

    @AfterAll
    static void stop() throws Exception {
        nodes.close();
    }

    static String classpath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null ? cp : System.getProperty("java.class.path");
    }

    Process child(Path javaHome, String preload, String... flags) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(javaHome.resolve("bin/java").toString()));
        if (Runtime.version().feature() >= 22 || !javaHome.equals(home())) cmd.add("--enable-native-access=ALL-UNNAMED"); // JNA's System.load on 22+
        cmd.addAll(List.of("-cp", classpath(), SignalChild.class.getName()));
        cmd.addAll(List.of(flags));
        cmd.addAll(nodes.urls());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        if (preload != null) pb.environment().put("LD_PRELOAD", preload);
        return pb.start();
    }

    void run(Path javaHome, String preload) throws Exception {
        Process p = child(javaHome, preload);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream()));
        String ready = out.readLine();
        assertNotNull(ready, "the child ended before it was ready");
        assertTrue(ready.startsWith("READY "), ready);
        for (int i = 0; i < 3; i++) {
            Process j = new ProcessBuilder(javaHome.resolve("bin/jcmd").toString(), String.valueOf(p.pid()), "Thread.print")
                    .redirectErrorStream(true).start();
            String dump = new String(j.getInputStream().readAllBytes());
            assertEquals(0, j.waitFor(), dump);
            assertTrue(dump.contains("Full thread dump"), dump);
        }
        try (OutputStream in = p.getOutputStream()) {
            in.write("stop\n".getBytes());
        }
        String last = out.readLine();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the JVM did not exit"); // a deadline for the failure only
        assertEquals(0, p.exitValue(), "exit status; last line: " + last);
        assertNotNull(last);
        assertTrue(last.startsWith("OK pairs="), last);
        assertFalse(last.contains("pairs=0 "), last);
        assertFalse(last.contains("npes=0 "), last);
    }

    static Path home() {
        return Path.of(System.getProperty("java.home"));
    }

    @Test
    void withoutLibjsig() throws Exception {
        run(home(), null);
    }

    /** The negative control: with SIGSEGV's handling broken on purpose, the same child dies. */
    @Test
    void brokenSigsegvIsCaught() throws Exception {
        Process p = child(home(), null, "--break-sigsegv");
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(120, TimeUnit.SECONDS)); // a deadline for the failure only
        assertNotEquals(0, p.exitValue(), out);
        assertFalse(out.contains("OK pairs="), out);
    }

    @Test
    void withLibjsig() throws Exception {
        Path jsig = home().resolve("lib/libjsig.so");
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(jsig), "no libjsig.so in this JDK");
        run(home(), jsig.toString());
    }

    @Test
    void onJava25() throws Exception {
        Path j25 = Path.of(System.getProperty("liblock.test.java25", "/usr/lib/jvm/temurin-25-jdk-amd64"));
        org.junit.jupiter.api.Assumptions.assumeTrue(Files.exists(j25.resolve("bin/java")), "no Java 25 at " + j25);
        run(j25, null);
    }
}
