package bench;

import io.github.liblock.Lock;
import io.github.liblock.LockClient;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The uncontended pair (acquire + release of a free lock, one thread) on the nodes in
 * LIBLOCK_NODES: liblock against Redisson, each with its defaults. One node: RLock lock/unlock
 * (its watchdog lease) and tryLock(0, ttl)/unlock; several nodes: RedissonRedLock over one
 * RLock per node (deprecated by Redisson, but its only quorum lock). Prints p50, p99 and the
 * process's CPU per pair (every thread's: Redisson's Netty threads, liblock's Go threads).
 */
public final class Pair {
    interface Op {
        void run(int i) throws Exception;
    }

    static final int WARM = Integer.getInteger("bench.warm", 2000);
    static final int N = Integer.getInteger("bench.n", 10000);

    static void measure(String name, Op op) throws Exception {
        measure(name, WARM, N, op);
    }

    static void measure(String name, int warm, int n, Op op) throws Exception {
        final int N = n;
        for (int i = 0; i < warm; i++) op.run(i);
        long[] ns = new long[N];
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        for (int i = 0; i < N; i++) {
            long t = System.nanoTime();
            op.run(i);
            ns[i] = System.nanoTime() - t;
        }
        long cpu = os.getProcessCpuTime() - cpu0;
        Arrays.sort(ns);
        System.out.printf("%-44s p50 %7.1f us  p99 %8.1f us  cpu/pair %7.1f us%n", name, ns[N / 2] / 1e3, ns[N * 99 / 100] / 1e3, cpu / 1e3 / N);
    }

    public static void main(String[] args) throws Exception {
        List<String> urls = List.of(System.getenv("LIBLOCK_NODES").split(","));
        System.out.println("== " + urls.size() + " node(s), " + N + " pairs after " + WARM + " warm-up, one thread");
        long[] unavailable = {0};
        LockClient client = LockClient.builder().nodes(urls).build();
        Op pair = i -> {
            while (true) {
                try (Lock l = client.tryAcquire("bench-liblock", Duration.ofSeconds(10)).orElseThrow()) {
                    return; // the critical section
                } catch (io.github.liblock.UnavailableException e) {
                    unavailable[0]++; // a stall beyond the 50 ms node timeout (a loaded machine): counted, retried
                }
            }
        };
        measure("liblock acquire(wait 0) + close", pair);
        if (unavailable[0] > 0) System.out.println("  (liblock: " + unavailable[0] + " attempts UNAVAILABLE under the default 50 ms node timeout, retried)");
        List<RedissonClient> rs = new ArrayList<>();
        for (String u : urls) {
            Config c = new Config();
            c.useSingleServer().setAddress(u);
            rs.add(Redisson.create(c));
        }
        try {
            if (urls.size() == 1) {
                RLock l = rs.get(0).getLock("bench-redisson");
                measure("Redisson RLock lock() + unlock()", i -> {
                    l.lock();
                    l.unlock();
                });
                measure("Redisson RLock tryLock(0, 10 s) + unlock()", i -> {
                    if (!l.tryLock(0, 10, TimeUnit.SECONDS)) throw new IllegalStateException("not acquired");
                    l.unlock();
                });
                // The semaphore pair: one permit of 3, 10 s lease.
                io.github.liblock.AcquireOptions sem = io.github.liblock.AcquireOptions.defaults().permits(3).waitFor(Duration.ZERO);
                measure("liblock semaphore(3) acquire + close", i -> {
                    try (Lock p = client.acquire("bench-sem", Duration.ofSeconds(10), sem)) {
                        // the critical section
                    }
                });
                org.redisson.api.RPermitExpirableSemaphore rsem = rs.get(0).getPermitExpirableSemaphore("bench-rsem");
                rsem.trySetPermits(3);
                measure("Redisson RPermitExpirableSemaphore(3) pair", i -> {
                    String id = rsem.tryAcquire(0, 10, TimeUnit.SECONDS);
                    if (id == null) throw new IllegalStateException("no permit");
                    rsem.release(id);
                });
            } else {
                RLock[] locks = rs.stream().map(r -> r.getLock("bench-redlock")).toArray(RLock[]::new);
                @SuppressWarnings("deprecation")
                RedissonRedLock red = new RedissonRedLock(locks);
                measure("Redisson RedissonRedLock lock() + unlock()", i -> {
                    red.lock();
                    red.unlock();
                });
                measure("Redisson RedissonRedLock tryLock(0,10 s) + unlock", i -> {
                    if (!red.tryLock(0, 10, TimeUnit.SECONDS)) throw new IllegalStateException("not acquired");
                    red.unlock();
                });
                // One node of five frozen (SIGSTOP): a quorum still answers.
                String pid = System.getenv("LIBLOCK_NODE_PIDS").split(",")[0];
                new ProcessBuilder("kill", "-STOP", pid).inheritIO().start().waitFor();
                try {
                    measure("liblock, 1 of 5 frozen", 100, 1000, pair);
                    measure("Redisson RedissonRedLock lock+unlock, 1 of 5 frozen", 0, 10, i -> {
                        red.lock();
                        red.unlock();
                    });
                } finally {
                    new ProcessBuilder("kill", "-CONT", pid).inheritIO().start().waitFor();
                }
            }
        } finally {
            for (RedissonClient r : rs) r.shutdown();
            client.close();
        }
    }
}
