# SPDX-License-Identifier: MIT
"""The guest-side fuzzer against the kernel's vhost-vsock under KVM: a
short fixed-seed campaign (host/ringside/fuzz.py), vsock and transport
steps, on the split ring (the kernel's vhost has no packed one).

Report only, as the attack modes are: nobody here owns this back end.
What must hold is what a host needs: QEMU stays up, the host kernel
logs no oops, BUG, WARNING or hung task, the guest never faults, and
after every reset the guest asked for the device serves again. That a
malformed chain stops the kernel's TX queue until a reset is known
(docs/attacks.md) and counted, not a failure here; the campaign's
table, with whatever the kernel did, goes to the test's output."""

from ringside import fuzz, fuzz_backends
from ringside_qemu import LOG_DIR

SEED = 0x20261206
STEPS = 320
# what no back end may do to its host, whatever the guest sends
HOST_FAULTS = ('crash', 'host-kernel', 'guest', 'dead', 'resources')


class Opts:
    steps, time = STEPS, None
    rings = ['split']
    targets = ['vsock', 'transport']
    no_minimise = True
    minimise_time = 0
    verbose = 1
    kinds = []


def test_kernel_vhost_vsock_survives_a_short_campaign():
    c = fuzz.Campaign(fuzz_backends.backends()['kernel'], SEED, Opts(), None)
    c.log_dir = LOG_DIR
    c.run()
    fuzz.print_tables(c)
    s = c.summary()
    assert s['steps'] >= STEPS and c.next['transport'] > 0, s
    host = [f for f in c.found.values() if f.oracle in HOST_FAULTS]
    assert not host, ['%s: %s' % (f.oracle, f.evidence) for f in host]
