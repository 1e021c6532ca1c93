# SPDX-License-Identifier: MIT
"""A hostile guest against our back end: ringside's attack modes
(drivers/virtio/vsock_attack.c) written into the live TX queue of
build/host/ringside-vhost-vsock, one boot per ring layout for all the
modes that layout takes (host/ringside/attack.py runs them).

For every mode: the back end stays up, a bystander connection to the
echo service stays byte-exact while the attack runs (unless the guest had
to reset the device), the violations are counted where the mode is one,
and a new connection echoes 1 B, 64 KiB and 1 MiB byte-exact after it.
Bad chains the ring can still step over are dropped and the ring goes
on; an avail index past the ring size, or a packed chain running into a
slot not available, stops it and must end in a reset the guest asked
for, after which the device works again.
"""

import os
import re

import pytest

from ringside import attack as am
from ringside.wait import until
from ringside_qemu import LOG_DIR

# what each mode must be counted as by the back end (its own counter)
HEADER_COUNTED = {
    'len-over-buf': 'bad_hdrs', 'len-over-64k': 'bad_hdrs', 'len-negative': 'bad_hdrs',
    'bad-op': 'bad_hdrs', 'bad-type': 'bad_hdrs', 'src-cid-host': 'bad_hdrs',
    'src-cid-other': 'bad_hdrs', 'rw-unused': 'rst_tx', 'response': 'rst_tx',
    'seq-huge': 'credit_violations',
}
# modes a correct device absorbs without a violation of its own
ABSORBED = ('seq-no-eom', 'buf-alloc-zero', 'buf-alloc-huge', 'buf-alloc-shrink', 'fwd-cnt-back',
            'fwd-cnt-jump', 'credit-flood', 'shutdown-bits', 'notify-flood')
# chains with no header to read (length 0, device-writable on TX): the
# vsock header check drops them
RING_NO_HEADER = ('ring-len-zero', 'ring-write-tx')
# a device-readable RX buffer: the back end gives it back unwritten
RING_RX = ('ring-rx-readonly',)
# bad buffers or tables where the ring still says where the next chain
# starts: the back end gives the chain back unread (used, length 0),
# counts it and goes on (host/vring/vring_split.c, vring_packed.c)
RING_DROPPED = ('ring-addr-out', 'ring-addr-wrap', 'ring-len-4g', 'ring-indirect-nested',
                'ring-indirect-odd', 'ring-indirect-empty')
SPLIT_DROPPED = ('ring-loop', 'ring-long')
# nothing to resynchronise on (an avail index past the ring size, a
# packed chain running into a slot not available): the back end stops
# the ring, signals the front end, and the guest's reset brings it back
RING_BROKEN = ('ring-avail-jump', 'packed-next-last', 'packed-wrap-stale')
# a packed slot whose wrap bits lie is not available to the device: it
# waits, correctly, and the guest must reset it
RING_UNSEEN = ('packed-wrap-lie',)
# a legal packed chain from the ring's last slot into slot 0 (the header
# split over the two): read whole, nothing to count
LEGAL = ('packed-wrap-chain',)
HEADER_MODES = tuple(HEADER_COUNTED) + ABSORBED
TIMEOUT = 3600


def check(res):
    assert res.outcome not in ('crashes', 'stalls'), res.summary()
    assert not res.after, res.summary()
    mode = res.mode
    if mode in RING_BROKEN + RING_UNSEEN:
        assert res.outcome == 'resets', res.summary()
        assert res.delta.get('rings_broken', 0) == (mode in RING_BROKEN), res.summary()
        return
    assert 'device answered' in res.guest_line, res.summary()
    assert not res.bystander, res.summary()
    assert res.exchanges >= 1, res.summary()
    if mode in HEADER_COUNTED:
        assert res.delta.get(HEADER_COUNTED[mode], 0) >= 1, res.summary()
    if mode in RING_NO_HEADER:
        assert res.delta.get('bad_hdrs', 0) >= 1, res.summary()
    if mode in RING_DROPPED + SPLIT_DROPPED + RING_RX:
        assert res.delta.get('ring_errors', 0) >= 1, res.summary()
    assert res.delta.get('rings_broken', 0) == 0, res.summary()
    if mode in LEGAL:
        assert res.outcome == 'survives', res.summary()


@pytest.mark.parametrize('ring', ['split', 'packed'])
def test_every_mode_against_our_back_end(ring):
    modes = HEADER_MODES + RING_NO_HEADER + RING_RX + RING_DROPPED
    if ring == 'split':
        modes += SPLIT_DROPPED + ('ring-avail-jump',)
    else:
        modes += ('packed-next-last', 'packed-wrap-stale') + RING_UNSEEN + LEGAL
    results = am.run_session(ring, modes, log_dir=LOG_DIR, name='attack-%s' % ring,
                             verbose=True)
    status = results.pop('_status')
    assert sorted(results) == sorted(modes), sorted(results)
    for mode in modes:
        check(results[mode])
    assert status == 0, 'QEMU exit status %r after poweroff' % status


def test_ring_modes_refused_on_packed():
    """A ring mode on a packed ring says so and writes nothing."""
    results = am.run_session('packed', ('ring-loop', 'len-over-buf'), log_dir=LOG_DIR,
                             name='attack-packed-ringmode')
    assert results['ring-loop'].outcome == '-', results['ring-loop'].summary()
    check(results['len-over-buf'])
    assert results['_status'] == 0


def test_boot_key_runs_an_attack():
    """attack= on the command line starts the mode at boot, with no
    console command; the device answers and stays usable."""
    sess = am.Session('split', LOG_DIR, name='attack-bootkey')
    sess.opts = am.rr.parse_args(['--vsock', '--accel', os.environ.get(
        'RINGSIDE_TEST_ACCEL', 'tcg'), '--boot', 'elf', '--cmdline',
        'attack=rw-unused attack_count=5 attack_every=10'])
    try:
        sess.start()
        # the line may come before the prompt: the whole output, not after a cursor
        m = until(lambda: re.search(r'attack rw-unused: (done[^\n]*)',
                                    sess.launch.console.text), 120, "the attack's end")
        assert 'device answered: sent 5 of 5' in m.group(1), m.group(0)
        # the guest's own tally of the mode, in `attack list`
        out = sess.launch.console.command('attack list', 60)
        line = re.search(r'^\s+rw-unused .*$', out, re.M)
        assert line and 'runs 1 sent 5 refused 0 answered 1 silent 0' in line.group(0), out
        assert sess.counters()['rst_tx'] >= 5
        # a virtio-net mode on a guest without virtio-net: one line, nothing runs
        out = sess.launch.console.command('attack net-short', 60)
        assert out.strip() == 'error: attack: net-short needs a virtio-net device', out
        assert sess.launch.console.command('attack', 60).strip() == 'no attack running'
        assert not am._after(sess)
        assert sess.launch.poweroff(120) == 0
    finally:
        sess.stop()
