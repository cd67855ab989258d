/*
 * liblock.h -- the C ABI of liblock, a Redlock (distributed lock over N
 * independent Redis masters) client.
 *
 * ABI version 1. This header and capi/README.md are the contract: this file
 * documents it function by function, with the limits and extensions.
 *
 * CONVENTIONS
 *
 *   Handles.  Clients, locks and pending operations are named by uint64_t
 *   handles. 0 is never a valid handle; a handle is never reused within a
 *   process; every handle is below 2^53, so a JavaScript number holds it
 *   exactly. Passing an unknown, freed or wrong-kind handle returns
 *   LOCK_INVALID_HANDLE and does nothing else: it never crashes.
 *
 *   Errors.  Every function but lock_abi_version, lock_version,
 *   lock_string_free and the lock_debug_* functions returns an int32_t
 *   status (LOCK_OK or an error below). The optional out-parameter
 *   `char **err` (NULL is allowed) receives, when the call fails, a
 *   NUL-terminated, human-readable message allocated by the library, which
 *   the caller frees with lock_string_free; when the call succeeds, *err is
 *   set to NULL. Messages never contain passwords from node URLs. The
 *   message of LOCK_INVALID_ARGUMENT names what was wrong first:
 *   "liblock: invalid argument: NAME: reason", where NAME is the parameter
 *   (resource, ttl_ms, out_lock, inspection_json, cb, ...), the JSON key
 *   (nodes, owner, wait_ms, token, fence, ...), or config / options for the
 *   JSON text as a whole (malformed, unknown or repeated key, not UTF-8).
 *
 *   Argument checking order.  The handle is checked first
 *   (LOCK_INVALID_HANDLE), then the other arguments (LOCK_INVALID_ARGUMENT).
 *
 *   Strings.  Strings going in are NUL-terminated UTF-8 and are copied before
 *   the call returns. Strings coming out are C-heap copies (free them with
 *   lock_string_free) or, for lock_version, static. No pointer into Go memory
 *   is ever handed out.
 *
 *   Threads.  Every function may be called from any thread at any time,
 *   concurrently with any other, including on the same handle. Synchronous
 *   calls block the calling thread for their network round trips (each node
 *   request is bounded by node_timeout_ms) and, for lock_acquire with
 *   wait_ms, for up to wait_ms.
 *
 *   Callbacks.  Callbacks run on threads owned by the library, never on the
 *   caller's thread. They may call any function of this library. The `err`
 *   string a callback receives is valid only during the call.
 *
 *   Durations are int64_t milliseconds.
 *
 *   Processes.  The library embeds the Go runtime: use it only in the process
 *   that loaded it. A child created by fork() after the library was loaded
 *   must not call it (it would hang); use spawn/exec. dlclose() does not
 *   unload it. glibc only (not musl).
 *
 * LIMITS
 *
 *   ttl_ms:          1 .. 86400000 (24 h)
 *   wait_ms:         0 .. 86400000 (24 h)
 *   resource:        1 .. 1024 bytes of UTF-8
 *   key_prefix:      0 .. 256 bytes of UTF-8
 *   nodes:           1 .. 64 URLs
 *   node_timeout_ms: 1 .. 60000, default 50
 *   drift_factor:    0 .. 0.1, default 0.01
 *   owner:           0 .. 128 bytes of UTF-8, no '/'
 *   token:           16 .. 512 bytes of UTF-8
 *   resources:       1 .. 16 per lock (resource + options "resources")
 *   permits:         1 .. 1024 (a semaphore's count)
 *   wait_replicas:   0 .. 100
 *   value:           1 .. 4096 bytes of UTF-8 (an election's)
 *   poll_ms:         0 .. 86400000, default 1000 (lock_observe)
 *   JSON arguments:  at most 1 MiB
 *
 *   (These are core/hostabi/spec/protocol.json's limits, which a test
 *   checks this list against.)
 *
 * ADDITIONS WITHIN ABI VERSION 1
 *
 *   Later releases add functions and JSON keys, never a changed meaning:
 *   the config keys "owner" and "wait_replicas" (and Sentinel node URLs,
 *   ?master_name=), the acquire option keys "token", "fence", "resources",
 *   "permits" (counting semaphores) and "mode" (read-write locks),
 *   lock_info's "fence", "reentered", "resources" and "mode", lock_inspect /
 *   lock_inspect_async with lock_inspect_callback, lock_inspect_ex with
 *   its "permits" and "mode", and lock_client_on_lost. LIBLOCK_ABI_VERSION stays 1. A library from before them rejects the new keys with
 *   LOCK_INVALID_ARGUMENT ("unknown key") and lacks the new symbols (look
 *   them up with dlsym to support both).
 */
#ifndef LIBLOCK_H
#define LIBLOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this header describes; compare with lock_abi_version(). */
#define LIBLOCK_ABI_VERSION 1

/* Status codes. */
#define LOCK_OK               0 /* done */
#define LOCK_NOT_ACQUIRED     1 /* held by another owner: no quorum of grants before the wait ran out */
#define LOCK_LOST             2 /* extend/release: no longer held on a quorum (expired, or someone else holds it) */
#define LOCK_INVALID_ARGUMENT 3 /* NULL where a value is required, bad resource/ttl, malformed JSON, unknown JSON key, bad node URL */
#define LOCK_INVALID_HANDLE   4 /* unknown, freed, or wrong-kind handle */
#define LOCK_UNAVAILABLE      5 /* too many nodes failed (errors, timeouts, refused connections) for a quorum */
#define LOCK_CANCELED         6 /* a pending operation was canceled (lock_cancel, or its client was freed) */
#define LOCK_INTERNAL         7 /* a bug inside the library; the message says what; the process survives */

/*
 * lock_callback -- the completion callback of the asynchronous functions and
 * of lock_on_lost.
 *
 *   user_data  the pointer given when the callback was registered, untouched.
 *   status     the final status (LOCK_OK or an error code).
 *   handle     lock_acquire_async: the new lock handle on LOCK_OK, else 0.
 *              lock_extend_async, lock_release_async, lock_on_lost: the lock's
 *              handle (0 when the operation was canceled).
 *   err        NULL on LOCK_OK, else a message valid only during the call
 *              (copy it to keep it; do not free it).
 *
 * Called on a library thread. It should return promptly: it occupies a
 * library goroutine, not a host thread, but the caller's own state may need
 * synchronization.
 */
