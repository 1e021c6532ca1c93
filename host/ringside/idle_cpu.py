# SPDX-License-Identifier: MIT
"""idle-cpu: how much host CPU an idle ringside guest costs, per idle mode.

Boots the ELF (PVH) with vsock once per configuration, waits for ready, then
reads QEMU's CPU time from /proc/PID/stat over --seconds of idleness. With
idle=poll the guest spins (one host CPU while it can have one); idle=halt
sleeps until an interrupt or the 1 ms tick.
"""

import os
import time

import ringside as rr

from .benchlib import wait_vsock_up
from .cli import Parser, positive_float
from .results import add_options, publish
from .table import Column, Table

PROG = 'idle-cpu'


def cpu_seconds(pid):
    fields = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def main(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n')[0])
    p.add_argument('-t', '--time', '--seconds', dest='seconds',
                   type=positive_float, default=3.0, help='idle time measured (3)')
    add_options(p)
    p.add_argument('configs', nargs='*', default=['irq=msix idle=poll', 'irq=msix idle=halt'],
                   help="kernel command lines to compare (default: 'irq=msix idle=poll' "
                        "'irq=msix idle=halt')")
    opts = p.parse_args(argv)
    if opts.seconds <= 0:
        p.error('--seconds must be positive')
    table = Table([Column('cmdline', 32, left=True), Column('QEMU CPU', 10, '%.0f%%')])
    print('\n'.join(table.head()))
    rows = []
    for cmdline in opts.configs:
        lopts = rr.parse_args(['--boot', 'elf', '--vsock', '--accel', 'tcg',
                               '--cmdline', cmdline])
        with open(os.devnull, 'w') as null, rr.Launch(lopts, 'tcg', qemu_stderr=null) as launch:
            launch.wait_ready()
            wait_vsock_up(launch.opts.vsock_uds, prog=PROG)
            pid = launch.qemu.pid
            c0, t0 = cpu_seconds(pid), time.monotonic()
            time.sleep(opts.seconds)  # the measurement is of doing nothing
            c1, t1 = cpu_seconds(pid), time.monotonic()
            launch.poweroff()
        rows.append({'cmdline': cmdline, 'qemu_cpu_pct': (c1 - c0) / (t1 - t0) * 100})
        print(table.format(cmdline, rows[-1]['qemu_cpu_pct']))
    publish(PROG, opts, {'accel': 'tcg', 'seconds': opts.seconds, 'rows': rows}, accel='tcg')
    return 0
