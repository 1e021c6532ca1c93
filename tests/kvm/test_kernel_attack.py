# SPDX-License-Identifier: MIT
"""A hostile guest against the kernel's vhost-vsock: ringside's attack
modes (drivers/virtio/vsock_attack.c) in the live TX queue, one boot for
a header mode, a bad chain the ring can step over, one it cannot, and
the credit lies (host/ringside/attack_kernel.py).

Report only: nobody here owns that back end. What must hold is what a
host needs: the host kernel logs no oops, BUG or WARNING, QEMU stays up,
and a new connection echoes 1 B, 64 KiB and 1 MiB byte-exact after each
mode. docs/attacks.md has the whole matrix and what the kernel does."""

from ringside import attack_matrix as am
from ringside_qemu import LOG_DIR

MODES = ('len-over-buf', 'ring-addr-out', 'ring-loop', 'fwd-cnt-jump', 'seq-huge')


def test_kernel_back_end_survives_a_hostile_guest():
    results = am.run_session('split', MODES, log_dir=LOG_DIR, accel='kvm',
                             name='kvm-attack', verbose=True, backend='kernel')
    status = results.pop('_status')
    assert sorted(results) == sorted(MODES), sorted(results)
    for mode in MODES:
        res = results[mode]
        assert res.outcome not in ('crashes', 'stalls'), res.summary()
        assert not res.after, res.summary()
        assert not res.delta.get('kernel_warnings'), res.summary()
    # the kernel refuses a chain that loops: QEMU logs the ring's error
    assert results['ring-loop'].delta.get('vring_errors', 0) >= 1, results['ring-loop'].summary()
    assert status == 0, 'QEMU exit status %r after poweroff' % status