typedef void (*lock_callback)(void *user_data, int32_t status, uint64_t handle, const char *err);

/*
 * lock_abi_version -- returns LIBLOCK_ABI_VERSION of the loaded library.
 * Thread-safe; cannot fail.
 */
int32_t lock_abi_version(void);

/*
 * lock_version -- returns the library's version, e.g. "0.1.0", as a static
 * string: do not free it. Thread-safe; cannot fail. (Extension: not in the
 * version-1 contract.)
 */
const char *lock_version(void);

/*
 * lock_string_free -- frees a string returned by this library through an
 * `err` out-parameter, by lock_info or by lock_inspect. NULL is fine. Freeing a string twice,
 * or one the library did not allocate, is undefined behaviour (as free()).
 */
void lock_string_free(char *s);

/*
 * lock_client_new -- creates a client over a set of independent Redis
 * masters. It validates the configuration; it does not connect (connections
 * are made on first use), so the nodes need not be reachable yet.
 *
 *   config_json  a JSON object, required:
 *       "nodes"            array, required, 1..64 items, each a URL
 *                          string: redis://[user:password@]host:port[/db],
 *                          rediss://... (TLS), unix:///path/to/socket; or
 *                          an object {"url": "<URL>", "tls_ca_file": ...,
 *                          "tls_cert_file": ..., "tls_key_file": ...,
 *                          "tls_server_name": ...} ("url" required, the
 *                          tls_* keys optional, as below): that node's own
 *                          TLS settings, which replace (not merge with)
 *                          the client-level tls_* keys for it, e.g. a node
 *                          whose certificate comes from another private
 *                          CA. Errors name the item's key, e.g.
 *                          "nodes[1].tls_ca_file: cannot read ...",
 *                          "nodes[1].x: unknown key". (An addition to ABI
 *                          v1; lock_engine_new takes the object form with
 *                          "url" only.)
 *       "node_timeout_ms"  integer > 0, at most 60000; default 50: the longest
 *                          any single node request may take
 *       "drift_factor"     number >= 0, at most 0.1; default 0.01; 0 means no
 *                          drift allowance. validity = ttl - elapsed -
 *                          (ttl * drift_factor + 2 ms)
 *       "key_prefix"       string, at most 256 bytes; default ""
 *       "owner"            string, at most 128 bytes, no '/'; default none:
 *                          a label carried in the value of every lock the
 *                          client takes ("owner/<uuid>" instead of
 *                          "<uuid>"; the random part keeps its 122 bits),
 *                          which lock_inspect reports to anyone. A plain
 *                          SET NX still excludes such a lock and is
 *                          excluded by it.
 *       "wait_replicas"    integer 0 .. 100; default 1 on Sentinel nodes
 *                          (URLs with master_name=), 0 (off) on the others:
 *                          WAIT for that many replicas after each grant and
 *                          extension; a node's grant counts only when they
 *                          acknowledged it within the node timeout (README
 *                          "Sentinel nodes, WAIT and single-endpoint mode").
 *       "tls_ca_file"      string, path of a PEM file of CA certificates;
 *                          default none: the system's roots. The server
 *                          certificate of every rediss:// node is verified
 *                          against these instead.
 *       "tls_cert_file"    string, path of a PEM client certificate (chain)
 *                          for mutual TLS (tls-auth-clients yes); needs
 *                          "tls_key_file".
 *       "tls_key_file"     string, path of the PEM private key of
 *                          "tls_cert_file"; needs "tls_cert_file".
 *       "tls_server_name"  string; default: each rediss:// URL's host. The
 *                          name the server certificate must be issued for
 *                          (and the SNI sent), e.g. "redis.internal" while
 *                          the URL says 127.0.0.1.
 *                          The tls_* keys apply to every rediss:// node of
 *                          the client (not to redis:// and unix:// nodes);
 *                          a URL's ?skip_verify=true still turns
 *                          verification off for its node (never in
 *                          production). "" is the same as the key not
 *                          given. The files are read by lock_client_new: a
 *                          file that cannot be read or holds no PEM
 *                          certificate (key), a certificate without its key
 *                          or a key that does not match its certificate is
 *                          LOCK_INVALID_ARGUMENT naming the key, e.g.
 *                          "tls_ca_file: cannot read ..." or "tls_key_file:
 *                          does not match tls_cert_file" (never the files'
 *                          contents). lock_engine_new does not take them:
 *                          its host makes the TLS connections.
 *     Keys are case-sensitive; an unknown or repeated key, a value of the
 *     wrong type (a float or a string for an integer, null anywhere), or
 *     anything after the object is LOCK_INVALID_ARGUMENT.
 *   out_client   receives the new client handle on LOCK_OK; required.
 *   err          optional, see CONVENTIONS.
 *
 * Free the client with lock_free. Thread-safe.
 *
 * Returns LOCK_OK, LOCK_INVALID_ARGUMENT (NULL config_json or out_client, bad
 * JSON, a bad URL, a value out of range, a TLS file as above) or
 * LOCK_INTERNAL. A server certificate that does not verify is a node
 * failure: the operation's LOCK_UNAVAILABLE message names the node and the
 * TLS reason.
 */
int32_t lock_client_new(const char *config_json, uint64_t *out_client, char **err);

