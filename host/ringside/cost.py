# SPDX-License-Identifier: MIT
"""Guest cost counters: the shared-memory block of the ringside-cost QEMU
plugin (build/host/ringside-cost.so), its profile, and the symbol tables that
turn the profile's block addresses into function names.

The block's layout is host/cost/cost_shm.h; HEADER below mirrors it field for
field and a reader refuses any other magic or version.

    block = CostBlock('/tmp/guest.cost')     # live while QEMU runs
    before = block.snapshot()
    ...                                      # let the guest work
    delta = block.snapshot() - before
    print(delta.totals['insns'])
"""

import bisect
import mmap
import os
import struct
import subprocess

from .table import Column, Table

MAGIC = 0x54534f435352          # "RSCOST" as a little-endian u64
VERSION = 1
MAX_NOTIFY = 8

F_IO = 1 << 0
F_PROF = 1 << 1
STATE_RUNNING, STATE_EXITED = 1, 2

# struct cost_shm_header up to and including pad; the notify ranges follow.
HEADER = struct.Struct('<QIIIIIIQQIIQQII')
HEADER_FIELDS = ('magic', 'version', 'header_size', 'vcpu_size', 'n_vcpus',
                 'prof_entry_size', 'prof_slots', 'vcpu_offset', 'prof_offset',
                 'flags', 'state', 'prof_used', 'prof_dropped', 'n_notify',
                 'pad')
RANGE = struct.Struct('<QQ')
HEADER_SIZE = HEADER.size + MAX_NOTIFY * RANGE.size
NOTIFY_OFFSET = HEADER.size
N_NOTIFY_BYTE = struct.calcsize('<QIIIIIIQQIIQQ')

# struct cost_vcpu
VCPU_FIELDS = ('insns', 'halts', 'idle_ns', 'mmio_reads', 'mmio_writes',
               'notify_writes', 'pio_reads', 'pio_writes')
VCPU = struct.Struct('<' + 'Q' * len(VCPU_FIELDS))
# struct cost_prof_entry
PROF = struct.Struct('<QQII')


class CostFormatError(Exception):
    """Not a cost block, or one of another layout version."""


class Counters:
    """One reading of the block: per-vCPU counters, totals, the profile."""

    def __init__(self, vcpus, profile, state):
        self.vcpus = vcpus            # [{field: value}]
        self.profile = profile        # {block vaddr: instructions}
        self.state = state
        self.totals = {f: sum(v[f] for v in vcpus) for f in VCPU_FIELDS}

    def __sub__(self, older):
        """What happened between `older` and this reading."""
        vcpus = [{f: new[f] - old[f] for f in VCPU_FIELDS}
                 for new, old in zip(self.vcpus, older.vcpus)]
        profile = {}
        for vaddr, insns in self.profile.items():
            d = insns - older.profile.get(vaddr, 0)
            if d:
                profile[vaddr] = d
        return Counters(vcpus, profile, self.state)


def parse_header(data):
    """The header of a block (bytes) as a dict; CostFormatError if alien."""
    if len(data) < HEADER_SIZE:
        raise CostFormatError('%d bytes: too short for a cost block' % len(data))
    h = dict(zip(HEADER_FIELDS, HEADER.unpack_from(data, 0)))
    if h['magic'] != MAGIC:
        raise CostFormatError('bad magic %#x: not a ringside cost block'
                              % h['magic'])
    if h['version'] != VERSION:
        raise CostFormatError('layout version %d; this reader knows %d'
                              % (h['version'], VERSION))
    if (h['header_size'] != HEADER_SIZE or h['vcpu_size'] != VCPU.size
            or h['prof_entry_size'] != PROF.size):
        raise CostFormatError('structure sizes differ from version %d'
                              % VERSION)
    end = h['vcpu_offset'] + h['n_vcpus'] * VCPU.size
    if h['prof_slots']:
        end = max(end, h['prof_offset'] + h['prof_slots'] * PROF.size)
    if end > len(data):
        raise CostFormatError('block truncated: %d of %d bytes'
                              % (len(data), end))
    n = min(h['n_notify'], MAX_NOTIFY)
    h['notify'] = [RANGE.unpack_from(data, NOTIFY_OFFSET + i * RANGE.size)
                   for i in range(n)]
    return h


def parse(data):
    """Counters from a block's bytes (a live mapping or a recorded file)."""
    h = parse_header(data)
    vcpus = [dict(zip(VCPU_FIELDS,
                      VCPU.unpack_from(data, h['vcpu_offset'] + i * VCPU.size)))
             for i in range(h['n_vcpus'])]
    profile = {}
    for i in range(h['prof_slots']):
        vaddr, insns, _, used = PROF.unpack_from(data,
                                                 h['prof_offset'] + i * PROF.size)
        if used and insns:
            profile[vaddr] = insns
    return Counters(vcpus, profile, h['state'])


