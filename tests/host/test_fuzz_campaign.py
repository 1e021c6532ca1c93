# SPDX-License-Identifier: MIT
"""The fuzz campaign's host side without QEMU (host/ringside/fuzz*.py):
the steps come from the real generator (build/host/ringside-fuzz-gen),
the back end is a fake with a failure seeded into it. A campaign finds
the failure, replays it on a fresh fake guest, and shrinks it to the
two steps and two bits that make it; minimisation alone shrinks known
failing sequences to their cores; replay lines fit the guest's console."""

import os
import re

import pytest

from ringside import fuzz, fuzz_steps
from ringside.errors import GuestExited
from ringside.commands import fuzz as fuzz_command
from ringside.fuzz_minimise import Minimiser

pytestmark = pytest.mark.skipif(not os.path.exists(fuzz_steps.GEN),
                                reason='build/host/ringside-fuzz-gen missing: run make')

SEED = 0x5eed


def bug(tokens):
    """The seeded fault: a descriptor chain step with bit 5 of its word
    set, then, any number of steps later, a header step with bit 3 set."""
    armed = False
    for tok in tokens:
        kind, word = fuzz_steps.parse(tok)
        if kind == 'dc' and word & 0x20:
            armed = True
        elif kind == 'hd' and word & 0x8 and armed:
            return True
    return False


class FakeConsole:
    """Just enough of ringside's console: the fuzz command's lines."""

    def __init__(self, guest):
        self.guest = guest
        self.text = ''
        self.eof = False
        self.diagnose = None

    def command(self, cmd, timeout):
        self.text += cmd + '\r\n'
        out = self.guest.run(cmd)
        self.text += out + 'ringside> '
        return ''

    def search(self, pattern, start, timeout):
        return pattern.search(self.text, start)


class FakeGuest:
    """A guest whose 'back end' dies once its steps, since boot, hold the bug."""

    targets = ('vsock', 'transport')
    main_target = 'vsock'
    live_bystander = True
    keeps_nothing = False
    boots = 0

    def __init__(self):
        FakeGuest.boots += 1
        self.console = FakeConsole(self)
        self.seen = []
        self.added = []
        self.batches = 0
        self.dead = False

    def run(self, cmd):
        m = re.match(r'fuzz (0x[0-9a-f]+) from=(\d+) steps=(\d+) batch=\d+ target=(\w+)$', cmd)
        if m:
            start, n, target = int(m.group(2)), int(m.group(3)), m.group(4)
            toks, digest = fuzz_steps.steps(int(m.group(1), 0), target, start, n)
            where = '%s %s %d+%d' % (m.group(1), target, start, n)
        elif cmd.startswith('fuzz add '):
            self.added += cmd.split()[3:]
            return 'fuzz: %d vsock steps added for the next replay\r\n' % len(self.added)
        else:
            toks, self.added = self.added + cmd.split()[3:], []
            digest = fuzz_steps.digest(toks)
            where = 'replay %d' % len(toks)
        self.seen += toks
        self.batches += 1
        self.dead = self.dead or self.broken()
        if self.dead:
            return ''   # the batch never ends: the back end exited under it
        return ('fuzz %s: answered; well-formed %d/%d, skipped 0; digest %s\r\n'
                % (where, len(toks), len(toks), digest))

    def broken(self):
        return bug(self.seen)

    def start(self):
        return self

    def stop(self):
        pass

    def alive(self):
        return not self.dead

    def why_dead(self):
        return 'the fake back end exited (its seeded fault)'

    def host_broke(self):
        return ''

    def feed(self):
        pass

    def exchange(self, n):
        return ''

    def after(self):
        return ''

    def check_due(self):
        return False

    def usage(self):
        return {}

    @staticmethod
    def environment():
        return {'backend': 'fake'}


class FakeBackend:
    name = 'fake'
    label = 'a back end with a seeded fault'
    accel = 'tcg'
    rings = ('split',)
    targets = FakeGuest.targets
    guest = FakeGuest

    def boot(self, ring, log_dir, name):
        return FakeGuest().start()


class Opts:
    def __init__(self, steps):
        self.steps, self.time = steps, None
        self.rings = ['split']
        self.targets = ['vsock', 'transport']
        self.no_minimise = False
        self.minimise_time = 600
        self.verbose = 0
        self.kinds = []