/*
 * lock_acquire -- takes the lock on `resource`, blocking the calling thread.
 *
 * The Redis key is key_prefix + resource, exactly (on a client with a Redis
 * Cluster node, "{" key_prefix + resource "}" unless it has a hash tag: see
 * README "Redis Cluster nodes"; lock_info's "key" says which); its value is a random
 * token (a version-4 UUID: 122 random bits, "owner/" before it when the
 * client has an owner) set with SET key token NX PX ttl on every node at
 * once, so a liblock lock and a plain SET NX lock on the same key exclude
 * each other. It succeeds when a majority (N/2+1) of nodes granted it and the
 * remaining validity is positive; otherwise the key is dropped on every node
 * where this token may be, including nodes that did not answer.
 *
 *   client        a client handle.
 *   resource      the resource name, 1..1024 bytes of UTF-8; required.
 *   ttl_ms        the lease, 1..86400000 ms.
 *   options_json  NULL for the defaults, or a JSON object:
 *       "wait_ms"      integer >= 0, at most 86400000; default 0 (one
 *                      attempt): keep retrying, with randomized backoff, for
 *                      at most this long. A release through the same client
 *                      wakes its waiters at once.
 *       "auto_extend"  bool; default false: while held, extend the lock in
 *                      the background (about every ttl/3) until it is
 *                      released, freed or lost (see lock_on_lost).
 *       "token"        string, 16..512 bytes; default none (a random
 *                      token): use this token instead. If it already holds
 *                      the resource on a quorum (given by lock_info's
 *                      "token" of a lock taken elsewhere: another client,
 *                      process or runtime), the acquire RE-ENTERS that
 *                      lock: it succeeds at once, the key's ttl on the
 *                      nodes becomes at least ttl_ms, and lock_info says
 *                      "reentered":true. Otherwise it is an ordinary
 *                      acquire with that token. Both handles then name one
 *                      lock on the nodes: releasing either (lock_release,
 *                      lock_free) deletes the key for both -- a re-entry is
 *                      not counted -- and the other's release then returns
 *                      LOCK_LOST. A failed attempt with a token deletes
 *                      nothing (it cannot tell its keys from those of a
 *                      lock it would re-enter): what it set expires with
 *                      ttl_ms. Keep tokens secret: a token is the lock.
 *       "fence"        bool; default false: also obtain a fencing token,
 *                      lock_info's "fence": an integer strictly greater than
 *                      the fence of every lock on the same resource
 *                      acquired before this one (as long as no node loses
 *                      its data). Pass it with every write to the resource
 *                      you protect, and have that resource refuse a fence
 *                      lower than one it has seen: a holder paused past its
 *                      validity is then refused. Costs a second round trip;
 *                      each node keeps a counter per resource (the key +
 *                      byte 0xFF + "fence", which never expires). Not with
 *                      "token" (LOCK_INVALID_ARGUMENT naming fence).
 *       "permits"      integer 1..1024; default none (the mutex): take one
 *                      permit of the counting semaphore of that many
 *                      permits on resource instead -- at most that many
 *                      locks of it are valid at any moment. The lock
 *                      handle works as a mutex's (release, extend,
 *                      auto_extend, lost, fence: greater than every permit
 *                      of the name acquired before). The count is part of
 *                      the semaphore's identity: 3 and 5 permits on one
 *                      name are two semaphores, neither the mutex. Any
 *                      other value (0, negative, above 1024, not an
 *                      integer) is LOCK_INVALID_ARGUMENT naming permits.
 *       "resources"    array of 1..15 strings; default none: a
 *                      multi-resource lock on `resource` and these together,
 *                      all or none. Each keeps its own key (key_prefix +
 *                      resource), and each node sets all the set's keys in
 *                      one script or, when any is held, none: the lock
 *                      excludes a lock on any member and every set sharing
 *                      one, in any order, and nobody holds part of a set.
 *                      LOCK_NOT_ACQUIRED's message names the resource held.
 *                      Release, extend, on_lost, auto_extend and free cover
 *                      the set; lock_info adds "resources". With "fence":
 *                      one fence above every earlier fence on each member.
 *                      Not with "token". Errors name an element by its index
 *                      in the whole set, `resource` being resources[0]:
 *                      "resources" (not an array, empty, too many),
 *                      "resources[i]" (not a string, empty, too long, not
 *                      UTF-8, or a duplicate of an earlier one).
 *       "mode"         "read" or "write"; default: the mutex. A side of
 *                      the resource's READ-WRITE LOCK: any number of
 *                      readers hold it together, never with its one
 *                      writer. Its keys are its own (the key + byte 0xFF +
 *                      "rw:w", ":r", ":i"), so the mutex of the same name
 *                      is another lock. A writer waiting for readers
 *                      ("wait_ms") leaves an intent on the nodes it
 *                      reached that refuses new readers until it acquires
 *                      or gives up: a stream of readers cannot starve it.
 *                      Validity, lock_extend, "auto_extend",
 *                      lock_on_lost, lock_release and lock_free work as
 *                      for the mutex; with "fence", a writer's fence is
 *                      greater than every earlier reader's and writer's.
 *                      Anything but "read" or "write" (or "exclusive", the
 *                      default), or "mode" with "token", is
 *                      LOCK_INVALID_ARGUMENT naming mode.
 *   out_lock      receives the new lock handle on LOCK_OK; required.
 *   err           optional.
 *
 * The lock handle stays valid, whatever happens to the lock, until lock_free
 * (or until its client is freed). Thread-safe.
 *
 * Returns LOCK_OK, LOCK_NOT_ACQUIRED (another owner holds it; with "token":
 * another token holds it), LOCK_UNAVAILABLE (too many nodes failed; with
 * "fence": also when the fence could not be written on a quorum in time),
 * LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT, LOCK_CANCELED (the client was
 * freed while waiting) or LOCK_INTERNAL.
 */
int32_t lock_acquire(uint64_t client, const char *resource, int64_t ttl_ms,
                     const char *options_json, uint64_t *out_lock, char **err);

/*
 * lock_extend -- resets the lock's expiry to ttl_ms from now on the nodes
 * where this token still holds it. It succeeds only on a quorum within the
 * remaining validity; it never re-acquires a lock that has already expired.
 *
 *   lock    a lock handle.
 *   ttl_ms  the new lease, 1..86400000 ms.
 *   err     optional.
 *
 * Thread-safe; serialized with other extends/releases of the same lock.
 *
 * Returns LOCK_OK, LOCK_LOST (expired, released, or held by another owner
 * now; lock_on_lost's callback fires), LOCK_UNAVAILABLE (too many nodes failed
 * to tell; the lock stays held until its current validity ends),
 * LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT or LOCK_INTERNAL.
 */
int32_t lock_extend(uint64_t lock, int64_t ttl_ms, char **err);

