# SPDX-License-Identifier: MIT
"""The guest cost counters (build/host/ringside-cost.so, host/ringside/cost.py,
`ringside cost-report`): exact instruction counts, repeatable per-operation
costs, I/O counts, the versioned block layout and the report command.
"""

import os
import re
import struct
import subprocess
import sys

import pytest

from ringside_qemu import FRONT_DOOR, Guest, REPO
from vsockhost import hybrid_connect
from ringside import cost
from ringside.cost_measure import CMDLINE, ECHO, Span, idle_rate, pingpong, split_insns
from ringside.guest_stats import virtio_bars
from ringside.wait import until

PLUGIN = os.path.join(REPO, 'build', 'host', 'ringside-cost.so')
ELF = os.path.join(REPO, 'build', 'ringside.elf')
REPORT = [sys.executable, FRONT_DOOR, 'cost-report']
CALIBRATE_INSNS = 8     # kernel/calibrate.c


def boot(block_path, cmdline=CMDLINE, opts='prof=on', name='cost'):
    """A started vsock guest whose cost block is block_path (as `ringside
    cost` boots it), its logs with the other tests'."""
    cost_arg = block_path + (',' + opts if opts else '')
    g = Guest('--boot', 'elf', '--vsock', '--cmdline', cmdline, '--cost-block', cost_arg,
              name=name)
    g.start()

    def echo_answers():     # the back end takes connections once it has the rings
        try:
            hybrid_connect(g.vsock_uds, ECHO).close()
            return True
        except OSError:
            return False
    try:
        until(echo_answers, 60, "the guest's echo", interval=0.2)
    except BaseException:
        g.stop()
        raise
    return g


def counted_guest(tmp_path_factory, opts, name):
    """A vsock guest (irq=msix idle=halt) with the plugin's `opts`. After
    poweroff the block is final: the profile then accounts for every
    instruction the totals counted, exactly."""
    if not os.path.exists(PLUGIN):
        pytest.fail('%s missing: run make' % PLUGIN, pytrace=False)
    path = str(tmp_path_factory.mktemp(name) / 'guest.cost')
    g = boot(path, opts=opts, name=name)
    g.block_path = path
    g.block = cost.CostBlock(path, writable=True)
    try:
        yield g
        status = g.poweroff() if g.alive else g.status
    finally:
        g.stop()
    assert status == 0, 'QEMU exit status %r after poweroff' % status
    final = cost.read_file(path)
    assert final.state == cost.STATE_EXITED     # the plugin's atexit ran
    assert cost.parse_header(open(path, 'rb').read())['prof_dropped'] == 0
    assert sum(final.profile.values()) == final.totals['insns']


@pytest.fixture(scope='module')
def cguest(tmp_path_factory):
    """Counted with io=on (slower: a callback per memory access)."""
    yield from counted_guest(tmp_path_factory, 'prof=on,io=on', 'cost-io')


@pytest.fixture
def pguest(tmp_path_factory):
    """Counted as in benchmarks: inline counts and the profile only. Its
    test runs first and alone: a second QEMU would change the timing, and
    with it which paths the guest takes (docs/benchmarks.md, cost accounting)."""
    yield from counted_guest(tmp_path_factory, 'prof=on', 'cost')


def test_roundtrip_cost_repeatable(pguest):
    """Two identical runs of 2000 isolated 64 B echo round trips on one
    connection agree within 1 % on the guest's total instructions per
    round trip.

    The total is repeatable because the number of poll passes per round
    trip is fixed by structure, not timing: the RX interrupt wakes the
    loop, one pass reaps, echoes and kicks, and the loop halts; the TX
    completion is reaped on the next wake-up rather than by an extra pass
    when it happens to land before the halt (virtio_vsock.c's pending()).
    The split into work, poll passes and heap is printed as a diagnostic."""
    count = 2000
    syms = cost.elf_symbols(ELF)
    with hybrid_connect(pguest.vsock_uds, ECHO) as s:
        pingpong(pguest.block, None, 64, 200, sock=s, gap=0.0005)
        spans = [pingpong(pguest.block, None, 64, count, 0, s, 0.0005)[1] for _ in range(2)]
    splits = [split_insns(sp.delta, syms) for sp in spans]
    totals = [sp.insns_by_halts(count) / count for sp in spans]
    a, b = totals
    info = 'total %.1f %.1f; (work, passes, heap) per round trip %s' % (
        a, b, ['%.1f %.1f %.1f' % tuple(x / count for x in sp) for sp in splits])
    print(info)
    assert 200 < a < 50000, info
    assert abs(a - b) <= 0.01 * min(a, b), info
    # the split found the poll passes (the echo allocates nothing: its
    # reply goes back in the received buffer, so the heap share may be 0)
    assert all(p > 0 for _, p, _ in splits), info
    assert all(t > w / count for t, (w, _, _) in zip(totals, splits)), info
    # msix + halt: the guest sleeps after every round trip
    assert spans[1].delta.totals['halts'] >= count, spans[1].delta.totals


