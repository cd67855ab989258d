// C helpers compiled into liblock.so by cgo.
#include <stdint.h>
#include "trampoline.h"

// liblock_invoke calls a caller-supplied callback: Go cannot call a C
// function pointer directly.
void liblock_invoke(lock_callback cb, uintptr_t user_data, int32_t status,
                    uint64_t handle, const char *err) {
	if (cb != 0) {
		cb((void *)user_data, status, handle, err);
	}
}

// liblock_invoke_inspect calls a lock_inspect_callback.
void liblock_invoke_inspect(lock_inspect_callback cb, uintptr_t user_data, int32_t status,
                            const char *inspection_json, const char *err) {
	if (cb != 0) {
		cb((void *)user_data, status, inspection_json, err);
	}
}

// lock_version returns a static string: no Go memory, nothing to free.
const char *lock_version(void) { return LIBLOCK_VERSION_STRING; }