/*
 * lock_release -- deletes the key on every node where this token holds it;
 * never touches a key that another owner holds. The handle stays valid until
 * lock_free.
 *
 *   lock  a lock handle.
 *   err   optional.
 *
 * Returns LOCK_OK (it was still held on a quorum), LOCK_LOST (it was not, or
 * it had already been released), LOCK_UNAVAILABLE (too many nodes failed to
 * tell: the lock is not marked released; call lock_release again),
 * LOCK_INVALID_HANDLE or LOCK_INTERNAL.
 */
int32_t lock_release(uint64_t lock, char **err);

/*
 * lock_free -- frees a client or a lock handle.
 *
 *   Lock handle: releases the lock if it is still held (errors are ignored:
 *   if the nodes cannot be reached the keys expire by their ttl, and the
 *   client retries when it is freed), stops its on-lost callback (one that
 *   is already running may finish), and frees the handle. Blocks for the
 *   release round trip (bounded by node_timeout_ms).
 *
 *   Client handle: makes every pending operation of the client complete with
 *   LOCK_CANCELED (a blocking lock_acquire returns LOCK_CANCELED), frees all
 *   its lock handles, releasing the locks still held, closes its connections
 *   and frees the handle. Blocks until the releases are done (each bounded
 *   by node_timeout_ms). It does not wait for callbacks, so it may be
 *   called from one.
 *
 * Operation handles cannot be freed (they expire when their callback runs):
 * lock_free(op) returns LOCK_INVALID_HANDLE. Two frees racing: one gets
 * LOCK_OK, the other LOCK_INVALID_HANDLE. Thread-safe.
 *
 * Returns LOCK_OK, LOCK_INVALID_HANDLE or LOCK_INTERNAL.
 */
int32_t lock_free(uint64_t handle);

/*
 * lock_acquire_async -- lock_acquire without blocking: validates the
 * arguments and returns at once. If it returns LOCK_OK, `cb` is called
 * exactly once, later, on a library thread, with the final status (as
 * lock_acquire's, or LOCK_CANCELED), the new lock handle (0 when none) and a
 * message (NULL on success). If it returns anything else, `cb` is never
 * called. A thousand pending acquires occupy no host thread.
 *
 *   client, resource, ttl_ms, options_json  as for lock_acquire.
 *   cb         the completion callback; required.
 *   user_data  passed to cb untouched; may be NULL.
 *   out_op     optional (NULL is fine): receives the operation's handle, for
 *              lock_cancel. It is written before cb can run. It is valid
 *              until the result is decided (just before cb runs); after that
 *              lock_cancel returns LOCK_INVALID_HANDLE.
 *   err        optional.
 *
 * Returns LOCK_OK (accepted), LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT
 * (including a NULL cb) or LOCK_INTERNAL.
 */
int32_t lock_acquire_async(uint64_t client, const char *resource, int64_t ttl_ms,
                           const char *options_json, lock_callback cb, void *user_data,
                           uint64_t *out_op, char **err);

/*
 * lock_extend_async -- lock_extend without blocking. On LOCK_OK, cb is called
 * exactly once with lock_extend's status (or LOCK_CANCELED if the client is
 * freed first) and the lock's handle.
 *
 * Returns LOCK_OK (accepted), LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT
 * (ttl out of range, NULL cb) or LOCK_INTERNAL.
 */
int32_t lock_extend_async(uint64_t lock, int64_t ttl_ms, lock_callback cb, void *user_data, char **err);

/*
 * lock_release_async -- lock_release without blocking. On LOCK_OK, cb is
 * called exactly once with lock_release's status (or LOCK_CANCELED if the
 * client is freed first) and the lock's handle.
 *
 * Returns LOCK_OK (accepted), LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT
 * (NULL cb) or LOCK_INTERNAL.
 */
int32_t lock_release_async(uint64_t lock, lock_callback cb, void *user_data, char **err);

/*
 * lock_cancel -- cancels a pending lock_acquire_async or lock_inspect_async.
 * Its callback then reports LOCK_CANCELED promptly (within about one
 * node_timeout_ms), and no key is left behind on any node (a lock granted
 * at that moment is released again; with "token", see lock_acquire).
 *
 *   op  an operation handle from the out_op of lock_acquire_async or
 *       lock_inspect_async.
 *
 * Returns LOCK_OK (canceled: the callback will report LOCK_CANCELED),
 * LOCK_INVALID_HANDLE (unknown handle, or the operation's result was already
 * decided: its callback reports that result) or LOCK_INTERNAL.
 */
int32_t lock_cancel(uint64_t op);

/*
 * lock_on_lost -- registers the lock's loss callback: called at most once, on
 * a library thread, with status LOCK_LOST and the lock's handle, when the
 * library learns that the lock is no longer held (a background extension
 * could not keep a quorum, an extend found it gone, or its validity ran out).
 * If the lock is already lost, it is called at once (on a library thread).
 * It is not called after a successful release or after lock_free. One per
 * lock: a second call replaces the first; cb NULL removes it.
 *
 *   lock       a lock handle.
 *   cb         the callback, or NULL.
 *   user_data  passed to cb untouched.
 *   err        optional.
 *
 * Returns LOCK_OK, LOCK_INVALID_HANDLE or LOCK_INTERNAL.
 */
int32_t lock_on_lost(uint64_t lock, lock_callback cb, void *user_data, char **err);

/*
 * lock_client_on_lost -- registers the client's loss callback: called once
 * for each lock of the client that is lost while it is registered, on a
 * library thread, with status LOCK_LOST and the lock's handle, besides the
 * lock's own lock_on_lost callback (the same losses: never after a successful
 * release or after lock_free). For a host that watches every lock (a log line
 * per loss) without a call per lock. One per client: a second call replaces
 * the first; cb NULL removes it. The callback may run until lock_free(client)
 * returns. (Extension: not in the version-1 contract; an addition.)
 *
 *   client     a client handle.
 *   cb         the callback, or NULL.
 *   user_data  passed to cb untouched.
 *   err        optional.
 *
 * Returns LOCK_OK, LOCK_INVALID_HANDLE or LOCK_INTERNAL.
 */
int32_t lock_client_on_lost(uint64_t client, lock_callback cb, void *user_data, char **err);

