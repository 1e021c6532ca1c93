# SPDX-License-Identifier: MIT
"""Shared fixtures for the QEMU tests (run: /usr/bin/python3 -m pytest -v tests/qemu).

Environment:
  RINGSIDE_TEST_ACCEL   accelerator for guests the tests boot (default tcg)
  RINGSIDE_ALLOW_SKIPS  1: skips not in tests/expected-skips.txt do not fail the run
Logs of every guest: build/qemu-test-logs/<name>.serial.log / .stderr.log
"""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# The tests' helpers here, and the launcher's package host/ringside.
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), 'host'))
sys.path.insert(0, os.path.dirname(HERE))

import ringside_qemu  # noqa: E402
from skip_gate import pytest_runtest_logreport, pytest_sessionfinish  # noqa: E402,F401
from ringside_qemu import Guest, wakeup_problems  # noqa: E402

REPO = ringside_qemu.REPO
ISO = os.path.join(REPO, 'build', 'ringside.iso')
ELF = os.path.join(REPO, 'build', 'ringside.elf')
ESP = os.path.join(REPO, 'build', 'ringside-esp.img')


def pytest_report_header(config):
    try:
        qemu = subprocess.run(['qemu-system-x86_64', '--version'], capture_output=True,
                              text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        qemu = 'qemu-system-x86_64 not found'
    have = ', '.join('%s %s' % (os.path.relpath(p, REPO),
                                'present' if os.path.exists(p) else 'MISSING')
                     for p in (ISO, ELF))
    return ['ringside: %s; accel %s' % (qemu, os.environ.get('RINGSIDE_TEST_ACCEL', 'tcg')),
            'ringside: %s; logs in %s' % (have, os.path.relpath(ringside_qemu.LOG_DIR, REPO))]


def require_image(path):
    """A build product (image, host program): missing means the build failed,
    a failure, not a skip."""
    if not os.path.exists(path):
        pytest.fail('%s missing: run make' % os.path.relpath(path, REPO), pytrace=False)


@pytest.fixture(autouse=True)
def no_lost_wakeups():
    """After every test: no guest it ran lost a wake-up or broke a CPU rule,
    and none on our back end under TCG missed a notification (the idle
    watchdog prints each once a boot, kernel/idle.c)."""
    yield
    problems = wakeup_problems()
    if problems:
        pytest.fail('\n'.join(problems), pytrace=False)


@pytest.fixture
def guest_factory(request):
    """make(*launcher_args, name=None) -> started Guest; all stopped at teardown."""
    guests = []

    def make(*args, name=None, wait_ready=True, **kw):
        g = Guest(*args, name=name or request.node.name, **kw)
        guests.append(g)
        return g.start(wait_ready=wait_ready)

    yield make
    for g in guests:
        g.stop()