def test_generator_tool_is_deterministic():
    a, da = fuzz_steps.steps(SEED, 'vsock', 100, 64)
    b, db = fuzz_steps.steps(SEED, 'vsock', 100, 64)
    assert a == b and da == db
    assert len(a) == 64 and all(fuzz_steps.TOKEN.match(t) for t in a)
    # a range is the same steps however it is drawn
    c, _ = fuzz_steps.steps(SEED, 'vsock', 132, 32)
    assert c == a[32:]
    assert fuzz_steps.digest(a) == da
    assert fuzz_steps.steps(SEED + 1, 'vsock', 100, 64)[0] != a


def test_campaign_finds_replays_and_shrinks_the_seeded_failure(tmp_path):
    FakeGuest.boots = 0
    c = fuzz.Campaign(FakeBackend(), SEED, Opts(2000), str(tmp_path))
    c.run()
    assert c.failures >= 1
    found = list(c.found.values())
    assert len(found) == 1, found
    f = found[0]
    assert f.oracle == 'crash'
    assert f.reproduced is True
    # the core: the chain step with bit 5 alone, then the header step with bit 3 alone
    assert f.reproducer_tokens() == ['dc.20', 'hd.8'], f.reproducer
    assert f.kind == 'hd'
    assert f.line('vsock') == 'fuzz replay target=vsock dc.20 hd.8'
    assert f.replays > 2 and FakeGuest.boots == c.guests + f.replays
    saved = tmp_path / os.path.basename(f.saved)
    assert (saved / 'reproducer.txt').read_text() == 'fuzz replay target=vsock dc.20 hd.8\n'
    c.save()
    assert '"distinct": 1' in (tmp_path / 'summary.json').read_text()


class WornGuest(FakeGuest):
    """A back end that fails after twelve batches, whatever they hold:
    only the guest's whole run reproduces it."""

    def broken(self):
        return self.batches >= 12


class WornBackend(FakeBackend):
    guest = WornGuest

    def boot(self, ring, log_dir, name):
        return WornGuest().start()


def test_a_failure_only_the_whole_run_brings_back_is_replayed_from_its_seed(tmp_path):
    c = fuzz.Campaign(WornBackend(), SEED, Opts(12 * 32), str(tmp_path))
    c.run()
    (f,) = c.found.values()
    assert f.oracle == 'crash' and f.reproduced == 'from its seed', f.__dict__
    assert len(f.lines('vsock')) == 12
    assert all(re.match(r'fuzz 0x5eed from=\d+ steps=32 batch=32 target=(vsock|transport)$', x)
               for x in f.lines('vsock')), f.lines('vsock')


class LateConsole(FakeConsole):
    """The console of a guest whose QEMU is gone: the next command ends in EOF."""

    def command(self, cmd, timeout):
        if self.guest.dying:
            self.guest.dead = True
            raise GuestExited('guest console closed while waiting for output of %r' % cmd)
        return super().command(cmd, timeout)


class LateGuest(FakeGuest):
    """A back end that falls over on its own time: the batch holding the
    bug still ends, and the guest is gone by the next command."""

    def __init__(self):
        super().__init__()
        self.console = LateConsole(self)
        self.dying = False

    def broken(self):
        self.dying = self.dying or bug(self.seen)
        return False


class LateBackend(FakeBackend):
    def boot(self, ring, log_dir, name):
        return LateGuest().start()


def test_a_replay_whose_back_end_dies_between_batches_fails_as_a_crash(tmp_path):
    toks, _ = fuzz_steps.steps(SEED, 'vsock', 0, 40)
    steps = fuzz.steps_of(['dc.20', 'hd.8'], 1) + fuzz.steps_of(toks, 2)
    # the second batch begins with `fuzz add` lines: the first of them meets the EOF
    assert fuzz.replay_plan(steps, 'vsock')[1][1] is None
    f = fuzz.Reproducer(LateBackend(), 'split', str(tmp_path), 'late').run(steps)
    assert f is not None and f.oracle == 'crash', f
    assert 'seeded fault' in f.evidence


def test_a_reproducer_replays_on_another_guest(tmp_path):
    lines = ['fuzz replay target=vsock dc.20 hd.8']
    f = fuzz.replay_file(FakeBackend(), 'split', lines, str(tmp_path))
    assert f is not None and f.oracle == 'crash'
    assert fuzz.replay_file(FakeBackend(), 'split', ['fuzz replay target=vsock dc.20'],
                            str(tmp_path)) is None
    # `fuzz add` lines count into the replay that ends their batch
    toks, _ = fuzz_steps.steps(SEED, 'vsock', 0, 40)
    lines = fuzz_steps.replay_lines(toks, 'vsock')
    assert fuzz.plan_of_lines(lines)[-1] == (lines[-1], 40)
    for bad in (['ls'], ['fuzz add target=vsock hd.1']):
        with pytest.raises(ValueError):
            fuzz.plan_of_lines(bad)


