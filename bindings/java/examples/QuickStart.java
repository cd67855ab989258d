// The Java quick start (bindings/java's docs show it as written): run by make demo and by
// make test-java (bindings/java/scripts/example.sh) against the nodes in LIBLOCK_NODES.
//
//   java -cp liblock-0.1.0.jar:jna-5.14.0.jar QuickStart.java

import io.github.liblock.AcquireOptions;
import io.github.liblock.Lock;
import io.github.liblock.LockClient;
import io.github.liblock.LockException;
import io.github.liblock.NotAcquiredException;
import java.time.Duration;
import java.util.Optional;

public class QuickStart {
    public static void main(String[] args) throws Exception {
        String[] nodes = System.getenv().getOrDefault("LIBLOCK_NODES", "redis://127.0.0.1:6379").split(",");
        try (LockClient client = LockClient.builder().nodes(nodes).keyPrefix("demo:").build()) {
            // Waits up to 10 s (the default) for the lock; try-with-resources releases it.
            try (Lock lock = client.acquire("invoice-42", Duration.ofSeconds(10))) {
                System.out.println("  java: holding " + lock.key() + " for " + lock.validity().toMillis() + " ms more");
                // One attempt from elsewhere finds it held.
                Optional<Lock> other = client.tryAcquire("invoice-42", Duration.ofSeconds(10));
                System.out.println("  java: a second attempt got it? " + other.isPresent());
            }

            // A fencing token for the writes the lock protects, renewed in the background.
            AcquireOptions fenced = AcquireOptions.defaults().fence().autoExtend().waitFor(Duration.ofSeconds(2));
            try (Lock lock = client.acquire("ledger", Duration.ofSeconds(5), fenced)) {
                lock.onLost(l -> System.err.println("  java: lost " + l.resource() + ": stop writing"));
                System.out.println("  java: ledger fence " + lock.fence() + " (pass it with every write)");
            }

            // Leader election: the term is a fencing token too.
            try (Lock leadership = client.campaign("scheduler", "java-demo", Duration.ofSeconds(3), Duration.ofSeconds(5))) {
                System.out.println("  java: leading scheduler, term " + client.leader("scheduler").term());
            }
        } catch (NotAcquiredException e) {
            System.err.println("held elsewhere: " + e.getMessage());
            System.exit(1);
        } catch (LockException e) {
            System.err.println("Redis unavailable or lock lost: " + e.getMessage());
            System.exit(1);
        }
    }
}
