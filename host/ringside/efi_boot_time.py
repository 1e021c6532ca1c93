# SPDX-License-Identifier: MIT
"""efi-boot-time: seconds from QEMU's start to 'ringside: ready' under OVMF,
GRUB from the ISO (multiboot2-uefi) vs. the GNU-EFI image straight from the
ESP (uefi-direct).

Round robin, N boots per way (a busy machine slows both alike); prints the
median, min and max. Time 0 is just before QEMU is executed, the end is when
the chunk of serial output holding the ready line arrived. The QEMU command
line and console come from host/ringside-run, like host/boot-time.
"""

import statistics
import sys

import ringside as rr

from .boot_time import sample
from .cli import Parser, positive_float, positive_int
from .results import add_options, publish
from .table import Column, Table

PROG = 'efi-boot-time'

# name, launcher options
BOOTS = [
        ('OVMF + GRUB (ISO, multiboot2-uefi)', ['--boot', 'iso', '--firmware', 'uefi']),
        ('OVMF direct (ESP, uefi-direct)', ['--firmware', 'uefi-direct']),
]


def main(argv=None):
    p = Parser(prog='efi-boot-time', description=__doc__.split('\n\n')[0])
    p.add_argument('--runs', type=positive_int, default=5, help='boots per way (default 5)')
    p.add_argument('--machine', choices=('q35', 'pc'), default='q35')
    p.add_argument('--memory', default='512M')
    p.add_argument('--timeout', type=positive_float, default=120.0,
                   help='seconds per boot (default 120)')
    add_options(p)
    a = p.parse_args(argv)
    if a.runs < 1:
        p.error('--runs must be >= 1')

    # OVMF has been seen to hang under KVM on these machines: TCG only.
    accel = 'tcg'
    common = ['--machine', a.machine, '--memory', a.memory, '--timeout', str(a.timeout)]
    try:
        samples = sample(BOOTS, common, accel, a.runs, a.timeout, 36)[0]
    except rr.LaunchError as e:
        print('efi-boot-time: error: %s' % e, file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        return 130

    grub, direct = (statistics.median(samples[name]) for name, _ in BOOTS)
    print("QEMU start -> 'ringside: ready', median of %d, -accel %s, -machine %s, -m %s"
          % (a.runs, accel, a.machine, a.memory))
    t = Table([Column('boot', 36, left=True), Column('median', 9, '%.3f s'),
               Column('min', 9, '%.3f s'), Column('max', 9, '%.3f s')])
    for name, _ in BOOTS:
        s = samples[name]
        t.row(name, statistics.median(s), min(s), max(s))
    t.print()
    print('direct / GRUB: %.2f (saves %.3f s)' % (direct / grub, grub - direct))
    publish(PROG, a, {'accel': accel, 'machine': a.machine, 'memory': a.memory, 'runs': a.runs,
                      'unit': 's', 'direct_over_grub': direct / grub,
                      'boots': [{'boot': name, 'ready': samples[name],
                                 'median': statistics.median(samples[name])}
                                for name, _ in BOOTS]},
            accel=accel)
    return 0
