// Internal to capi: the completion queue's declarations (public copies in
// liblock.h, which cgo does not include).
#ifndef LIBLOCK_QUEUE_H
#define LIBLOCK_QUEUE_H
#include <stdint.h>

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
#endif
