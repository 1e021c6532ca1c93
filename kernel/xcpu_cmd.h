/* SPDX-License-Identifier: MIT */
/* `cpus ping` and `cpus stats`: requests to each AP through its ring. */
#ifndef KERNEL_XCPU_CMD_H
#define KERNEL_XCPU_CMD_H

/* argv[0] is "ping" or "stats"; 0, or -1 after an error line. */
int cpus_ping(int argc, char **argv);
int cpus_stats(int argc, char **argv);
/* argv[0] is "sleep" or "busy", then CPU and MS; 0, or -1 after an error line. */
int cpus_sleep(int argc, char **argv);
int cpus_busy(int argc, char **argv);
/* argv[0] is "irq", then a vector; 0, or -1 after an error line. */
int cpus_irq(int argc, char **argv);
/* argv[0] is "print", then an AP: it tries to print (cpu_rules.h). */
int cpus_print(int argc, char **argv);

#endif
