# SPDX-License-Identifier: MIT
"""The nested host (host/nested): a Debian L1 under TCG that runs KVM and
the kernel's vhost back ends, and the KVM suite (tests/kvm) run inside it:
ringside and the Linux guest on the kernel's vhost-vsock under KVM."""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from ringside_qemu import REPO

pytestmark = pytest.mark.slow     # every test but one boots L1 under TCG

NESTED = os.path.join(REPO, 'host', 'nested')
L1 = os.path.join(REPO, 'build', 'nested-host', 'initrd')
# The KVM suite's tests (tests/kvm): all must run and pass inside L1.
KVM_SUITE_MIN_TESTS = 19


@pytest.fixture(autouse=True, scope='module')
def l1_built():
    if not os.path.exists(L1):
        pytest.fail('%s missing: run make nested-host' % os.path.relpath(L1, REPO),
                    pytrace=False)


def nested(*args, timeout=900, env=None):
    return subprocess.run([sys.executable, NESTED, *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=env, cwd=REPO)


def test_output_and_exit_status_come_back():
    out = nested('sh', '-c', 'echo out; echo err >&2; ls /dev/kvm /dev/vhost-vsock '
                 '/dev/vhost-net; pwd; exit 7')
    assert out.returncode == 7, out.stderr
    assert out.stdout.split() == ['out', '/dev/kvm', '/dev/vhost-net', '/dev/vhost-vsock', REPO]
    assert out.stderr.strip() == 'err'


def test_a_failed_l1_is_one_clear_error():
    env = dict(os.environ, RINGSIDE_QEMU='/bin/false')
    out = nested('true', env=env, timeout=120)
    assert out.returncode == 125
    assert out.stderr.strip() == "nested: error: L1's QEMU exited with status 1: no message"


def test_without_svm_guests_fall_back_to_tcg():
    out = nested('--cpu', 'qemu64,-svm', 'host/ringside-run', '--boot', 'elf', '-v',
                 '--cmd', 'get idle')
    assert out.returncode == 0, out.stderr
    assert re.search(r'^nested: L1 has no KVM \(insmod kvm_amd: .*\): its guests run under '
                     r'TCG$', out.stderr, re.M), out.stderr
    assert '/dev/kvm not usable, using tcg' in out.stderr, out.stderr
    assert out.stdout.strip() == 'idle=halt', out.stdout


# Under nesting an L2's serial console now and then stops in the middle of
# a command's output and never goes on (ringside's `config`, the Linux
# guest's /proc/interrupts alike; cause not found): the suite would fail
# at random, so it runs when asked (make test-nested), not in make test.
SUITE_ENV = 'RINGSIDE_NESTED_SUITE'


@pytest.mark.skipif(os.environ.get(SUITE_ENV) != '1',
                    reason='the KVM suite runs with make test-nested (%s=1): nested L2 consoles '
                           'stop mid-output now and then, cause not found' % SUITE_ENV)
def test_kvm_suite_inside():
    """tests/kvm on the nested host: every test ran (none skipped) and passed."""
    report = os.path.join(REPO, 'build', 'nested-kvm-suite.xml')
    if os.path.exists(report):
        os.unlink(report)
    out = nested('/usr/bin/python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                 'tests/kvm', '--junitxml', report, timeout=1800)
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == 'testsuite' else suite.find('testsuite')
    counts = {k: int(suite.get(k)) for k in ('tests', 'failures', 'errors', 'skipped')}
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert counts['failures'] == counts['errors'] == counts['skipped'] == 0, counts
    assert counts['tests'] >= KVM_SUITE_MIN_TESTS, counts
