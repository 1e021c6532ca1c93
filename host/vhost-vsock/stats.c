// SPDX-License-Identifier: MIT
/* Counters and logging shared by every part of the back end. */
#include <stdarg.h>
#include <time.h>

#include "stats.h"

struct stats stats;
int vv_verbose;

void stats_dump(FILE *f)
{
#define STATS_PRINT(name) fprintf(f, "  %-20s %llu\n", #name, (unsigned long long)stats.name);
	fprintf(f, "ringside-vhost-vsock counters:\n");
	STATS_LIST(STATS_PRINT)
#undef STATS_PRINT
	fflush(f);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void vv_log(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ringside-vhost-vsock: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void vv_vviolation(uint64_t *counter, const char *fmt, va_list ap)
{
	/* A hostile guest can trigger these in a loop: print 10 per second. */
	static uint64_t window;
	static unsigned printed, suppressed;
	uint64_t now = now_ms();

	(*counter)++;
	if (now / 1000 != window) {
		if (suppressed)
			vv_log("%u more violations suppressed", suppressed);
		window = now / 1000;
		printed = 0;
		suppressed = 0;
	}
	if (printed >= 10) {
		suppressed++;
		return;
	}
	printed++;
	fprintf(stderr, "ringside-vhost-vsock: violation: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void vv_violation(uint64_t *counter, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vv_vviolation(counter, fmt, ap);
	va_end(ap);
}

void stats_ring_violation(const char *fmt, va_list ap)
{
	vv_vviolation(&stats.ring_errors, fmt, ap);
}
