# SPDX-License-Identifier: MIT
"""The guest-side fuzzer (drivers/virtio/fuzz*.c) against our back end:
the guest runs the steps the host's generator draws for a seed, a replay
runs the same steps, the console refuses bad input on one line, the boot
key starts a run, and a short fixed-seed campaign (host/ringside/fuzz.py)
finds no failure of build/host/ringside-vhost-vsock on either ring
layout; its seed and length once found the fuzzer's own fault (a chain
of no descriptors forged into a full ring: a page fault in the guest),
and must find nothing now."""

import os
import re

import pytest

import ringside as rr
from ringside import fuzz, fuzz_backends, fuzz_steps
from ringside.images import DEFAULT_VSOCK_BACKEND
from ringside_qemu import LOG_DIR

SEED = 0x20261206
OURS = fuzz_backends.backends()['ours']


@pytest.fixture
def guest(request):
    g = OURS.boot('split', LOG_DIR, 'fuzz-%s' % request.node.name)
    yield g
    g.stop()


def batch_line(g, command):
    b = fuzz.run_batch(g, command)
    assert b.line is not None, g.console.text[-2000:]
    return b


def test_guest_runs_the_steps_the_host_draws(guest):
    toks, digest = fuzz_steps.steps(SEED, 'vsock', 40, 16)
    out = guest.console.command('fuzz show %#x from=40 steps=16' % SEED, 60)
    assert out.split() == toks + ['digest', digest], out
    b = batch_line(guest, 'fuzz %#x from=40 steps=16 batch=16' % SEED)
    assert b.line.group('digest') == digest and b.n == 16, b.line.group(0)
    assert b.failure is None, b.failure
    # the same steps given as tokens: the same digest; more than a line
    # holds go in by `fuzz add` first, and run as one batch
    lines = fuzz_steps.replay_lines(toks, 'vsock')
    assert len(lines) == 2 and lines[0].startswith('fuzz add '), lines
    out = guest.console.command(lines[0], 60)
    added = 'fuzz: %d vsock steps added for the next replay' % (len(lines[0].split()) - 3)
    assert added in out.splitlines(), out
    b = fuzz.run_batch(guest, lines[1], 16)
    assert [m.group('rn') for m in b.lines] == ['16'], b.verdict
    assert b.line.group('digest') == digest, b.line.group(0)
    assert b.failure is None, b.failure
    # and transport steps: the device is reset and serves again
    toks, digest = fuzz_steps.steps(SEED, 'transport', 0, 8)
    b = batch_line(guest, 'fuzz %#x steps=8 target=transport' % SEED)
    assert b.verdict == 'restarted 1' and b.line.group('digest') == digest, b.line.group(0)
    assert b.failure is None, b.failure
    assert guest.console.command('fuzz', 60).startswith('no fuzz run\nruns 3 steps 40 ')


@pytest.mark.parametrize('cmd, error', [
    ('fuzz nope', "error: fuzz: 'nope' is not a seed (a number; fuzz replay, show, stop)"),
    ('fuzz 1 target=usb', "error: fuzz: target must be vsock, net or transport, got 'usb'"),
    ('fuzz 1 steps=0', 'error: fuzz: unknown option or value out of range: steps=0'),
    ('fuzz 1 steps', "error: fuzz: 'steps' is not KEY=VALUE"),
    ('fuzz 1 target=net', 'error: fuzz: target=net needs a virtio-net device'),
    ('fuzz replay', 'error: fuzz: replay needs steps (tokens like hd.4a0012)'),
    ('fuzz add target=net', 'error: fuzz: add needs steps (tokens like hd.4a0012)'),
    ('fuzz replay zz.1', "error: fuzz: 'zz.1' is not a step (KIND.HEX)"),
    ('fuzz replay hd.12345678123456781', "error: fuzz: 'hd.12345678123456781' is not a step "
     "(KIND.HEX)"),
    ('fuzz replay target=net hd.1', 'error: fuzz: hd.1 is no net step'),
    ('fuzz replay hd.1 st.2', 'error: fuzz: st.2 is no vsock step'),
    ('fuzz show', 'error: fuzz: show needs a SEED'),
])
def test_bad_console_input_is_one_line(guest, cmd, error):
    assert guest.console.command(cmd, 60) == error
    assert guest.console.command('fuzz', 60).startswith('no fuzz run\nruns 0 ')


