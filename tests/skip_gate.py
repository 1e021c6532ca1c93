# SPDX-License-Identifier: MIT
"""The skip gate of tests/host and tests/qemu: a test skipped for a reason
not in tests/expected-skips.txt fails the run (status 1), each named with
its reason. A missing tool or build product must not pass quietly as a
skip; the few skips that are right (a QEMU bug, a host that has what the
test needs it without) are listed there, each with why.

Both conftests import the two hooks below. RINGSIDE_ALLOW_SKIPS=1 turns the
gate off for a run on purpose (a machine without root or packages)."""

import fnmatch
import os

LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'expected-skips.txt')
# {node id: reason}; a run of tests/host and tests/qemu together calls the
# hooks once per conftest
_skipped = {}
_done = []


def expected_skips(path=None):
    """[(node id pattern, reason)] from the list: a line is a pattern
    (fnmatch, matched against the node id), white space, then why; #
    starts a comment."""
    out = []
    with open(path or LIST) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                pattern, _, why = line.partition(' ')
                out.append((pattern, why.strip()))
    return out


def unexpected(skipped, allowed):
    """The (node id, reason) of `skipped` no pattern of `allowed` covers."""
    return [(node, why) for node, why in skipped
            if not any(fnmatch.fnmatchcase(node, pattern) for pattern, _ in allowed)]


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, 'wasxfail'):
        r = report.longrepr
        why = r[2] if isinstance(r, tuple) else str(r)
        _skipped[report.nodeid] = why.removeprefix('Skipped: ')


def pytest_sessionfinish(session, exitstatus):
    if os.environ.get('RINGSIDE_ALLOW_SKIPS') == '1' or _done:
        return
    _done.append(True)
    bad = unexpected(sorted(_skipped.items()), expected_skips())
    if not bad:
        return
    tr = session.config.pluginmanager.get_plugin('terminalreporter')
    if tr:
        tr.write_line('')
        where = os.path.relpath(LIST, str(session.config.rootpath))
        tr.write_line('skip gate: %d test(s) skipped for a reason %s does not list '
                      '(RINGSIDE_ALLOW_SKIPS=1 allows them):' % (len(bad), where),
                      red=True, bold=True)
        for node, why in bad:
            tr.write_line('  %s: %s' % (node, why), red=True)
    if session.exitstatus == 0:
        session.exitstatus = 1
