# SPDX-License-Identifier: MIT
"""idle: how much host CPU an idle ringside guest costs, per idle mode.

Boots the ELF (PVH) with vsock once per command line, waits for ready,
then reads QEMU's CPU time from /proc/PID/stat over --time seconds of
idleness. With idle=poll the guest spins (one host CPU while it can have
one); idle=halt sleeps until an interrupt or its next deadline.
"""

import os
import time

import ringside as rr

from .. import measure
from ..benchlib import wait_vsock_up
from ..cli import LAUNCHER_EPILOG, Parser
from ..results import Cells, add_options, publish
from ..table import Column, Table

NAME = 'idle'
SUMMARY = 'host CPU an idle guest costs (idle=poll, idle=halt)'
GROUP = 'measure'
ALIASES = ('idle-cpu',)
PROG = 'ringside idle'
CONFIGS = ['irq=msix idle=poll', 'irq=msix idle=halt']


def cpu_seconds(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def main(argv):
    p = Parser(prog=PROG, description=__doc__.split('\n')[0],
               usage='%(prog)s [options] [CMDLINE...] [-- launcher options]',
               epilog=LAUNCHER_EPILOG)
    measure.add(p, time=3.0)
    add_options(p)
    p.add_argument('configs', nargs='*', default=CONFIGS, metavar='CMDLINE',
                   help="kernel command lines to compare ('%s')" % "' '".join(CONFIGS))
    argv = list(argv)
    launcher = argv[argv.index('--') + 1:] if '--' in argv else []
    opts = p.parse_args(argv[:len(argv) - len(launcher) - (1 if '--' in argv else 0)])
    opts.argv = argv
    table = Table([Column('cmdline', 32, left=True), Column('QEMU CPU', 10, '%.0f%%')])
    print('\n'.join(table.head()))
    rows, cells = [], Cells()
    for cmdline in opts.configs:
        lopts = rr.parse_args(['--boot', 'elf', '--vsock', '--accel', 'tcg',
                               '--cmdline', cmdline] + launcher)
        with open(os.devnull, 'w') as null, rr.Launch(lopts, 'tcg', qemu_stderr=null) as launch:
            launch.wait_ready()
            wait_vsock_up(launch.opts.vsock_uds, prog=PROG)
            pid = launch.qemu.pid
            c0, t0 = cpu_seconds(pid), time.monotonic()
            time.sleep(opts.time)  # the measurement is of doing nothing
            c1, t1 = cpu_seconds(pid), time.monotonic()
            launch.poweroff()
        rows.append({'cmdline': cmdline, 'qemu_cpu_pct': (c1 - c0) / (t1 - t0) * 100})
        cells.add({'cell': 'idle', 'cmdline': cmdline}, 'QEMU CPU', '%',
                  rows[-1]['qemu_cpu_pct'], 'lower')
        print(table.format(cmdline, rows[-1]['qemu_cpu_pct']))
    publish(PROG, opts, {'accel': 'tcg', 'seconds': opts.time, 'rows': rows}, cells,
            accel='tcg')
    return 0
