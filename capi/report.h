// Internal to capi: the report stream's C side (liblock.h, "REPORTS").
#ifndef LIBLOCK_REPORT_H
#define LIBLOCK_REPORT_H
#include <stdint.h>

typedef struct lock_report {
	uint8_t what;
	uint8_t outcome;
	uint16_t node;
	uint32_t attempts;
	int64_t duration_us;
	uint64_t op;
	uint64_t lock;
	uint8_t call;
	uint8_t reserved[7];
} lock_report;

typedef void (*lock_report_callback)(void *user_data, const lock_report *report);

void liblock_invoke_report(lock_report_callback cb, uintptr_t user_data, uint8_t what, uint8_t outcome,
                           uint16_t node, uint32_t attempts, int64_t duration_us, uint64_t op, uint64_t lock, uint8_t call);
#endif