# The guest's cost of one isolated 64 B echo round trip (irq=msix
# idle=halt tick=deadline, `ringside cost`): about 920 instructions in all
# and none in newlib's allocator, since the echo replies in the received
# buffer, which then goes straight back onto the RX ring (before: 1,300;
# 1,950 to 2,040; 2,700 to 3,100 with 130 in the allocator; before the
# packet pool 3,100 and 511). The bounds leave about a quarter for timing
# (how many poll passes a round trip takes) and fail on a real regression.
RT64_TOTAL_MAX = 1150
RT64_HEAP_MAX = 50


def test_roundtrip_cost_bound(pguest):
    """A 64 B echo round trip costs the guest at most RT64_TOTAL_MAX
    instructions, at most RT64_HEAP_MAX of them in the allocator."""
    count = 2000
    syms = cost.elf_symbols(ELF)
    with hybrid_connect(pguest.vsock_uds, ECHO) as s:
        pingpong(pguest.block, None, 64, 200, sock=s, gap=0.0005)
        span = pingpong(pguest.block, None, 64, count, 0, s, 0.0005)[1]
    work, passes, heap = split_insns(span.delta, syms)
    total = span.insns_by_halts(count) / count
    info = 'total %.1f; work %.1f passes %.1f heap %.1f per round trip' % (
        total, work / count, passes / count, heap / count)
    assert 200 < total <= RT64_TOTAL_MAX, info
    assert heap / count <= RT64_HEAP_MAX, info


def calibrate_addr(guest, passes):
    out = guest.command('calibrate %d' % passes, timeout=300)
    m = re.search(r'calibrate: (\d+) passes x (\d+) instructions at (0x[0-9a-f]+)', out)
    assert m, out
    assert int(m.group(1)) == passes and int(m.group(2)) == CALIBRATE_INSNS
    return int(m.group(3), 16)


@pytest.mark.parametrize('passes', [1, 1000, 250000])
def test_calibrate_counted_exactly(cguest, passes):
    """The blocks starting at calibrate_body run exactly passes x 8
    instructions; the total grows by at least that, and by little more."""
    before = cguest.block.snapshot()
    addr = calibrate_addr(cguest, passes)
    delta = cguest.block.snapshot() - before
    assert delta.profile.get(addr, 0) == passes * CALIBRATE_INSNS
    syms = cost.elf_symbols(ELF)
    assert syms.name_of(addr) == 'calibrate_body'
    funcs = cost.by_function(delta.profile, syms)
    assert funcs['calibrate_body'] == passes * CALIBRATE_INSNS
    assert funcs['calibrate_done'] == 1      # the one ret
    assert passes * CALIBRATE_INSNS <= delta.totals['insns']


def test_io_counts(cguest):
    """io=on: console output is port I/O (one out per byte at least); echo
    round trips write virtio notify windows (the guest's `virtio json` BARs)
    and nothing outside the device BARs is counted as a notify."""
    block = cguest.block
    before = block.snapshot()
    out = cguest.command('help')
    d = block.snapshot() - before
    assert d.totals['pio_writes'] >= len(out), (d.totals, len(out))
    assert d.totals['pio_reads'] >= 1
    assert d.totals['notify_writes'] == 0   # no windows given yet

    bars = virtio_bars(cguest, 60)
    assert bars, 'no virtio memory BAR in `virtio json`'
    block.set_notify(bars)
    assert cost.parse_header(block.map)['notify'] == bars
    count = 200
    rate = idle_rate(block, 0.5)
    with Span(block, rate) as span:
        pingpong(block, cguest.vsock_uds, 64, count, warmup=0)
    t = span.delta.totals
    assert t['notify_writes'] >= count, t     # at least one kick per reply
    assert t['mmio_writes'] >= t['notify_writes'], t
    block.set_notify([])


