# SPDX-License-Identifier: MIT
"""The Linux guest (Debian's kernel, its own virtio-vsock driver) behind a
faulty device: our back end with --inject, one mode per boot, split and
packed rings. ringside against the same faults is tests/qemu/test_faults.py.

Each case boots Linux behind a back end that injects one mode every 20
packets it puts in the guest's RX queue, echoes byte-exact through the
hybrid socket while the faults hit, stops the injection through the back
end's control socket and echoes up to 1 MiB on a new connection;
host/ringside/commands/faults.py classifies the outcome (survives, degraded,
broken; `./ringside faults` prints the same table for ringside too) and the case asserts it matches
EXPECTED below, with what Linux printed when it gave up on a queue.

The back end's modes are fixed for its life and QEMU 7.2 does not
reconnect a vhost-user-vsock device to a restarted back end, so seeing one
mode alone takes a boot of its own: 20-55 s for Linux under TCG on this
loaded machine, then a degraded case ends at its first failed exchange
(20 s), a broken one at the back end's 10 s connect timeout. Modes
expected to survive therefore share one boot per ring (`together`), all
injected at random; only if that boot loses a byte does each of them get a
boot of its own, to say which one did. Modes that break or degrade the
guest boot alone: a broken queue would hide every mode after it. That
makes 12 boots: the whole file passed in 728 s (TCG, load 10-30,
2026-11-30).
"""

import os
import re
import subprocess

import pytest

import ringside
from ringside.commands import faults as fm
from ringside_qemu import LOG_DIR

import vsockhost as vh

# What Linux 6.1 (Debian's 6.1.0 kernel) makes of each mode, from reading
# drivers/virtio/virtio_ring.c, net/vmw_vsock/virtio_transport.c and
# virtio_transport_common.c; (outcome, the console line it prints, if any).
EXPECTED = {
    # rx_work drops a buffer whose header len exceeds the used length
    # ("Validate length in packet header before skb_put()", in 6.1 stable);
    # vsock has no retransmission, so those bytes are gone and the stream
    # stalls. New connections are fine.
    'short-len': ('degraded', None),
    # the same check: header len 64-128 KiB beyond the used length, dropped
    'len-overflow': ('degraded', None),
    # rx_work's "Drop short/long packets": used length beyond the skb's
    # buffer, dropped with its payload
    'len-beyond': ('degraded', None),
    # no connected socket for the flipped source port; the bound lookup
    # finds the listener on the destination port, which answers anything but
    # REQUEST with an RST (reset_no_sock) the back end ignores
    'rw-unknown': ('survives', None),
    # recv_connected: an op it does not know falls to default (-EINVAL, the
    # packet freed); the connection is untouched
    'bad-op': ('survives', None),
    # recv_pkt: invalid type -> reset_no_sock replies an RST carrying the
    # same bogus type for the real connection's ports; our back end drops a
    # guest header with an unknown type (bad_hdrs), so the RST never lands
    'bad-type': ('survives', None),
    # an RW with no payload is enqueued as an empty skb, reading skips it
    'zero-rw': ('survives', None),
    # RSTs for sockets that do not exist: reset_no_sock never answers an RST
    'rst-storm': ('survives', None),
    # a RESPONSE on an established socket: recv_connected's default case
    'dup-response': ('survives', None),
    # space_update takes buf_alloc as given: Linux sends less, never more
    'credit-lie': ('survives', None),
    # a 1-byte RW is queued like any other (small ones merged, GOOD_COPY_LEN)
    'split': ('survives', None),
    # the connected-socket lookup compares the remote address and the local
    # PORT only; recv_pkt copies dst_cid into local_addr, but send_pkt_info
    # takes the source CID from the transport, so replies stay correct
    'wrong-dst': ('survives', None),
    # virtqueue_get_buf: "id %u out of range" -> BAD_RING marks the RX queue
    # broken; every later get_buf returns NULL and virtio_vsock has no reset
    # path (only remove/freeze), so nothing reaches the guest again
    'bogus-rx-id': ('broken', r'rx:id \d+ out of range'),
    # the same on the TX queue: completions are never reclaimed and
    # virtqueue_add fails on a broken queue, so the guest never sends again
    'bogus-tx-id': ('broken', r'tx:id \d+ out of range'),
    # an id in range whose buffer is not outstanding: desc_state[id].data is
    # NULL, "id %u is not a head!" -> BAD_RING, broken for good as above
    # (split: detach_buf_split's check; packed: the same in
    # virtqueue_get_buf_ctx_packed)
    'stale-rx-id': ('broken', r'rx:id \d+ is not a head'),
    'stale-tx-id': ('broken', r'tx:id \d+ is not a head'),
}

ACCEL = os.environ.get('RINGSIDE_TEST_ACCEL', 'tcg')


def backend_modes():
    """The modes from the back end binary itself (built if missing)."""
    subprocess.run(['make', '-s', os.path.relpath(fm.DEFAULT_VSOCK_BACKEND, fm.REPO)],
                   cwd=fm.REPO, check=True, stdout=subprocess.DEVNULL)
    return fm.inject_modes()


MODES = backend_modes()


SURVIVABLE = [m for m in MODES if EXPECTED.get(m, ('',))[0] == 'survives']


@pytest.fixture(scope='module')
def images():
    return vh.build_all()


@pytest.fixture(scope='module')
def together(images):
    """ring -> the Result of ONE boot injecting every mode expected to
    survive, drawn at random, a fault every 5 packets, until each has hit
    3 times: exact echo throughout is each of them surviving (and a harder
    test than one at a time). Saves 2 x 8 Linux boots."""
    done = {}

    def run(ring):
        if ring not in done:
            done[ring] = fm.run_cell(ringside, 'linux', ring, ','.join(SURVIVABLE), every=5,
                                     log_dir=LOG_DIR, accel=ACCEL, label='survivable')
            print(done[ring].summary())
        return done[ring]
    return run


def test_every_mode_has_an_expected_outcome():
    assert sorted(MODES) == sorted(EXPECTED), (
        'modes without an entry: %s; entries without a mode: %s'
        % (set(MODES) - set(EXPECTED), set(EXPECTED) - set(MODES)))


def check(res, want, said):
    assert res.outcome == want, res.summary()
    if said:
        assert any(re.search(said, line) for line in res.markers), res.summary()
    else:
        # no queue marked broken, no kernel BUG or Oops
        assert not res.markers, res.summary()


@pytest.mark.slow
@pytest.mark.parametrize('mode', MODES)
@pytest.mark.parametrize('ring', fm.RINGS)
def test_linux_under_fault(together, ring, mode):
    assert mode in EXPECTED, ('new inject mode %s: run ./ringside faults --guests linux '
                              '--modes %s and add its outcome and reason' % (mode, mode))
    want, said = EXPECTED[mode]
    if want == 'survives':
        res = together(ring)
        if res.outcome == 'survives':
            # it was among the faults that all left every byte exact
            assert res.injected[mode] > 0 and res.ok > 0, res.summary()
            check(res, want, said)
            return
        # one of them broke the exchange: see whether this one does alone
    res = fm.run_cell(ringside, 'linux', ring, mode, log_dir=LOG_DIR, accel=ACCEL)
    print(res.summary())
    check(res, want, said)
