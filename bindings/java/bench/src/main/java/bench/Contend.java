package bench;

import io.github.liblock.AcquireOptions;
import io.github.liblock.Lock;
import io.github.liblock.LockClient;
import java.time.Duration;
import java.util.List;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * One side of the contention across two JVMs (bench.sh starts two at once): SECTIONS critical
 * sections of 1 ms on one resource of the first node in LIBLOCK_NODES, each acquired with a wait
 * and released; prints the wall time it took. liblock: acquire with a 10 s wait (woken by the
 * holder's release); Redisson: RLock.lock() (woken by its pub/sub).
 */
public final class Contend {
    public static void main(String[] args) throws Exception {
        String impl = args[0];
        int sections = Integer.parseInt(args[1]);
        String url = System.getenv("LIBLOCK_NODES").split(",")[0];
        long t0;
        if (impl.equals("liblock")) {
            // A 1 s node timeout: a loaded machine can stall a connect past the default 50 ms; the
            // waiting under contention does not depend on it.
            try (LockClient c = LockClient.builder().nodes(List.of(url)).nodeTimeout(Duration.ofSeconds(1)).build()) {
                AcquireOptions wait = AcquireOptions.defaults().waitFor(Duration.ofSeconds(10));
                c.tryAcquire("warm-" + ProcessHandle.current().pid(), Duration.ofSeconds(1)).orElseThrow().close();
                t0 = System.nanoTime();
                for (int i = 0; i < sections; i++) {
                    try (Lock l = c.acquire("contended", Duration.ofSeconds(10), wait)) {
                        Thread.sleep(1);
                    }
                }
            }
        } else {
            Config cfg = new Config();
            cfg.useSingleServer().setAddress(url);
            RedissonClient r = Redisson.create(cfg);
            try {
                RLock l = r.getLock("contended-redisson");
                r.getLock("warm-" + ProcessHandle.current().pid()).lock();
                r.getLock("warm-" + ProcessHandle.current().pid()).unlock();
                t0 = System.nanoTime();
                for (int i = 0; i < sections; i++) {
                    l.lock();
                    try {
                        Thread.sleep(1);
                    } finally {
                        l.unlock();
                    }
                }
            } finally {
                r.shutdown();
            }
        }
        System.out.printf("%s %d %.1f%n", impl, sections, (System.nanoTime() - t0) / 1e6);
    }
}
