#include <stdint.h>
int cthread_start(int fd);
int cthread_failed(void);
void cthread_burst(int64_t *out, int n);
