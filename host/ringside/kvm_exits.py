# SPDX-License-Identifier: MIT
"""VM exits of the KVM guests on this host, counted by kind.

On KVM a guest's own cost is mostly its exits. This counts them with the
kernel's kvm tracepoints and histogram triggers (tracefs), the way one
would on any KVM host (and on the nested host, host/nested, where L1 is
that host): kvm_exit keyed by exit reason, kvm_page_fault keyed by
guest-physical address (MMIO: the virtio notify, an xAPIC register),
kvm_pio keyed by port and kvm_msr keyed by MSR. A snapshot is a dict of
counts; the difference of two, divided by the operations between them, is
exits per operation. The counts are the host's, for every guest it runs:
measure with one guest running.

Kinds (the columns of the cost tables):
  exits   every exit
  hlt     HLT (the guest went idle)
  notify  nested page faults on device memory (at or above 3 GiB) outside
          the local APIC page: on a virtio guest the notify writes (kicks),
          which KVM hands to an ioeventfd
  apic    nested page faults on the xAPIC page (an EOI or a timer register
          written through MMIO instead of x2APIC MSRs)
  pio     port I/O (by port in 'pio:PORT', e.g. pio:0x3fd, the UART status)
  msr     MSR accesses (x2APIC, TSC deadline; by MSR in 'msr:0x...')
  intr    the host interrupted the guest (an external interrupt or NMI)
  window  interrupt-window exits (KVM waits to inject)
  other   the rest (CPUID, nested page faults on RAM, ...)
and, not an exit, 'inj': interrupts KVM injected into the guest (first
injections; one that an exit interrupted and KVM injects again counts once).
"""

import os
import re

TRACING = '/sys/kernel/tracing'
APIC_PAGE = 0xfee00000
# Exit reasons: AMD (SVM, the nested host's) and Intel (VMX) numbering.
SVM_KINDS = {0x078: 'hlt', 0x07b: 'pio', 0x07c: 'msr', 0x400: 'npf', 0x060: 'intr',
             0x061: 'intr', 0x064: 'window'}
VMX_KINDS = {12: 'hlt', 30: 'pio', 31: 'msr', 32: 'msr', 48: 'npf', 49: 'npf',
             44: 'apic', 56: 'apic', 45: 'apic', 1: 'intr', 7: 'window'}
KINDS = ('exits', 'hlt', 'notify', 'apic', 'pio', 'msr', 'intr', 'window', 'other')

# event -> (the fields to key its histogram on, first one the kernel has;
# a filter, used where the kernel has its field). Older kernels name
# kvm_inj_virq's field irq, newer ones vector. Page faults are keyed by
# page (a histogram holds too few entries for a boot's addresses) and only
# on device memory: RAM faulted in is 'other'.
MMIO_FLOOR = 0xc0000000
TRIGGERS = {
    'kvm_exit': (('exit_reason',), None),
    'kvm_page_fault': (('fault_address.buckets=4096',),
                       'fault_address >= %d' % MMIO_FLOOR),
    'kvm_pio': (('port',), None),
    'kvm_msr': (('ecx',), None),
    'kvm_inj_virq': (('vector', 'irq'), 'reinjected == 0'),
}
# '{ port: 1016 } hitcount: 5', or with buckets '{ fault_address: ~ A-B } ...'
HIST_LINE = re.compile(r'\{\s*(\w+):\s*~?\s*(\d+)(?:-\d+)?\s*\}\s*hitcount:\s*(\d+)')


class ExitsUnavailable(Exception):
    """This host cannot count exits (no KVM, no tracefs, not root)."""


def _event_dir(event):
    return os.path.join(TRACING, 'events', 'kvm', event)


def available():
    """Why exits cannot be counted here, or None when they can."""
    if not os.path.exists('/dev/kvm'):
        return 'no /dev/kvm'
    if not os.path.isdir(_event_dir('kvm_exit')):
        return 'no kvm tracepoints under %s (mount tracefs; load kvm)' % TRACING
    if not os.access(os.path.join(_event_dir('kvm_exit'), 'trigger'), os.W_OK):
        return 'cannot write kvm tracepoint triggers (run as root)'
    return None


def _svm():
    with open('/proc/cpuinfo') as f:
        return ' svm' in f.read()


def _field(event, names, missing=OSError):
    """The first of `names` (with its .modifier, if any) that the event's
    format has (or `missing`)."""
    with open(os.path.join(_event_dir(event), 'format')) as f:
        have = set(re.findall(r'field:[^;]*?(\w+);', f.read()))
    for name in names:
        if name.split('.')[0] in have:
            return name
    if missing is OSError:
        raise OSError(0, 'no field %s in %s' % (' or '.join(names), event))
    return missing


def _hist(event):
    """{key: hits} of the event's histogram."""
    with open(os.path.join(_event_dir(event), 'hist')) as f:
        return {int(m.group(2)): int(m.group(3)) for m in HIST_LINE.finditer(f.read())}


class ExitCounter:
    """Histogram triggers on the kvm tracepoints while open; snapshot()
    reads them. Use as a context manager: the triggers go when it closes."""

    def __init__(self):
        why = available()
        if why:
            raise ExitsUnavailable(why)
        self.reasons = SVM_KINDS if _svm() else VMX_KINDS
        self.armed = {}  # event -> the trigger written
        try:
            for event, (fields, condition) in TRIGGERS.items():
                trigger = 'hist:keys=%s:size=1024' % _field(event, fields)
                if condition and _field(event, condition.split()[:1], None):
                    trigger += ' if ' + condition
                self._write(event, trigger)
                self.armed[event] = trigger
        except OSError as e:
            self.close()
            raise ExitsUnavailable('cannot arm the %s histogram: %s' % (event, e.strerror))

    @staticmethod
    def _write(event, text):
        with open(os.path.join(_event_dir(event), 'trigger'), 'w') as f:
            f.write(text)

    def close(self):
        for event, trigger in self.armed.items():
            try:
                self._write(event, '!' + trigger)
            except OSError:
                pass
        self.armed = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def snapshot(self):
        """Cumulative counts by kind, and by port ('pio:0x3fd') and MSR."""
        counts = dict.fromkeys(KINDS + ('inj',), 0)
        npf = 0
        for reason, hits in _hist('kvm_exit').items():
            kind = self.reasons.get(reason, 'other')
            counts['exits'] += hits
            if kind == 'npf':
                npf += hits
            else:
                counts[kind] += hits
        pages = _hist('kvm_page_fault')
        apic = pages.get(APIC_PAGE, 0)
        device = sum(pages.values()) - apic
        counts['apic'] += apic
        counts['notify'] += device
        counts['other'] += npf - apic - device
        for vector, hits in _hist('kvm_inj_virq').items():
            counts['inj'] += hits
            counts['inj:%#x' % vector] = hits
        for port, hits in _hist('kvm_pio').items():
            counts['pio:%#x' % port] = hits
        for msr, hits in _hist('kvm_msr').items():
            counts['msr:%#x' % msr] = hits
        return counts


def delta(before, after, ops=1.0):
    """after - before per operation, for every key either has."""
    keys = set(before) | set(after)
    return {k: (after.get(k, 0) - before.get(k, 0)) / ops for k in keys}


def details(per_op, limit=6):
    """The ports, MSRs and injected vectors behind the counts, largest
    first, as text."""
    rows = sorted(((v, k) for k, v in per_op.items() if ':' in k and v > 0), reverse=True)
    return ' '.join('%s %.2f' % (k, v) for v, k in rows[:limit])
