# SPDX-License-Identifier: MIT
"""host/nested's lockup watch: L1's console is read as it grows, and only
a CPU stuck at least the limit stops L1; and its choice of L1's kernel."""

import os
import time

from conftest import usage_error
from ringside.commands import nested

# as Linux 6.1 prints it on L1's console (a nested run of this project)
LINE = b'[  135.118226] watchdog: BUG: soft lockup - CPU#1 stuck for %ds! [qemu-system-x86:132]\n'


def test_a_short_lockup_is_let_pass_a_long_one_stops(tmp_path):
    log = tmp_path / 'console.log'
    watch = nested.LockupWatch(str(log), 45)
    assert watch.check() is None              # no console yet
    log.write_bytes(b'Run /init as init process\n' + LINE % 26)
    assert watch.check() is None
    with open(log, 'ab') as f:
        f.write(LINE % 52)
    assert watch.check() == 'soft lockup - CPU#1 stuck for 52s! [qemu-system-x86:132]'


def test_a_line_split_across_reads_is_seen_whole(tmp_path):
    log = tmp_path / 'console.log'
    watch = nested.LockupWatch(str(log), 45)
    line = LINE % 48
    log.write_bytes(line[:40])
    assert watch.check() is None
    with open(log, 'ab') as f:
        f.write(line[40:])
    assert watch.check() == 'soft lockup - CPU#1 stuck for 48s! [qemu-system-x86:132]'
    assert watch.check() is None              # each line is reported once


def test_zero_never_stops(tmp_path):
    log = tmp_path / 'console.log'
    log.write_bytes(LINE % 964)
    assert nested.LockupWatch(str(log), 0).check() is None


def test_a_heartbeat_gone_quiet_is_wedged(tmp_path):
    beat = tmp_path / 'alive'
    assert nested.silent_for(str(beat), 60) is None        # not started yet
    beat.write_text('\n')
    assert nested.silent_for(str(beat), 60) is None        # fresh
    old = time.time() - 75
    os.utime(beat, (old, old))
    assert nested.silent_for(str(beat), 60).startswith('nothing ran in it for 75 s')
    assert nested.silent_for(str(beat), 0) is None          # 0: never


def test_the_job_script_starts_the_heartbeat():
    script = nested.job_script(['true'], '/repo', {})
    assert '(while :; do echo >/job/alive; sleep 5; done) </dev/null >/dev/null 2>&1 &' \
        in script.splitlines()
    assert script.splitlines()[-1] == 'exec true'


def test_l1_kernel_choice(capsys):
    """--kernel picks L1's images (and its console log beside them); a
    series without an L1 build is refused in one line."""
    assert nested.parse_args(['true']).l1_dir == nested.l1_dir()
    opts = nested.parse_args(['--kernel', '6.12', 'true'])
    assert opts.l1_dir.endswith(os.path.join('build', 'nested-host-6.12'))
    assert opts.log == os.path.join(opts.l1_dir, 'console.log')
    err = usage_error(capsys, nested.parse_args, ['--kernel', '5.10', 'true'])
    assert "--kernel: invalid choice: '5.10'" in err and err.count('\n') == 1, err
