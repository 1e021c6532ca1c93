# SPDX-License-Identifier: MIT
"""The skip gate (tests/skip_gate.py): a skip the list does not name fails
the run; a listed one, or RINGSIDE_ALLOW_SKIPS=1, does not."""

import os
import subprocess
import sys

from conftest import REPO

TESTS = '''
import pytest

def test_runs():
    pass

@pytest.mark.skip(reason='QEMU bug 1')
def test_known():
    pass

@pytest.mark.skip(reason='tool missing')
def test_unknown():
    pass

@pytest.mark.xfail(reason='expected')
def test_xfail():
    assert False
'''


def run(tmp_path, listed, env=None):
    (tmp_path / 'pytest.ini').write_text('[pytest]\n')
    (tmp_path / 'skips.txt').write_text('# comment\n' + ''.join(
            't/test_x.py::%s  why\n' % name for name in listed))
    (tmp_path / 't').mkdir(exist_ok=True)
    (tmp_path / 't' / 'conftest.py').write_text(
            'import sys\nsys.path.insert(0, %r)\nimport skip_gate\n'
            'skip_gate.LIST = %r\n'
            'from skip_gate import pytest_runtest_logreport, pytest_sessionfinish\n'
            % (os.path.join(REPO, 'tests'), str(tmp_path / 'skips.txt')))
    (tmp_path / 't' / 'test_x.py').write_text(TESTS)
    return subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           't'], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, 'RINGSIDE_ALLOW_SKIPS': '0', **(env or {})})


def test_an_unlisted_skip_fails_the_run(tmp_path):
    p = run(tmp_path, ['test_known'])
    assert p.returncode == 1, p.stdout
    assert 'skip gate: 1 test(s) skipped' in p.stdout
    assert 't/test_x.py::test_unknown: tool missing' in p.stdout
    assert 'test_known:' not in p.stdout


def test_listed_skips_pass(tmp_path):
    p = run(tmp_path, ['test_known', 'test_unk*'])
    assert p.returncode == 0, p.stdout
    assert 'skip gate' not in p.stdout


def test_allowed_on_purpose(tmp_path):
    p = run(tmp_path, [], env={'RINGSIDE_ALLOW_SKIPS': '1'})
    assert p.returncode == 0, p.stdout


def test_the_list_parses():
    """Every entry has a reason, and the MSI-X cells are there."""
    import skip_gate
    allowed = skip_gate.expected_skips()
    assert allowed and all(why for _, why in allowed)
    msix = ['tests/qemu/test_net_rx.py::test_%s[%s-mrg-msix]' % (t, ring)
            for t in ('features', 'txonly_counts', 'stack_back_after_netsink',
                      'netsink_errors', 'poweroff') for ring in ('split', 'packed')]
    assert skip_gate.unexpected([(n, '') for n in msix], allowed) == []
    assert skip_gate.unexpected([('tests/qemu/test_net_rx.py::test_features[split-mrg-poll]',
                                  '')], allowed)