def test_crashes_at_two_assertions_are_two_failures():
    a = fuzz.Failure('crash', "qemu exited with status -6; qemu-system-x86_64: "
                              "../../util/iov.c:269: iov_copy: Assertion `offset == 0' failed.")
    b = fuzz.Failure('crash', 'qemu exited with status -6; qemu-system-x86_64: ../../softmmu/'
                              "physmem.c:3332: address_space_cache_init: Assertion `len > 0'")
    assert (a.signature(), b.signature()) == ('iov.c:269', 'physmem.c:3332')
    glib = fuzz.Failure('crash', 'qemu exited with status -6; ERROR:../../qom/object.c:697:'
                                 'object_finalize: assertion failed: (obj->parent == NULL)')
    assert glib.signature() == 'object.c:697'
    assert fuzz.Failure('dead', 'testpmd received 0 of 200 at x.c:1: ').signature() == ''
    fa = fuzz.Found(a, ['nh.1'], [], [], 'split')
    fb = fuzz.Found(b, ['nh.1'], [], [], 'packed')
    assert fa.key() != fb.key() and fa.label() == 'crash (iov.c:269)'


def test_same_seed_same_digest(tmp_path):
    runs = []
    for _ in range(2):
        c = fuzz.Campaign(FakeBackend(), 3, Opts(100), str(tmp_path))
        c.opts.no_minimise = True
        c.run()
        runs.append((c.steps, c.summary()['digest'], c.tokens))
    assert runs[0] == runs[1]
    assert runs[0][0] >= 100


def test_minimiser_finds_a_known_core():
    toks = ['hd.%x' % (i * 0x1111) for i in range(40)]
    core = {'hd.7777', 'hd.15554'}

    def fails(seq):
        return core <= set(seq)

    m = Minimiser(fails)
    assert m.ddmin(toks) == ['hd.7777', 'hd.15554']
    # words: only bit 2 of the first matters
    m = Minimiser(lambda seq: len(seq) == 2 and fuzz_steps.parse(seq[0])[1] & 4 > 0)
    assert m.minimise(['dc.ff0f', 'rx.123']) == ['dc.4', 'rx.0']


def test_minimiser_stops_at_its_deadline_with_a_failing_sequence():
    clock = iter(range(1000))
    m = Minimiser(lambda seq: 'hd.1' in seq, deadline=5, clock=lambda: next(clock))
    got = m.minimise(['hd.%x' % i for i in range(64)])
    assert 'hd.1' in got and len(got) < 64


def test_replay_lines_fit_the_console_and_keep_batches():
    toks, _ = fuzz_steps.steps(SEED, 'vsock', 0, 40)
    steps = fuzz.steps_of(toks, 1) + fuzz.steps_of(['st.1', 'qs.2'], 1) + \
        fuzz.steps_of(toks[:3], 2)
    plan = fuzz.replay_plan(steps, 'vsock')
    lines = [line for line, _ in plan]
    assert all(len(x) <= 255 and len(x.split()) <= 16 for x in lines)
    assert sum(len(x.split()) - 3 for x in lines) == 45
    # the first batch's 40 steps: `fuzz add` lines, then one replay of all 40
    assert [e for _, e in plan] == [None] * (len(plan) - 3) + [40, 2, 3]
    assert all(x.startswith('fuzz add target=vsock ') for x in lines[:-3])
    assert lines[-2] == 'fuzz replay target=transport st.1 qs.2'
    assert lines[-1] == 'fuzz replay target=vsock ' + ' '.join(toks[:3])


@pytest.mark.parametrize('argv', [
    ['--backend', 'ours', '--time', '1x'],
    ['--backend', 'ours', '-t', '60', '--steps', '10'],
    ['--backend', 'ours', '--seed', '0'],
    ['--backend', 'net-qemu', '--targets', 'vsock'],
    ['--backend', 'ours', '--kinds', 'hd,zz'],
    ['--backend', 'kernel', '--rings', 'packed'],
])
def test_bad_options_are_one_line(argv, capsys):
    with pytest.raises(SystemExit) as e:
        fuzz_command.parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith('ringside fuzz: error: ') and err.count('\n') == 1, err


def test_kind_tables_match_the_generator():
    for target, kinds in fuzz_steps.KINDS.items():
        toks, _ = fuzz_steps.steps(SEED, target, 0, 2000)
        assert {fuzz_steps.kind(t) for t in toks} == set(kinds), target