class CostBlock:
    """A cost block file, mapped; snapshot() reads it as it is now."""

    def __init__(self, path, writable=False):
        self.path = path
        flags = os.O_RDWR if writable else os.O_RDONLY
        fd = os.open(path, flags)
        try:
            size = os.fstat(fd).st_size
            access = mmap.ACCESS_WRITE if writable else mmap.ACCESS_READ
            self.map = mmap.mmap(fd, size, access=access)
        finally:
            os.close(fd)
        self.header = parse_header(self.map)

    def snapshot(self):
        return parse(self.map)

    def raw(self):
        """The block's bytes now, e.g. to record it to a file."""
        return bytes(self.map)

    def set_notify(self, ranges):
        """Make MMIO writes into these (base, length) windows count as
        notifies from now on (needs writable=True)."""
        ranges = list(ranges)[:MAX_NOTIFY]
        struct.pack_into('<I', self.map, N_NOTIFY_BYTE, 0)
        for i, (base, length) in enumerate(ranges):
            RANGE.pack_into(self.map, NOTIFY_OFFSET + i * RANGE.size, base,
                            length)
        struct.pack_into('<I', self.map, N_NOTIFY_BYTE, len(ranges))

    def close(self):
        self.map.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_file(path):
    """Counters from a recorded (or live) block file."""
    with open(path, 'rb') as f:
        return parse(f.read())


def plugin_args(shm, io=False, prof=False, notify=()):
    """The plugin's -plugin option value after its path."""
    args = ['shm=' + shm]
    if io:
        args.append('io=on')
    if prof:
        args.append('prof=on')
    args += ['notify=%#x+%#x' % r for r in notify]
    return ','.join(args)


# ----------------------------------------------------------------- symbols

class Symbols:
    """Code symbols sorted by address; name_of(addr) is the one containing
    addr (the nearest at or below it, with its size when known)."""

    def __init__(self, entries):
        entries = sorted(entries)
        self.addrs = [e[0] for e in entries]
        self.entries = entries

    def name_of(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return None
        start, size, name = self.entries[i]
        if size and addr >= start + size:
            return None
        return name

    def __len__(self):
        return len(self.entries)


def elf_symbols(path):
    """Function symbols of an ELF file, via binutils' nm."""
    out = subprocess.run(['nm', '-S', '--defined-only', path], check=True,
                         capture_output=True, text=True).stdout
    entries = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in 'tTwW':
            entries.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
        elif len(parts) == 3 and parts[1] in 'tTwW':
            entries.append((int(parts[0], 16), 0, parts[2]))
    return Symbols(entries)


def system_map_symbols(path):
    """Text symbols of a Linux System.map or a copy of /proc/kallsyms
    ("ADDR TYPE NAME [MODULE]" lines). Debian's /boot/System.map-* is a
    one-line stub (the real one is in the -dbg package): use the guest's
    /proc/kallsyms, which also has the modules (virtio, vsock)."""
    entries = []
    with open(path, errors='replace') as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in ('t', 'T', 'w', 'W'):
                addr = int(parts[0], 16)
                if 0 < addr < (1 << 64) - 1:
                    entries.append((addr, 0, parts[2]))
    if not entries:
        raise ValueError('%s: no text symbols (a stub System.map, or kallsyms '
                         'read without privileges?)' % path)
    return Symbols(entries)


def by_function(profile, symbols):
    """{function: instructions} from {block vaddr: instructions}; blocks
    outside every symbol are grouped as '?' (e.g. firmware, user code)."""
    funcs = {}
    for vaddr, insns in profile.items():
        name = symbols.name_of(vaddr) if symbols else None
        name = name or '?'
        funcs[name] = funcs.get(name, 0) + insns
    return funcs


def report(counters, symbols=None, ops=1, top=10, what='operation'):
    """Text lines: totals, then the top functions, per operation."""
    t = counters.totals
    table = Table([Column('counter', 22, left=True), Column('total', 16, '%d'),
                   Column('per ' + what, 14, '%.1f')])
    for f in VCPU_FIELDS:
        table.row(f, t[f], t[f] / ops)
    lines = table.text()
    if counters.profile:
        funcs = by_function(counters.profile, symbols)
        profiled = sum(funcs.values())
        lines.append('')
        lines.append('top functions (%d instructions profiled, %d functions)'
                     % (profiled, len(funcs)))
        table = Table([Column('function', 40, left=True), Column('insns/' + what, 14, '%.1f'),
                       Column('%', 7, '%.1f%%')])
        ranked = sorted(funcs.items(), key=lambda kv: (-kv[1], kv[0]))
        for name, insns in ranked[:top]:
            table.row(name[:40], insns / ops, 100.0 * insns / profiled)
        lines += table.text()
    return lines