/*
 * REPORTS (extension: not in the version-1 contract; an addition)
 *
 * What the library does, as it does it, for the program's own metrics,
 * traces and logs (OpenTelemetry in a JVM): the engine's reports, the same
 * ones Node's and Python's hosts map (REPORT actions, core/hostabi/
 * PROTOCOL.md), one callback call per report. They carry no token and no
 * password. Without a callback the engine makes none (no cost).
 *
 * what (LOCK_REPORT_*), and which fields mean something:
 *   ACQUIRE_START  an acquire (or campaign) started.
 *   ACQUIRE_END    it ended: outcome, attempts (the rounds it sent),
 *                  duration_us (from its start, waits included).
 *   WAIT_START     the acquire starts waiting (refused or failed with wait
 *                  left, or queued behind one of the same client).
 *   WAIT_END       it stops waiting: duration_us (how long it waited).
 *   HAND_OFF       the release of lock hands the key to a waiter of the
 *                  same client.
 *   EXTEND_START   an extension of lock started (the caller's, or an
 *                  auto-extension: then op is 0 and no call waits for it).
 *   EXTEND_END     it ended: outcome, duration_us.
 *   RELEASE_START, RELEASE_END  the same for a release.
 *   LOST           lock was lost (outcome LOCK_LOST).
 *   HOLD           lock's holding ended: outcome LOCK_OK (released),
 *                  LOCK_LOST or LOCK_CANCELED (forgotten unreleased);
 *                  duration_us: how long it was held.
 *   NODE           one request to node `node` (its index in the config's
 *                  "nodes") ended: outcome a LOCK_NODE_*, duration_us from
 *                  its sending.
 *   FENCE          the fence round of an acquire ended: outcome,
 *                  duration_us.
 * An unknown `what` (a later library's) is to be skipped.
 *
 * Whose report it is:
 *   op    the op handle (*out_op) of the lock_acquire_async or
 *         lock_campaign_async whose operation it is about, until that
 *         operation ended (its ACQUIRE_END; a node's reply after that is
 *         nobody's); else 0 (a synchronous lock_acquire's, the library's
 *         own). The handle is written to *out_op when the call returns,
 *         possibly after the operation's first reports: a program that
 *         matches them keeps its own lock around the call and the lookup.
 *   lock  the lock handle it is about: an extension's or a release's (with
 *         its NODE reports), a loss, a holding's end, a hand-off; 0 when
 *         none (an acquire's, whose handle comes with its completion) or
 *         the handle is freed. An auto-extension is lock's, with call 0.
 * The outcome of an operation is the status its call returns or its
 * callback gets; the reports come before it.
 */
#define LOCK_REPORT_ACQUIRE_START 1
#define LOCK_REPORT_ACQUIRE_END 2
#define LOCK_REPORT_WAIT_START 3
#define LOCK_REPORT_WAIT_END 4
#define LOCK_REPORT_HAND_OFF 5
#define LOCK_REPORT_EXTEND_START 6
#define LOCK_REPORT_EXTEND_END 7
#define LOCK_REPORT_RELEASE_START 8
#define LOCK_REPORT_RELEASE_END 9
#define LOCK_REPORT_LOST 10
#define LOCK_REPORT_HOLD 11
#define LOCK_REPORT_NODE 12
#define LOCK_REPORT_FENCE 13

/* The outcomes of LOCK_REPORT_NODE. */
#define LOCK_NODE_OK 0          /* the node answered (a refusal is an answer) */
#define LOCK_NODE_TIMEOUT 1     /* no answer within node_timeout_ms */
#define LOCK_NODE_CONNECTION 2  /* the connection failed, closed or was refused */
#define LOCK_NODE_ERROR_REPLY 3 /* an error reply (READONLY, OOM, a WAIT shortfall...) */

/* One report; valid during the callback only (copy what you keep). */
typedef struct lock_report {
	uint8_t what;        /* LOCK_REPORT_* */
	uint8_t outcome;     /* a LOCK_* status; for LOCK_REPORT_NODE a LOCK_NODE_* */
	uint16_t node;       /* LOCK_REPORT_NODE */
	uint32_t attempts;   /* LOCK_REPORT_ACQUIRE_END */
	int64_t duration_us; /* see above; by the library's monotonic clock */
	uint64_t op;         /* see above, or 0 */
	uint64_t lock;       /* see above, or 0 */
	uint8_t call;        /* 1: about an operation the program called (an acquire,
	                        an extension, a release, synchronous or not); 0: the
	                        library's own (an auto-extension, a handshake, a node's
	                        reply that came after its operation ended) */
	uint8_t reserved[7]; /* 0 */
} lock_report;

typedef void (*lock_report_callback)(void *user_data, const lock_report *report);

/*
 * lock_client_set_report -- sets the client's report callback (cb NULL
 * removes it). It is called for every report of the client from now on, in
 * the order the library made them, one call at a time, on a library thread
 * (or on the thread of a synchronous call of the client, during that call),
 * while the client's I/O waits for it: it must return quickly, and must not
 * call liblock functions on this client, its locks or its operations (they
 * would wait for the callback: a deadlock). Copy the record and return.
 * An operation called before the callback was set may be reported as the
 * library's own (call 0, op and lock 0), and a lock acquired then has lock
 * 0 in its later reports. When lock_client_set_report
 * returns, the callback it replaced is not running and will not start. One per client; it may run until
 * lock_free(client) returns (the releases of the client's last locks).
 *
 *   client     a client handle.
 *   cb         the callback, or NULL.
 *   user_data  passed to cb untouched.
 *   err        optional.
 *
 * Returns LOCK_OK, LOCK_INVALID_HANDLE or LOCK_INTERNAL.
 */
int32_t lock_client_set_report(uint64_t client, lock_report_callback cb, void *user_data, char **err);

