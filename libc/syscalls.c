// SPDX-License-Identifier: MIT
/*
 * The system calls newlib needs (built with
 * --disable-newlib-supplied-syscalls): the console for fds 0-2, the kernel
 * heap for sbrk, the TSC for time. There are no files and no processes.
 * newlib's x86_64-elf configuration calls them without the leading
 * underscore (MISSING_SYSCALL_NAMES), except _exit; time goes through
 * _gettimeofday and _times.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>

#include "kernel/console.h"
#include "kernel/cpu_rules.h"
#include "kernel/io.h"
#include "kernel/mm.h"
#include "kernel/power.h"
#include "kernel/time.h"

#undef errno
extern int errno;

int write(int fd, const void *buf, size_t len);
int read(int fd, void *buf, size_t len);
int close(int fd);
int fstat(int fd, struct stat *st);
int isatty(int fd);
off_t lseek(int fd, off_t off, int whence);
void *sbrk(ptrdiff_t incr);
void _exit(int status);
int kill(int pid, int sig);
int getpid(void);
int _gettimeofday(struct timeval *tv, void *tz);
clock_t _times(struct tms *t);

/*
 * The console is CPU 0's: an AP's output is dropped and reported
 * (cpu_rules.h), and said written, so stdout keeps no error flag that
 * would silence CPU 0's next lines.
 */
int write(int fd, const void *buf, size_t len)
{
	if (fd != 1 && fd != 2) {
		errno = EBADF;
		return -1;
	}
	if (cpu_may_print())
		console_write(buf, len);
	return (int)len;
}

/* Blocks until at least one byte arrived: only for code outside the poll loop. */
int read(int fd, void *buf, size_t len)
{
	char *p = buf;
	int c;

	if (fd != 0) {
		errno = EBADF;
		return -1;
	}
	if (!len)
		return 0;
	while ((c = console_getc()) < 0)
		cpu_relax();
	*p = (char)c;
	return 1;
}

int close(int fd)
{
	errno = EBADF;
	return -1;
}

int fstat(int fd, struct stat *st)
{
	if (fd < 0 || fd > 2) {
		errno = EBADF;
		return -1;
	}
	st->st_mode = S_IFCHR;
	return 0;
}

int isatty(int fd)
{
	return fd >= 0 && fd <= 2;
}

off_t lseek(int fd, off_t off, int whence)
{
	errno = ESPIPE;
	return -1;
}

void *sbrk(ptrdiff_t incr)
{
	void *p = heap_sbrk(incr);

	if (p == (void *)-1)
		errno = ENOMEM;
	return p;
}

/* exit(N): QEMU's isa-debug-exit carries N out; otherwise power off. */
void _exit(int status)
{
	debug_exit(status);
	power_off();
}

int kill(int pid, int sig)
{
	errno = EINVAL;
	return -1;
}

int getpid(void)
{
	return 1;
}

/* Time since boot; there is no wall clock worth trusting here. */
int _gettimeofday(struct timeval *tv, void *tz)
{
	uint64_t ns = now_ns();

	tv->tv_sec = ns / 1000000000ULL;
	tv->tv_usec = ns % 1000000000ULL / 1000;
	return 0;
}

clock_t _times(struct tms *t)
{
	clock_t ticks = (clock_t)(now_ns() / (1000000000ULL / CLOCKS_PER_SEC));

	t->tms_utime = ticks;
	t->tms_stime = 0;
	t->tms_cutime = 0;
	t->tms_cstime = 0;
	return ticks;
}