def last_line(out):
    """A command's own answer: batch lines of a run may come before it
    (a batch's settle line, after it)."""
    lines = [x for x in out.splitlines() if x != 'fuzz settle']
    return lines[-1] if lines else ''


def test_a_run_at_a_time(guest):
    out = guest.console.command('fuzz 5 steps=100000 batch=64', 60)
    assert last_line(out) == 'fuzz 0x5 vsock: steps 0..99999, batches of 64', out
    assert last_line(guest.console.command('fuzz 6', 60)) == \
        'error: fuzz: a run is on (fuzz stop)'
    assert last_line(guest.console.command('fuzz replay hd.0', 60)) == \
        'error: fuzz: a run is on (fuzz stop)'
    mark = len(guest.console.text)
    out = guest.console.command('fuzz stop', 60)
    assert {'fuzz: no more steps; the batch ends with its line',
            'fuzz 0x5 vsock: stopped'} & set(out.splitlines()), out
    # the batch's own settle and line: a device the steps stopped is reset
    if 'stopped' not in out:
        assert guest.console.search(fuzz.BATCH_LINE, mark, 120), guest.console.text[-1000:]
    assert 'no fuzz run' in guest.console.command('fuzz', 60).splitlines()
    guest.console.command('', 60)
    assert not guest.after()


def test_boot_key_runs_a_fuzz_run():
    """fuzz= on the command line runs the seed's steps from boot, in
    batches, with no console command; the device serves afterwards."""
    sess = fuzz_backends.Session('packed', LOG_DIR, name='fuzz-bootkey')
    sess.opts = rr.parse_args(sess.launcher_args('packed', 'tcg') + [
        '--cmdline', 'fuzz=%d fuzz_steps=48 fuzz_batch=24' % SEED])
    g = fuzz_backends.OursGuest(sess)
    try:
        g.start()
        second = re.compile(r'fuzz 0x%x vsock 24\+24: [^\n]*\n' % SEED)
        assert g.console.search(second, 0, 120), g.console.text[-2000:]
        lines = list(fuzz.BATCH_LINE.finditer(g.console.text))
        assert [(m.group('start'), m.group('n')) for m in lines] == [('0', '24'), ('24', '24')]
        for m in lines:
            start = int(m.group('start'))
            assert m.group('digest') == fuzz_steps.steps(SEED, 'vsock', start, 24)[1]
        out = g.console.command('fuzz', 60)
        assert re.search(r'^no fuzz run\nruns 1 steps 48 ', out, re.M), out
        g.console.command('', 60)
        assert not g.after()
    finally:
        g.stop()


class Opts:
    def __init__(self, steps, rings):
        self.steps, self.time = steps, None
        self.rings, self.targets = rings, ['vsock', 'transport']
        self.no_minimise = True
        self.minimise_time = 0
        self.verbose = 1
        self.kinds = []


@pytest.mark.parametrize('ring', ['split', 'packed'])
def test_short_campaign_finds_nothing_in_our_back_end(ring):
    c = fuzz.Campaign(OURS, SEED, Opts(768, [ring]), None)
    c.log_dir = LOG_DIR
    c.run()
    s = c.summary()
    assert s['steps'] == 768 and c.next['transport'] >= 32, s
    assert not c.found and not c.failures, [f.__dict__ for f in c.found.values()]
    assert s['nested_faults'] == 0, s


def test_a_back_end_command_of_your_own():
    """--backend CMD: a back end the launcher starts from a command line
    with the placeholders, no counters asked of it (here ours, named as
    a user would name theirs)."""
    cmd = '%s --socket {socket} --uds {uds} --guest-cid {cid}' % DEFAULT_VSOCK_BACKEND
    c = fuzz.Campaign(fuzz_backends.custom(cmd), SEED, Opts(160, ['split']), None)
    c.log_dir = LOG_DIR
    c.run()
    assert c.steps == 160 and not c.found, c.summary()
    assert c.environment()['backend_label'] == cmd


def test_generator_is_built():
    assert os.path.exists(fuzz_steps.GEN)
    assert re.match(r'^usage: ', os.popen(fuzz_steps.GEN + ' --help').read())