/*
 * lock_info -- describes a lock as a JSON object, e.g.
 *   {"handle":7,"client":1,"resource":"jobs","key":"app:jobs",
 *    "token":"...","ttl_ms":10000,"validity_ms":9893,"auto_extend":false,
 *    "lost":false,"released":false,"fence":0,"reentered":false,
 *    "mode":"exclusive"}
 * validity_ms is what remains by the local monotonic clock (0 when expired,
 * lost or released). fence is the lock's fencing token (an integer >= 1)
 * when acquired with "fence", else 0. reentered is true when the acquire
 * (with "token") re-entered a lock that token already held. mode is
 * "exclusive" (the mutex), "read" or "write" (the acquire's "mode"). Readers should
 * ignore keys they do not know: later additions may add some.
 *
 *   lock       a lock handle.
 *   info_json  receives the JSON on LOCK_OK (free with lock_string_free);
 *              required.
 *   err        optional.
 *
 * Returns LOCK_OK, LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT (NULL
 * info_json) or LOCK_INTERNAL.
 */
int32_t lock_info(uint64_t lock, char **info_json, char **err);

/*
 * lock_inspect_callback -- the completion callback of lock_inspect_async.
 *
 *   user_data        the pointer given to lock_inspect_async, untouched.
 *   status           the final status: LOCK_OK, LOCK_UNAVAILABLE,
 *                    LOCK_CANCELED (lock_cancel, or the client was freed)
 *                    or LOCK_INTERNAL.
 *   inspection_json  on LOCK_OK, lock_inspect's JSON; else NULL.
 *   err              NULL on LOCK_OK, else a message.
 *
 * Both strings are valid only during the call (copy them to keep them; do
 * not free them). Called exactly once, on a library thread, as
 * lock_callback.
 */
typedef void (*lock_inspect_callback)(void *user_data, int32_t status, const char *inspection_json,
                                      const char *err);

/*
 * lock_inspect -- looks at a resource without taking it, blocking the
 * calling thread for one round to every node (each bounded by
 * node_timeout_ms): whether a quorum holds it, how long it certainly stays
 * held, and the holder's owner label.
 *
 *   client           a client handle.
 *   resource         the resource name, 1..1024 bytes of UTF-8; required.
 *   inspection_json  receives a JSON object on LOCK_OK (free it with
 *                    lock_string_free); set to NULL on failure; required.
 *   err              optional.
 *
 * The JSON, e.g.
 *   {"held":true,"validity_ms":9950,"owner":"worker-7","nodes":[
 *     {"node":0,"addr":"127.0.0.1:7001","locked":true,"holder":true,
 *      "owner":"worker-7","ttl_ms":9990,"error":null}, ...]}
 *   held         one value holds the key on a quorum of nodes (a lock of
 *                any client, or a plain SET NX by another program).
 *   validity_ms  how long it certainly stays held: the quorum-th longest
 *                remaining ttl among the nodes holding it, less the time
 *                the round took and the drift allowance; -1 when the key
 *                has no expiry (set without PX: held until deleted); 0
 *                when not held.
 *   owner        the holder's label (the "owner" of the client that took
 *                it); "" when not held, when it set none, or when another
 *                program set the key.
 *   nodes        one entry per configured node, in configuration order:
 *     node       its index (0-based) in the configuration's "nodes".
 *     addr       "host:port" or the socket path (never a password).
 *     locked     the key exists there.
 *     holder     its value there is the holder's.
 *     owner      the label in its value there ("" if none).
 *     ttl_ms     its remaining ttl there; -1 when none (no expiry, or no
 *                key); 0 when the node failed.
 *     error      null when the node answered, else why it failed.
 *   Readers should ignore keys they do not know.
 *
 * With up to N - quorum nodes failing it still answers (their entries say
 * why). Thread-safe. Freeing the client during the call makes it return
 * LOCK_CANCELED.
 *
 * Returns LOCK_OK, LOCK_UNAVAILABLE (too many nodes failed to tell, and no
 * quorum showed a holder), LOCK_INVALID_HANDLE (client unknown, freed, or
 * not a client), LOCK_INVALID_ARGUMENT (resource NULL, empty, longer than
 * 1024 bytes or not UTF-8; inspection_json NULL -- the message names
 * which), LOCK_CANCELED or LOCK_INTERNAL.
 */
int32_t lock_inspect(uint64_t client, const char *resource, char **inspection_json, char **err);

/*
 * lock_inspect_ex -- lock_inspect with options: options_json NULL (or {})
 * inspects the mutex as lock_inspect does; {"permits": N} (N 1..1024)
 * inspects the counting semaphore of N permits on resource. Its JSON then
 * also has
 *   permits   N.
 *   in_use    how many permits a quorum holds.
 *   holders   one entry per held permit, by slot:
 *     slot         the permit's slot, 0..N-1.
 *     owner        its holder's label ("" if none).
 *     validity_ms  how long it certainly stays held (-1: no expiry).
 * and held, validity_ms and owner are the first holder's; each node's
 * "locked" says whether any slot exists there. {"mode": "read"} or
 * {"mode": "write"} (either) inspects the read-write lock on resource:
 * held, validity_ms, owner and nodes are its writer's, and
 *   readers   one entry per reader held on a quorum: owner, validity_ms.
 * A bad "permits" (0, negative, above 1024, not an integer), a bad "mode",
 * both keys together, or an unknown key is LOCK_INVALID_ARGUMENT naming it;
 * otherwise as lock_inspect.
 */
int32_t lock_inspect_ex(uint64_t client, const char *resource, const char *options_json, char **inspection_json, char **err);

/*
 * lock_inspect_async -- lock_inspect without blocking: validates the
 * arguments and returns at once. If it returns LOCK_OK, cb is called exactly
 * once, later, on a library thread, with lock_inspect's status and JSON (or
 * LOCK_CANCELED). If it returns anything else, cb is never called.
 *
 *   client, resource  as for lock_inspect.
 *   cb         the completion callback; required.
 *   user_data  passed to cb untouched; may be NULL.
 *   out_op     optional: receives the operation's handle, for lock_cancel,
 *              as lock_acquire_async's (written before cb can run; valid
 *              until the result is decided).
 *   err        optional.
 *
 * (The completion queue below carries lock_callback completions only: a
 * host on the queue passes its own lock_inspect_callback here.)
 *
 * Returns LOCK_OK (accepted), LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT
 * (as lock_inspect's, or a NULL cb) or LOCK_INTERNAL.
 */
int32_t lock_inspect_async(uint64_t client, const char *resource, lock_inspect_callback cb, void *user_data,
                           uint64_t *out_op, char **err);

