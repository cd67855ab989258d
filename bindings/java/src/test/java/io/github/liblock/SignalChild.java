package io.github.liblock;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The JVM side of JvmSignalsTest, run in a JVM of its own: liblock.so loaded (the Go runtime
 * and its signal handlers inside the JVM), locks taken and released on 8 threads, while the
 * main thread triggers and catches NullPointerExceptions in JIT-compiled code (the JVM's
 * implicit null checks are SIGSEGVs) and runs full GCs (safepoints: more SIGSEGVs on the
 * polling page). It says "READY <pid>" and keeps going until a line on stdin; then it stops,
 * prints its counts and returns from main (the JVM must then exit by itself, with status 0).
 */
public final class SignalChild {
    static Object sink;

    /** libc's signal(2), for the negative control. */
    public interface C extends com.sun.jna.Library {
        com.sun.jna.Pointer signal(int sig, com.sun.jna.Pointer handler);
    }

    public static void main(String[] args) throws Exception {
        boolean breakSegv = args[0].equals("--break-sigsegv");
        if (breakSegv) args = java.util.Arrays.copyOfRange(args, 1, args.length);
        LockClient client = LockClient.builder().nodes(args).nodeTimeout(Duration.ofSeconds(2)).build();
        if (breakSegv) {
            // The negative control: SIGSEGV back to the default action (neither the JVM's handler nor
            // Go's forwarding to it): the first implicit null check or safepoint poll kills the JVM.
            com.sun.jna.Native.load("c", C.class).signal(11, null);
        }
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong pairs = new AtomicLong(), unavailable = new AtomicLong(), npes = new AtomicLong(), gcs = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String res = "sig-" + (i % 3);
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    try (Lock l = client.acquire(res, Duration.ofSeconds(5), AcquireOptions.defaults().waitFor(Duration.ofSeconds(30)))) {
                        pairs.incrementAndGet();
                    } catch (UnavailableException e) {
                        unavailable.incrementAndGet(); // a pause longer than the node timeout (full GCs on a busy machine): not this test's subject
                    } catch (Exception e) {
                        e.printStackTrace();
                        System.exit(3);
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        boolean said = false;
        AtomicBoolean told = new AtomicBoolean();
        Thread reader = new Thread(() -> {
            try {
                new BufferedReader(new InputStreamReader(System.in)).readLine();
            } catch (java.io.IOException e) {
                // end of input: the same
            }
            told.set(true);
        });
        reader.setDaemon(true);
        reader.start();
        AtomicLong overflows = new AtomicLong();
        while (true) {
            for (int i = 0; i < 200_000; i++) {
                try {
                    touch(i % 3 == 0 ? null : "x");
                } catch (NullPointerException e) {
                    npes.incrementAndGet();
                }
            }
            System.gc();
            gcs.incrementAndGet();
            try {
                recurse(0); // the JVM's stack banging and guard pages: SIGSEGV at the stack's end
            } catch (StackOverflowError e) {
                overflows.incrementAndGet();
            }
            if (!said && gcs.get() >= 3 && pairs.get() >= 50) {
                System.out.println("READY " + ProcessHandle.current().pid());
                System.out.flush();
                said = true;
            }
            if (told.get()) break;
        }
        stop.set(true);
        for (Thread t : threads) t.join();
        client.close();
        System.out.println("OK pairs=" + pairs + " npes=" + npes + " gcs=" + gcs + " overflows=" + overflows + " unavailable=" + unavailable);
    }

    static long recurse(long n) {
        return recurse(n + 1) + 1;
    }

    static void touch(String s) {
        sink = s.length(); // a null s: an implicit null check once compiled
    }
}
