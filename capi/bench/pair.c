/*
 * The C ABI's blocking pair beside the C floor, in one process: a plain C
 * program alternating bursts of lock_acquire + lock_release (+ lock_free)
 * with bursts of the same two round trips written by hand on a blocking
 * socket (SET key token NX PX, then EVALSHA of the compare-and-delete
 * script). Prints each one's median pair, CPU per pair and the median of
 * the rounds' ratios. Run by capi/bench/run.sh, which pins it and the
 * redis-server to make each of the VM's two regimes.
 *
 *   pair PORT ROUNDS BURST
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "liblock.h"

static const char *RELEASE =
	"if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

static int64_t now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_ns(void) {
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
	       ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static void die(const char *what) {
	fprintf(stderr, "pair: %s\n", what);
	exit(1);
}

/* roundtrip writes cmd and reads one reply (small: one line, or a bulk
 * string that fits the buffer) into buf. */
static int roundtrip(int fd, const char *cmd, size_t n, char *buf, size_t cap) {
	if (write(fd, cmd, n) != (ssize_t)n) die("write");
	size_t got = 0;
	for (;;) {
		ssize_t r = read(fd, buf + got, cap - 1 - got);
		if (r <= 0) die("read");
		got += (size_t)r;
		buf[got] = 0;
		if (buf[0] == '$') { /* $len\r\n...\r\n */
			char *nl = strstr(buf, "\r\n");
			if (nl && strstr(nl + 2, "\r\n")) return (int)got;
		} else if (got >= 2 && buf[got - 2] == '\r' && buf[got - 1] == '\n') {
			return (int)got;
		}
	}
}

static int cmp64(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static double median_us(int64_t *v, int n) {
	int64_t *s = malloc(sizeof *s * (size_t)n);
	memcpy(s, v, sizeof *s * (size_t)n);
	qsort(s, (size_t)n, sizeof *s, cmp64);
	double m = (double)s[n / 2] / 1e3;
	free(s);
	return m;
}

static int cmpd(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	if (argc != 4) die("usage: pair PORT ROUNDS BURST");
	int port = atoi(argv[1]), rounds = atoi(argv[2]), burst = atoi(argv[3]);
	if (port <= 0 || rounds <= 0 || burst <= 0) die("bad arguments");

	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) die("connect");
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	char buf[4096], cmd[1024], sha[41];
	int n = snprintf(cmd, sizeof cmd, "*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$%zu\r\n%s\r\n", strlen(RELEASE), RELEASE);
	roundtrip(fd, cmd, (size_t)n, buf, sizeof buf);
	char *nl = strstr(buf, "\r\n");
	if (buf[0] != '$' || !nl) die("SCRIPT LOAD");
	memcpy(sha, nl + 2, 40);
	sha[40] = 0;

	char cfg[256], *err = NULL;
	snprintf(cfg, sizeof cfg, "{\"nodes\":[\"redis://127.0.0.1:%d\"],\"node_timeout_ms\":1000}", port);
	uint64_t client = 0;
	if (lock_client_new(cfg, &client, &err) != LOCK_OK) die(err ? err : "lock_client_new");

	unsigned long tok = 0;
	int64_t *lat[2], cpu[2] = {0, 0};
	for (int i = 0; i < 2; i++) lat[i] = malloc(sizeof(int64_t) * (size_t)rounds * (size_t)burst);
	double *ratio = malloc(sizeof(double) * (size_t)rounds);
	for (int r = -1; r < rounds; r++) { /* round -1: warm-up, not recorded */
		double p50[2];
		for (int k = 0; k < 2; k++) {
			int im = (r + k + 2) % 2; /* who goes first alternates */
			int64_t *d = r < 0 ? malloc(sizeof(int64_t) * (size_t)burst) : lat[im] + (size_t)r * (size_t)burst;
			int64_t c0 = cpu_ns();
			for (int i = 0; i < burst; i++) {
				int64_t t0 = now_ns();
				if (im == 0) { /* the floor */
					char t[32];
					int tl = snprintf(t, sizeof t, "%lu", ++tok);
					n = snprintf(cmd, sizeof cmd,
					             "*6\r\n$3\r\nSET\r\n$10\r\nbench:cfl0\r\n$%d\r\n%s\r\n$2\r\nNX\r\n$2\r\nPX\r\n$5\r\n10000\r\n",
					             tl, t);
					roundtrip(fd, cmd, (size_t)n, buf, sizeof buf);
					if (strncmp(buf, "+OK", 3) != 0) die("SET NX");
					n = snprintf(cmd, sizeof cmd, "*5\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$1\r\n1\r\n$10\r\nbench:cfl0\r\n$%d\r\n%s\r\n",
					             sha, tl, t);
					roundtrip(fd, cmd, (size_t)n, buf, sizeof buf);
					if (strncmp(buf, ":1", 2) != 0) die("EVALSHA");
				} else { /* liblock's blocking pair */
					uint64_t l = 0;
					if (lock_acquire(client, "bench:capi", 10000, NULL, &l, &err) != LOCK_OK) die(err ? err : "lock_acquire");
					if (lock_release(l, &err) != LOCK_OK) die(err ? err : "lock_release");
					lock_free(l);
				}
				d[i] = now_ns() - t0;
			}
			if (r < 0) {
				free(d);
				continue;
			}
			cpu[im] += cpu_ns() - c0;
			p50[im] = median_us(d, burst);
		}
		if (r >= 0) ratio[r] = p50[1] / p50[0];
	}
	qsort(ratio, (size_t)rounds, sizeof *ratio, cmpd);
	int total = rounds * burst;
	printf("%-22s %9s %9s\n", "pair", "p50 µs", "CPU µs");
	printf("%-22s %9.1f %9.1f\n", "C floor (raw socket)", median_us(lat[0], total), (double)cpu[0] / 1e3 / total);
	printf("%-22s %9.1f %9.1f\n", "liblock blocking C ABI", median_us(lat[1], total), (double)cpu[1] / 1e3 / total);
	printf("liblock ÷ floor: %.2fx (median of %d rounds' ratios of %d pairs each)\n", ratio[rounds / 2], rounds, burst);
	lock_free(client);
	close(fd);
	return 0;
}
