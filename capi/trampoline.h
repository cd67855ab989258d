// Internal to capi: the declarations the Go side needs. The public header is
// liblock.h.
#ifndef LIBLOCK_TRAMPOLINE_H
#define LIBLOCK_TRAMPOLINE_H
#include <stdint.h>

#ifdef LIBLOCK_VERSION /* -DLIBLOCK_VERSION=$(cat VERSION): the release builds (.ci/dist/build.sh) */
#define LIBLOCK_STR_(x) #x
#define LIBLOCK_STR(x) LIBLOCK_STR_(x)
#define LIBLOCK_VERSION_STRING LIBLOCK_STR(LIBLOCK_VERSION)
#else
#define LIBLOCK_VERSION_STRING "0.1.0" /* equal to VERSION: make test-dist checks it */
#endif

typedef void (*lock_callback)(void *user_data, int32_t status, uint64_t handle, const char *err);

// user_data travels through Go as an integer: Go's stack copier kills the
// process on "pointers" below 4096, and callers may pass small integers.
void liblock_invoke(lock_callback cb, uintptr_t user_data, int32_t status,
                    uint64_t handle, const char *err);
typedef void (*lock_inspect_callback)(void *user_data, int32_t status, const char *inspection_json,
                                      const char *err);
void liblock_invoke_inspect(lock_inspect_callback cb, uintptr_t user_data, int32_t status,
                            const char *inspection_json, const char *err);
const char *lock_version(void);
#endif
