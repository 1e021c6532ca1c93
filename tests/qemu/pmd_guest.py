# SPDX-License-Identifier: MIT
"""A guest whose virtio-net is served by dpdk-testpmd over vhost-user, for
the module fixtures of the net tests (test_net_testpmd, test_net_rx,
test_net_mq): testpmd started first, then the guest on its socket; both
stopped, and the socket's folder removed, when the fixture ends."""

import os
import shutil
import tempfile

from ringside.commands import net as bench

from conftest import ELF, REPO, require_image
from ringside_qemu import Guest

LOG_DIR = os.path.join(REPO, 'build', 'qemu-test-logs')


def pmd_guest(name, pmd_args, guest_qemu, irq='poll', machine='q35', keys='', launcher=()):
    """Yield the started Guest, its TestPmd as .pmd. `pmd_args` go to
    TestPmd, `guest_qemu(sock)` gives the guest's QEMU arguments for the
    vhost-user socket, `keys` more of the guest's command line, `launcher`
    more of ringside run's options (e.g. smp_checks.smp_args)."""
    require_image(ELF)
    os.makedirs(LOG_DIR, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix='ringside-testpmd-')
    sock = os.path.join(workdir, 'vhost-net.sock')
    log = open(os.path.join(LOG_DIR, name + '.testpmd.log'), 'w')
    pmd = bench.TestPmd(sock, log=log, **pmd_args)
    g = None
    try:
        pmd.start()
        g = Guest('--boot', 'elf', '--machine', machine, *launcher, '--cmdline',
                  ('ip=%s gw=%s irq=%s %s' % (bench.GUEST_IP, bench.PEER_IP, irq, keys)).strip(),
                  '--', *guest_qemu(sock), name=name)
        g.pmd = pmd
        g.start()
        yield g
    finally:
        if g:
            g.stop()
        pmd.stop()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