/*
 * LEADER ELECTION (addition to the version-1 contract)
 *
 * An election is named like a resource (1..1024 bytes of UTF-8) but never
 * collides with a lock of the same name: its key is the name's key + a
 * 0xFF byte + "elect". A leader holds that key on a quorum (a Redlock
 * lock, always fenced and auto-extended); its term is the lock's fence,
 * strictly greater than every earlier leader's. See README.md, "Leader
 * election", for the safety argument.
 */

/*
 * lock_campaign -- campaigns in the election `name`, publishing `value` to
 * observers, blocking the calling thread until this client leads.
 *
 *   client        a client handle.
 *   name          the election's name, 1..1024 bytes of UTF-8; required.
 *   value         what observers see while this client leads (e.g. its
 *                 address), 1..4096 bytes of UTF-8; required.
 *   ttl_ms        the leadership's lease, extended in the background about
 *                 every ttl/3 until released; a leader that stops
 *                 extending (its process died) is replaced once it runs
 *                 out. 1..86400000, and at least 3 node timeouts.
 *   options_json  NULL or a JSON object: {"wait_ms": N} bounds the wait
 *                 (0: one attempt; LOCK_NOT_ACQUIRED when another leads).
 *                 Without it the call waits until it leads or the client is
 *                 freed (LOCK_CANCELED). Unknown keys are refused.
 *   out_lock      receives the leadership's lock handle on LOCK_OK;
 *                 required. lock_release resigns (observers learn it at
 *                 once); lock_on_lost is called if the leadership is lost;
 *                 lock_info's "fence" is the term, and it has "election"
 *                 (the name) and "value"; lock_free resigns and forgets.
 *   err           optional.
 *
 * Returns LOCK_OK, LOCK_NOT_ACQUIRED, LOCK_UNAVAILABLE, LOCK_CANCELED,
 * LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT (name, value, ttl_ms,
 * options/wait_ms or out_lock: the message names which) or LOCK_INTERNAL.
 * Nothing is left on the nodes when it fails.
 */
int32_t lock_campaign(uint64_t client, const char *name, const char *value, int64_t ttl_ms,
                      const char *options_json, uint64_t *out_lock, char **err);

/*
 * lock_campaign_async -- lock_campaign without blocking: the arguments are
 * checked at once; on LOCK_OK cb is called exactly once, later, on a
 * library thread, with lock_campaign's status and the lock handle.
 * lock_cancel(*out_op) ends the wait (LOCK_CANCELED). out_op is optional.
 */
int32_t lock_campaign_async(uint64_t client, const char *name, const char *value, int64_t ttl_ms,
                            const char *options_json, lock_callback cb, void *user_data, uint64_t *out_op,
                            char **err);

/*
 * lock_leader -- reads the election's leader (one round to every node).
 *
 *   leader_json  receives, on LOCK_OK, a JSON object (free it with
 *                lock_string_free); required:
 *                  {"leader":true,"name":"svc","value":"10.0.0.2:8080",
 *                   "term":7,"owner":"host-b","validity_ms":6500}
 *                or {"leader":false,"name":"svc",...} when no leader is
 *                valid on a quorum. validity_ms: how long the leader
 *                certainly keeps leading unless it resigns.
 *
 * Returns LOCK_OK, LOCK_UNAVAILABLE, LOCK_CANCELED (client freed),
 * LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT (name, leader_json) or
 * LOCK_INTERNAL.
 */
int32_t lock_leader(uint64_t client, const char *name, char **leader_json, char **err);

/*
 * lock_observe -- calls cb with every leader change of the election: first
 * the leader now (or {"leader":false}), then each change once, in order (a
 * new term, a resignation, a loss), pushed by pub/sub with polling as the
 * fallback, so no change is missed for long.
 *
 *   options_json  NULL or {"poll_ms": N}: how often to read the election
 *                 when pub/sub says nothing (default 1000).
 *   cb            called on one library thread, one call at a time, with
 *                 LOCK_OK and lock_leader's JSON (valid during the call);
 *                 once with LOCK_CANCELED and a NULL JSON if the client is
 *                 freed first. Required.
 *   out_watch     receives the watch's handle; required. lock_free(watch)
 *                 stops it: when lock_free returns no callback is running
 *                 or will start (called from the callback itself, that
 *                 call finishes and none follows).
 *
 * Returns LOCK_OK, LOCK_INVALID_HANDLE, LOCK_INVALID_ARGUMENT (name,
 * options/poll_ms, cb, out_watch), LOCK_CANCELED or LOCK_INTERNAL.
 */
int32_t lock_observe(uint64_t client, const char *name, const char *options_json, lock_inspect_callback cb,
                     void *user_data, uint64_t *out_watch, char **err);

/*
 * COMPLETION QUEUE (extension, not part of the version-1 contract)
 *
 * For hosts with an event loop that can run their code on one thread only
 * (Node through koffi): instead of a callback that hands every completion to
 * that thread and waits there, pass lock_queue_callback as the `cb` of the
 * asynchronous functions and of lock_on_lost. It copies the completion into
 * a process-wide queue and returns at once. The host learns that the queue
 * went from empty to non-empty in either (or both) of two ways, then calls
 * lock_queue_drain until it returns less than `max`:
 *   - a wake-up function set with lock_queue_set_wakeup, called on the
 *     library thread that queued the completion (koffi relays it to the
 *     main thread), or
 *   - the read end of a pipe, lock_queue_fd(), watched by the event loop:
 *     one byte is written per empty->non-empty transition; read and discard
 *     the bytes before draining.
 * No completion is left without a wake-up; a wake-up may find the queue
 * already drained.
 *
 *   lock_completion  one completion, as the callback would have received it;
 *                    `err` is a copy the caller owns: free it with
 *                    lock_string_free (NULL on LOCK_OK). `reserved` is 0.
 *   lock_queue_callback  a lock_callback; thread-safe. It never waits for the
 *                    host, except inside the wake-up function if the host's
 *                    function waits (it waits for memory if malloc fails).
 *   lock_queue_drain moves up to `max` of the oldest completions into `out`
 *                    and returns how many; 0 for a NULL `out` or max <= 0.
 *                    Thread-safe; each completion is returned exactly once.
 *                    Pure C: it does not enter the Go runtime.
 *   lock_queue_set_wakeup  sets (NULL: removes) the wake-up function. It may
 *                    call any function of this library.
 *   lock_queue_fd    the pipe's read end (non-blocking, close-on-exec),
 *                    created on the first call; the same on every call; -1
 *                    if no pipe could be created. Do not close it.
 *
 * There is one queue per process: one host event loop should own it.
 */
