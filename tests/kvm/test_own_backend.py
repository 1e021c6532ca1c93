# SPDX-License-Identifier: MIT
"""A vhost developer's workstation: KVM and /dev/vhost-vsock both here.
Your back end (--backend CMD) is the one a command measures, never the
kernel's vhost-vsock in its place; without one, --vsock-transport auto
takes the kernel's. The dry runs show the device QEMU gets; a real bench
run shows the back end was started, in its header and in the saved run."""

import json
import os
import shlex

from ringside import DEFAULT_VSOCK_BACKEND
from ringside_qemu import run_command, run_launcher


def devices(stdout):
    """The -device values of the QEMU line of a dry run (its last line)."""
    argv = shlex.split(stdout.strip().splitlines()[-1])
    return [argv[i + 1] for i, a in enumerate(argv) if a == '-device']


def test_dry_run_takes_your_back_end_over_the_kernels():
    mine = 'my-backend --socket {socket} --uds {uds}'
    r = run_launcher('--dry-run', '--accel', 'kvm', '--boot', 'elf', '--vsock',
                     '--backend', mine, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 2 and shlex.split(lines[0])[0] == 'my-backend', r.stdout
    assert any(d.startswith('vhost-user-vsock-pci,') for d in devices(r.stdout)), r.stdout
    assert not any(d.startswith('vhost-vsock-pci') for d in devices(r.stdout)), r.stdout


def test_dry_run_without_a_back_end_takes_the_kernels():
    r = run_launcher('--dry-run', '--accel', 'kvm', '--boot', 'elf', '--vsock', timeout=60)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1, r.stdout
    assert any(d.startswith('vhost-vsock-pci') for d in devices(r.stdout)), r.stdout


def test_bench_measures_your_back_end(tmp_path):
    mark = tmp_path / 'started'
    out = tmp_path / 'run.json'
    cmd = ('sh -c %s' % shlex.quote(
            'echo started > %s; exec %s --socket {socket} --uds {uds} --guest-cid {cid} '
            '--control {control}' % (mark, DEFAULT_VSOCK_BACKEND)))
    r = run_command('bench', '--sizes', '64', '--count', '50', '--no-stream', '--no-save',
                    '--json', str(out), '--', '--boot', 'elf', '--accel', 'kvm',
                    '--backend', cmd, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert mark.read_text() == 'started\n'
    head = r.stdout.splitlines()[0]
    assert head.startswith('ringside bench: accel kvm, elf boot, back end sh -c '), head
    assert 'kernel vhost-vsock' not in r.stdout
    with open(out) as f:
        run = json.load(f)
    assert run['meta']['vsock']['backend'] == cmd
    assert run['meta']['vsock']['target'][0] == '--uds'
    assert os.path.basename(run['meta']['vsock']['target'][1]) == 'vsock'
