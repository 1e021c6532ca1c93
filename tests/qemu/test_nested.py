# SPDX-License-Identifier: MIT
"""The nested host (./ringside nested): a Debian L1 under TCG that runs KVM and
the kernel's vhost back ends, and the KVM suite (tests/kvm) run inside it:
ringside and the Linux guest on the kernel's vhost-vsock under KVM."""

import os
import re
import subprocess
import sys
import time
import warnings
import xml.etree.ElementTree as ET

import pytest

from ringside_qemu import FRONT_DOOR, REPO

sys.path.insert(0, os.path.join(REPO, 'host'))
from ringside import vcpu_watch  # noqa: E402
from ringside.commands.nested import EXIT_L1_STUCK  # noqa: E402

pytestmark = pytest.mark.slow     # every test but one boots L1 under TCG

L1 = os.path.join(REPO, 'build', 'nested-host', 'initrd')
L1_6_12 = os.path.join(REPO, 'build', 'nested-host-6.12', 'initrd')
# The KVM suite's tests (tests/kvm): all must run and pass inside L1.
KVM_SUITE_MIN_TESTS = 44


@pytest.fixture(autouse=True, scope='module')
def l1_built():
    for path, target in ((L1, 'nested-host'), (L1_6_12, 'nested-host-6.12')):
        if not os.path.exists(path):
            pytest.fail('%s missing: run make %s' % (os.path.relpath(path, REPO), target),
                        pytrace=False)


def nested(*args, timeout=900, env=None):
    return subprocess.run([sys.executable, FRONT_DOOR, 'nested', *args], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env,
                          cwd=REPO)


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
    assert out.stderr.strip() == ("ringside nested: error: L1's QEMU exited with status 1: "
                                  "no message")


def test_without_svm_guests_fall_back_to_tcg():
    out = nested('--cpu', 'qemu64,-svm', 'run', '--boot', 'elf', '-v',
                 '--cmd', 'get idle')
    assert out.returncode == 0, out.stderr
    assert re.search(r'^ringside nested: L1 has no KVM \(insmod kvm_amd: .*\): its guests run '
                     r'under TCG$', out.stderr, re.M), out.stderr
    assert '/dev/kvm not usable, using tcg' in out.stderr, out.stderr
    assert out.stdout.strip() == 'idle=halt', out.stdout


def test_a_stuck_l1_is_stopped_at_once():
    """L1's kernel reporting a CPU stuck (here a line like the watchdog's,
    written to its log) stops L1 with its own status, not at --timeout."""
    out = nested('--timeout', '600', 'sh', '-c', 'echo "<1>watchdog: BUG: soft lockup - '
                 'CPU#0 stuck for 99s! [selftest:1]" > /dev/kmsg; sleep 600', timeout=300)
    assert out.returncode == EXIT_L1_STUCK, out.stderr
    assert out.stderr.startswith('ringside nested: error: L1 is stuck, stopped: its kernel reports '
                                 '"soft lockup - CPU#0 stuck for 99s! [selftest:1]"'), out.stderr


def test_a_wedged_l1_is_stopped_at_once():
    """L1 that runs nothing any more (here: its heartbeat loop stopped)
    is stopped after --stuck seconds with the same status."""
    out = nested('--stuck', '15', '--timeout', '600', 'sh', '-c',
                 'kill -STOP $(pgrep -P $$); sleep 600', timeout=300)
    assert out.returncode == EXIT_L1_STUCK, out.stderr
    assert re.match(r'ringside nested: error: L1 is stuck, stopped: nothing ran in it for 1\d s ',
                    out.stderr), out.stderr


# The nested hypervisor (QEMU's emulated SVM) fails in two ways no guest
# causes, ringside and the Linux guest alike (docs/results/kvm.md):
# - an L2 vCPU comes back from an I/O intercept holding L1's state instead
#   of its own (about once per few hundred KiB of console output); the
#   launcher inside L1 reads the vCPU's registers when a console wait times
#   out and says so (vcpu_watch.LOST);
# - a ringside boot stops before ringside runs, its vCPU outside ringside's
#   code (seen halted in SeaBIOS's 32-bit mode at GRUB's first
#   instructions); the launcher says so too (vcpu_watch.BEFORE);
# - an L1 CPU stays stuck running an L2 vCPU; L1's watchdog reports a soft
#   lockup, or L1 stops running anything at all (its heartbeat stops), and
#   ringside nested stops L1 (EXIT_L1_STUCK).
# The suite runs a file per L1, so one fault costs one file: a file lost
# that way alone runs again, up to FAULT_RUNS times in all, and the warning
# shows the evidence. Any other failure fails the suite.
KVM_DIR = os.path.join(REPO, 'tests', 'kvm')
FAULT_RUNS = 3
FILE_TIMEOUT = 600      # s; a file takes up to about 4 min
SUITE_BUDGET = 2400     # s for the suite, reruns included (16 to 21 min without)