typedef struct lock_completion {
	void *user_data;
	int32_t status;
	int32_t reserved;
	uint64_t handle;
	char *err;
} lock_completion;

int32_t lock_queue_fd(void);
void lock_queue_callback(void *user_data, int32_t status, uint64_t handle, const char *err);
int32_t lock_queue_drain(lock_completion *out, int32_t max);
void lock_queue_set_wakeup(void (*fn)(void));

/*
 * THE ENGINE (extension of ABI v1)
 *
 * An I/O-free Redlock engine for hosts that own their sockets and one timer
 * (an event loop): the host hands in one event per call, and the engine
 * answers with the actions to carry out (open a connection to a node, write
 * these bytes, close it, arm the timer, settle an operation, report a
 * loss). The byte encoding of events and actions is
 * core/hostabi/PROTOCOL.md (its source of truth:
 * core/hostabi/spec/protocol.json); liblock.wasm exports the same
 * interface. No call blocks, sleeps, starts a thread or calls back.
 *
 * The encoding has a version of its own, LOCK_ENGINE_PROTOCOL_VERSION,
 * which lock_engine_protocol_version returns; a host checks it before its
 * first lock_engine_new. Version 2 carries an acquire's fence and re-entry
 * in its DONE action; version 1 (a library without
 * lock_engine_protocol_version) sent them in a FENCE action before the
 * DONE. Version 3 added semaphores, read-write and multi-resource locks,
 * elections and REPORT; version 4 ends every error record with the bound
 * an out-of-range argument crossed (bound, limit, unit, got) and lists a
 * read-write lock's readers in INSPECTED. The functions of ABI v1 above
 * are the same in all.
 *
 * Engine handles are a namespace of their own: only the lock_engine_*
 * functions take them (lock_free does not). Like every handle they are
 * never 0, never reused and below 2^53.
 *
 * Threads: different engines are independent. One engine must not be
 * stepped by two threads at once (the library serializes such calls, but
 * the order of the two events is then arbitrary); lock_engine_free may be
 * called from any thread.
 *
 *   lock_engine_new   makes an engine from config_json, exactly
 *                     lock_client_new's JSON, parsed by the same code,
 *                     less the tls_* keys (unknown here: the host makes
 *                     the TLS connections, with its own settings; the
 *                     OPEN action says TLS, skip-verify and server name).
 *                     Ownership: config_json is read during the call only;
 *                     *out_engine is the caller's handle (free it with
 *                     lock_engine_free); *err as everywhere (NULL allowed;
 *                     free with lock_string_free). LOCK_INVALID_ARGUMENT for
 *                     a NULL config_json or out_engine, or a bad config (the
 *                     message names the key). Opens no connection.
 *   lock_engine_step  hands the engine the event in[0..in_len) (in_len 0:
 *                     no event, only collect pending actions) and writes
 *                     actions into out[0..out_cap). Returns the number of
 *                     bytes written (0: nothing pending), or a negative
 *                     status, and then nothing was done:
 *                       -LOCK_INVALID_HANDLE    unknown or freed engine
 *                       -LOCK_INVALID_ARGUMENT  NULL out, NULL in with
 *                                               in_len > 0, in_len above
 *                                               LOCK_ENGINE_MAX_EVENT, a
 *                                               malformed event (truncated,
 *                                               unknown kind or flags, a
 *                                               length past its end, bytes
 *                                               after it), or out_cap below
 *                                               LOCK_ENGINE_MIN_OUT
 *                       -LOCK_INTERNAL          a bug (never a crash)
 *                     When more actions are pending than fit, call again
 *                     with in_len 0 until it returns 0 (a WRITE that does
 *                     not fit is split into WRITEs to the same connection).
 *                     Ownership: in is read during the call only; out is
 *                     the caller's buffer; nothing is allocated for the
 *                     caller.
 *   lock_engine_free  drops the engine at once: no I/O, keys it held stay
 *                     until their ttl (send the CLOSE event first and wait
 *                     for the CLOSED action for an orderly end). Returns
 *                     LOCK_OK, or LOCK_INVALID_HANDLE for an unknown or
 *                     already freed engine.
 */
#define LOCK_ENGINE_MIN_OUT   65536        /* smallest out_cap */
#define LOCK_ENGINE_MAX_EVENT (1048576 + 64) /* largest in_len */
#define LOCK_ENGINE_PROTOCOL_VERSION 5     /* the encoding this header's PROTOCOL.md describes */

/* lock_engine_protocol_version -- returns the engine protocol's version the
 * library speaks (LOCK_ENGINE_PROTOCOL_VERSION). Thread-safe; cannot fail. */
int32_t lock_engine_protocol_version(void);

int32_t lock_engine_new(const char *config_json, uint64_t *out_engine, char **err);
int64_t lock_engine_step(uint64_t engine, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap);
int32_t lock_engine_free(uint64_t engine);

/*
 * Debugging aids for leak tests (extensions, not part of the contract; their
 * meaning may change):
 *   lock_debug_goroutines  the number of goroutines in the embedded Go runtime.
 *   lock_debug_handles     the number of live handles (clients, locks, ops).
 *   lock_debug_blocking    the number of lock_acquire calls under way that
 *                          have found their client (freeing the client now
 *                          ends them with LOCK_CANCELED).
 *   lock_debug_panic       panics inside the library on purpose and returns
 *                          LOCK_INTERNAL with the message in *err (optional),
 *                          showing that a panic never crosses the boundary.
 */
int64_t lock_debug_goroutines(void);
int64_t lock_debug_handles(void);
int64_t lock_debug_blocking(void);
int32_t lock_debug_panic(char **err);

#ifdef __cplusplus
}
#endif

#endif /* LIBLOCK_H */
