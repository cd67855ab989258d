// The report stream's C helper, compiled into liblock.so by cgo.
#include "report.h"

// liblock_invoke_report builds the record on this stack (Go hands over
// plain values: nothing to allocate or free per report) and calls cb.
void liblock_invoke_report(lock_report_callback cb, uintptr_t user_data, uint8_t what, uint8_t outcome,
                           uint16_t node, uint32_t attempts, int64_t duration_us, uint64_t op, uint64_t lock, uint8_t call) {
	if (cb == 0) {
		return;
	}
	lock_report r = {what, outcome, node, attempts, duration_us, op, lock, call, {0}};
	cb((void *)user_data, &r);
}