def kvm_files():
    return sorted('tests/kvm/' + f for f in os.listdir(KVM_DIR)
                  if f.startswith('test_') and f.endswith('.py'))


def l1_kernel(path):
    """The L1 kernel a file of the suite names (a line L1_KERNEL = 'SERIES',
    host/nested --kernel), else None: this machine's."""
    with open(os.path.join(REPO, path)) as f:
        m = re.search(r"^L1_KERNEL = '([^']+)'$", f.read(), re.M)
    return m.group(1) if m else None


def kvm_run(path, timeout):
    """One file of tests/kvm in its own L1: (completed process, counts or
    None without a report, [(node id, failure text)])."""
    report = os.path.join(REPO, 'build', 'nested-kvm-suite.xml')
    if os.path.exists(report):
        os.unlink(report)
    kernel = l1_kernel(path)
    out = nested(*(['--kernel', kernel] if kernel else []), '--timeout', '%d' % timeout,
                 '/usr/bin/python3', '-m', 'pytest', '-q',
                 '-p', 'no:cacheprovider', path, '--junitxml', report, timeout=timeout + 120)
    if not os.path.exists(report):
        return out, None, []
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == 'testsuite' else suite.find('testsuite')
    counts = {k: int(suite.get(k)) for k in ('tests', 'failures', 'errors', 'skipped')}
    failed = []
    for case in suite.iter('testcase'):
        for bad in list(case.findall('failure')) + list(case.findall('error')):
            node = '%s.py::%s' % (case.get('classname').replace('.', '/'), case.get('name'))
            failed.append((node, '%s\n%s' % (bad.get('message', ''), bad.text or '')))
    return out, counts, failed


def hypervisor_fault(out, failed):
    """The evidence when the nested hypervisor alone lost this run, else None."""
    if out.returncode == EXIT_L1_STUCK:
        return out.stderr.strip().splitlines()[-1]
    reports = [vcpu_watch.below_us(text) for _, text in failed]
    if reports and all(reports):
        return '%s: %s' % (failed[0][0], reports[0][:300])
    return None


def run_file(path, deadline):
    """path's final run, after up to FAULT_RUNS - 1 runs lost to faults."""
    for attempt in range(FAULT_RUNS):
        left = deadline - time.monotonic()
        if left < 60:
            return None, None, [(path, 'not run: the suite is over its %d s budget'
                                 % SUITE_BUDGET)]
        out, counts, failed = kvm_run(path, min(FILE_TIMEOUT, int(left)))
        why = hypervisor_fault(out, failed)
        if not why or attempt == FAULT_RUNS - 1:
            return out, counts, failed
        warnings.warn('KVM suite: %s lost to the nested hypervisor, run again: %s'
                      % (path, why))


def test_kvm_suite_inside():
    """tests/kvm on the nested host: every test ran (none skipped) and passed."""
    deadline = time.monotonic() + SUITE_BUDGET
    tests, problems = 0, []
    for path in kvm_files():
        out, counts, failed = run_file(path, deadline)
        if failed:
            problems += ['%s: %s' % (node, text.strip()[:1500]) for node, text in failed]
        elif out.returncode != 0 or counts is None:
            problems.append('%s: status %d, no failure reported: %s' % (
                path, out.returncode, (out.stdout[-2000:] + out.stderr[-1000:]).strip()))
        elif counts['skipped']:
            problems.append('%s: %d skipped: %s' % (path, counts['skipped'], out.stdout[-1000:]))
        else:
            tests += counts['tests']
    assert not problems, '\n\n'.join(problems)
    assert tests >= KVM_SUITE_MIN_TESTS, tests
