package io.github.liblock;

import com.sun.jna.Callback;
import com.sun.jna.CallbackThreadInitializer;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The C ABI (capi/liblock.h) through JNA direct mapping. Strings go in as NUL-terminated UTF-8
 * byte arrays; out-parameters (handles, char **) are long[1]; messages are read as UTF-8 and
 * freed with lock_string_free. Callbacks carry an id in user_data, looked up in {@link #PENDING}.
 */
final class Lib {
    private Lib() {}

    static {
        String path = System.getProperty("liblock.path", System.getenv("LIBLOCK_PATH"));
        NativeLibrary lib;
        try {
            if (path == null || path.isEmpty()) {
                // The jar's own linux-x86-64/liblock.so (JNA's resource prefix) first: "liblock.so"
                // is a common name, and another library of that name may be on the system's path.
                try {
                    path = Native.extractFromResourcePath("lock", Lib.class.getClassLoader()).getAbsolutePath();
                } catch (java.io.IOException e) {
                    path = "lock"; // not in the jar for this platform: the system's library path
                }
            }
            lib = NativeLibrary.getInstance(path);
        } catch (UnsatisfiedLinkError e) {
            throw new UnsatisfiedLinkError("liblock: cannot load " + path + " (this jar carries liblock.so for linux-x86-64 "
                    + "with glibc; elsewhere build it and set LIBLOCK_PATH): " + e.getMessage());
        }
        Native.register(Lib.class, lib);
        if (lock_abi_version() != Spec.ABI_VERSION) {
            throw new UnsatisfiedLinkError("liblock: " + lib.getFile() + " speaks ABI " + lock_abi_version()
                    + ", this binding " + Spec.ABI_VERSION);
        }
    }

    static native int lock_abi_version();
    static native String lock_version();
    static native void lock_string_free(Pointer s);
    static native int lock_client_new(byte[] config, long[] outClient, long[] err);
    static native int lock_acquire(long client, byte[] resource, long ttlMs, byte[] options, long[] outLock, long[] err);
    static native int lock_acquire_async(long client, byte[] resource, long ttlMs, byte[] options, Done cb, Pointer user, long[] outOp, long[] err);
    static native int lock_extend(long lock, long ttlMs, long[] err);
    static native int lock_extend_async(long lock, long ttlMs, Done cb, Pointer user, long[] err);
    static native int lock_release(long lock, long[] err);
    static native int lock_release_async(long lock, Done cb, Pointer user, long[] err);
    static native int lock_free(long handle);
    static native int lock_cancel(long op);
    static native int lock_on_lost(long lock, Done cb, Pointer user, long[] err);
    static native int lock_info(long lock, long[] json, long[] err);
    static native int lock_inspect_ex(long client, byte[] resource, byte[] options, long[] json, long[] err);
    static native int lock_campaign_async(long client, byte[] name, byte[] value, long ttlMs, byte[] options, Done cb, Pointer user, long[] outOp, long[] err);
    static native int lock_leader(long client, byte[] name, long[] json, long[] err);
    static native int lock_observe(long client, byte[] name, byte[] options, TextDone cb, Pointer user, long[] outWatch, long[] err);
    static native int lock_client_on_lost(long client, Done cb, Pointer user, long[] err);
    static native int lock_client_set_report(long client, Report cb, Pointer user, long[] err);
    static native long lock_debug_handles();
    static native long lock_debug_goroutines();
    static native long lock_debug_blocking();

    /** lock_callback. */
    interface Done extends Callback {
        void invoke(Pointer user, int status, long handle, Pointer err);
    }

    /** lock_inspect_callback (and lock_observe's). */
    interface TextDone extends Callback {
        void invoke(Pointer user, int status, Pointer json, Pointer err);
    }

    /** lock_report_callback: the record is read in place (Telemetry.report), valid during the call. */
    interface Report extends Callback {
        void invoke(Pointer user, Pointer report);
    }

    /** The report consumers of the clients with telemetry, by id. */
    static final Map<Long, Consumer<Pointer>> REPORTS = new ConcurrentHashMap<>();

    static final Report REPORT = (user, report) -> {
        Consumer<Pointer> c = REPORTS.get(Pointer.nativeValue(user));
        if (c != null) c.accept(report);
    };

    /** A completion: the callback's arguments, strings copied. */
    record Result(int status, long handle, String text, String err) {}

    /** Callbacks waiting for their completion (or, for losses and observers, every one), by id. */
    static final Map<Long, Consumer<Result>> PENDING = new ConcurrentHashMap<>();
    private static final AtomicLong IDS = new AtomicLong();
    static final AtomicLong REPORT_IDS = new AtomicLong();

    static Pointer register(Consumer<Result> c) {
        long id = IDS.incrementAndGet();
        PENDING.put(id, c);
        return new Pointer(id);
    }

    /** For the asynchronous calls: called once, so the entry goes. */
    static final Done DONE = (user, status, handle, err) -> {
        Consumer<Result> c = PENDING.remove(Pointer.nativeValue(user));
        if (c != null) c.accept(new Result(status, handle, null, str(err)));
    };
    /** For lock_on_lost: the entry stays until its lock is freed. */
    static final Done LOST = (user, status, handle, err) -> {
        Consumer<Result> c = PENDING.get(Pointer.nativeValue(user));
        if (c != null) c.accept(new Result(status, handle, null, str(err)));
    };
    static final TextDone TEXT = (user, status, json, err) -> {
        Consumer<Result> c = PENDING.get(Pointer.nativeValue(user));
        if (c != null) c.accept(new Result(status, 0, str(json), str(err)));
    };

    static {
        // Library threads stay attached to the JVM (as daemons) between callbacks: attaching a
        // thread costs more than the callback.
        for (Callback cb : new Callback[] {DONE, LOST, TEXT, REPORT}) {
            Native.setCallbackThreadInitializer(cb, new CallbackThreadInitializer(true, false, "liblock-callback"));
        }
    }

    static byte[] c(String s) {
        if (s == null) return null;
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[b.length + 1];
        System.arraycopy(b, 0, out, 0, b.length);
        return out;
    }

    static String str(Pointer p) {
        return p == null ? null : p.getString(0, "UTF-8");
    }

    /** Reads and frees a string the library handed out through an out-parameter. */
    static String take(long[] out) {
        if (out[0] == 0) return null;
        Pointer p = new Pointer(out[0]);
        try {
            return str(p);
        } finally {
            lock_string_free(p);
        }
    }
}