def test_layout_version_checked(cguest):
    """Readers refuse a block of another version or magic; the C header and
    the Python reader agree on version and sizes."""
    data = bytearray(cguest.block.raw())
    h = cost.parse_header(data)
    assert h['version'] == cost.VERSION and h['header_size'] == cost.HEADER_SIZE
    with open(os.path.join(REPO, 'host', 'cost', 'cost_shm.h')) as f:
        header = f.read()
    assert int(re.search(r'#define COST_SHM_VERSION (\d+)', header).group(1)) == cost.VERSION
    assert int(re.search(r'#define COST_SHM_MAGIC (0x[0-9a-f]+)', header).group(1), 16) == \
        cost.MAGIC
    bad = bytearray(data)
    struct.pack_into('<I', bad, 8, cost.VERSION + 1)
    with pytest.raises(cost.CostFormatError, match='version'):
        cost.parse(bytes(bad))
    bad = bytearray(data)
    bad[0] ^= 0xff
    with pytest.raises(cost.CostFormatError, match='magic'):
        cost.parse(bytes(bad))
    with pytest.raises(cost.CostFormatError):
        cost.parse(bytes(data[:100]))


def test_report_on_recorded_file(cguest, tmp_path):
    """`ringside cost-report` on copies of the block taken around `calibrate`:
    calibrate_body tops the list at 8 instructions per pass."""
    passes = 300000
    base = tmp_path / 'before.cost'
    after = tmp_path / 'after.cost'
    base.write_bytes(cguest.block.raw())
    calibrate_addr(cguest, passes)
    after.write_bytes(cguest.block.raw())
    out = subprocess.run([*REPORT, '--base', str(base), '--ops', str(passes),
                          '--what', 'pass', '--top', '5', '--json', str(tmp_path / 'r.json'),
                          str(after)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = re.findall(r'^(\S+)\s+([\d.]+)\s+([\d.]+)%$', out.stdout, re.M)
    assert rows and rows[0][0] == 'calibrate_body', out.stdout
    assert float(rows[0][1]) == 8.0, out.stdout
    m = re.search(r'^insns\s+(\d+)\s', out.stdout, re.M)
    assert m and int(m.group(1)) >= passes * CALIBRATE_INSNS, out.stdout
    bad = tmp_path / 'bad.cost'
    bad.write_bytes(b'\0' * 4096)
    out = subprocess.run([*REPORT, str(bad)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode != 0 and 'magic' in out.stderr


BENCH = os.path.join(REPO, 'build', 'host', 'ringside-bench')


def test_pingpong_trace_guest_cost(cguest, tmp_path):
    """ringside-bench pingpong --trace --cost-shm (`ringside tail`): one
    line per measured round trip with the guest's instructions, halts and
    halted time read live from the block; the per-round-trip counts add up
    to no more than the block counted around the run, and a 64 B round
    trip costs what test_roundtrip_cost_bound allows. A file that is not a
    cost block is refused with a one-line error."""
    count, trace = 400, tmp_path / 'trace.txt'
    before = cguest.block.snapshot()
    out = subprocess.run([BENCH, 'pingpong', '--uds', cguest.vsock_uds, '--size', '64',
                          '--count', str(count), '--warmup', '20', '--trace', str(trace),
                          '--cost-shm', cguest.block_path, '--json'],
                         capture_output=True, text=True, timeout=600)
    delta = (cguest.block.snapshot() - before).totals
    assert out.returncode == 0, out.stderr
    lines = trace.read_text().splitlines()
    assert lines[0].split() == ['#', 'size', 'round', 'ns', 'guest_insns', 'guest_halts',
                                'guest_idle_ns']
    rows = [[int(x) for x in line.split()] for line in lines[1:]]
    # the last round trip has no reading after it
    assert [r[:2] for r in rows] == [[64, i] for i in range(count - 1)]
    assert all(r[2] > 0 for r in rows)
    for i, field in ((3, 'insns'), (4, 'halts'), (5, 'idle_ns')):
        assert sum(r[i] for r in rows) <= delta[field], field
    insns = sorted(r[3] for r in rows)
    assert 200 < insns[len(insns) // 2] <= RT64_TOTAL_MAX, insns[len(insns) // 2]
    bad = tmp_path / 'bad.cost'
    bad.write_bytes(b'\0' * 4096)
    out = subprocess.run([BENCH, 'pingpong', '--uds', cguest.vsock_uds, '--trace',
                          str(trace), '--cost-shm', str(bad)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == 'ringside-bench: --cost-shm %s: not a ringside cost block' % bad
