# SPDX-License-Identifier: MIT
"""Boot ringside every supported way and check the console contract.

One guest per (image, firmware, machine), shared by all the checks of that
boot (module-scoped fixture); the last check powers it off. Then the
launcher's own modes: --dry-run, bad options, scripted --cmd, --accel auto,
interactive on pipes and SIGTERM cleanup.
"""

import os
import re
import shlex
import signal
import subprocess

import pytest

from conftest import ELF, ESP, ISO, require_image
import ringside as rr
from ringside_qemu import (COMMAND_TIMEOUT, LAUNCHER, READY_TIMEOUT, Guest, info_fields,
                           run_command, run_launcher)

COMMANDS = ('help', 'info', 'mem', 'uptime', 'config', 'set', 'get', 'reboot', 'poweroff')


class Boot:
    def __init__(self, id, args, image, boot_path, cmdline_loglevel=None):
        self.id, self.args, self.image = id, args, image
        self.boot_path = boot_path
        self.cmdline_loglevel = cmdline_loglevel


BOOTS = [
        Boot('iso-seabios-q35', ['--firmware', 'bios', '--machine', 'q35'], ISO, 'multiboot2-bios'),
        Boot('iso-seabios-pc', ['--firmware', 'bios', '--machine', 'pc'], ISO, 'multiboot2-bios'),
        Boot('iso-ovmf-q35', ['--firmware', 'uefi', '--machine', 'q35'], ISO, 'multiboot2-uefi'),
        Boot('iso-ovmf-pc', ['--firmware', 'uefi', '--machine', 'pc'], ISO, 'multiboot2-uefi'),
        Boot('elf-pvh-q35', ['--boot', 'elf', '--machine', 'q35', '--cmdline', 'loglevel=5'],
             ELF, 'pvh', cmdline_loglevel=5),
        Boot('elf-pvh-pc', ['--boot', 'elf', '--machine', 'pc', '--cmdline', 'loglevel=5'],
             ELF, 'pvh', cmdline_loglevel=5),
]


@pytest.fixture(scope='module', params=BOOTS, ids=lambda b: b.id)
def guest(request):
    boot = request.param
    require_image(boot.image)
    g = Guest(*boot.args, name=boot.id)
    g.boot = boot
    try:
        g.start()
        yield g
    finally:
        g.stop()


def assert_error_line(out, what):
    """The contract: bad input gives exactly one line starting 'error: '."""
    assert out.startswith('error: '), '%s: expected "error: ...", got %r' % (what, out)
    assert '\n' not in out, '%s: expected one line, got %r' % (what, out)


# ------------------------------------------------------------ per-boot checks
# Order matters inside a boot: pytest runs these in file order per guest, and
# test_poweroff must stay last.

def test_ready_line(guest):
    assert re.search(r'(?m)^ringside: ready\r?$', guest.output), 'no exact "ringside: ready" line'


def test_help_lists_commands(guest):
    out = guest.command('help')
    missing = [c for c in COMMANDS if not re.search(r'(?m)^\s*%s\b' % c, out)]
    assert not missing, 'help does not list %s:\n%s' % (missing, out)


def test_info(guest):
    out = guest.command('info')
    fields = info_fields(out)
    assert fields.get('boot') == guest.boot.boot_path, out
    assert 'cmdline' in fields, 'no "cmdline:" line:\n' + out
    if guest.boot.cmdline_loglevel is not None:
        assert 'loglevel=%d' % guest.boot.cmdline_loglevel in fields['cmdline'], out
    for what, rx in (('CPU', r'(?im)^\s*cpu'), ('memory', r'(?im)^\s*mem'),
                     ('TSC GHz', r'(?i)tsc.*ghz'), ('build id', r'(?i)build[ _-]?id')):
        assert re.search(rx, out), 'info shows no %s:\n%s' % (what, out)


@pytest.mark.parametrize('cmd', ['mem', 'uptime', 'config'])
def test_plain_commands(guest, cmd):
    out = guest.command(cmd)
    assert out and not out.startswith('error'), '%s: %r' % (cmd, out)
    if cmd == 'config':
        assert re.search(r'(?m)^\s*loglevel\s*=\s*\d', out), out


def test_heap_census_adds_up(guest):
    """`mem chunks` walks newlib's heap: its chunks add up to the bytes
    malloc reports in use, and a bad argument is refused."""
    in_use = int(re.search(r'heap: .* in use \((\d+) B\)', guest.command('mem')).group(1))
    out = guest.command('mem chunks')
    m = re.search(r'heap chunks in use: (\d+), (\d+) B', out)
    assert m, out
    sizes = [(int(a), int(b)) for a, b in re.findall(r'(?m)^ +(\d+) B x (\d+)$', out)]
    assert sum(n for _, n in sizes) == int(m.group(1)), out
    assert sum(s * n for s, n in sizes) == int(m.group(2)) == in_use, out
    assert all(s % 16 == 0 and s >= 32 for s, _ in sizes), out
    assert guest.command('mem bogus').startswith('error: usage: mem [chunks]')


def test_loglevel_at_boot(guest):
    expect = guest.boot.cmdline_loglevel
    if expect is None:
        # The ISO's GRUB line is fixed; honour it if it sets loglevel.
        m = re.search(r'\bloglevel=(\d)', info_fields(guest.command('info')).get('cmdline', ''))
        expect = int(m.group(1)) if m else 4
    assert guest.command('get loglevel') == 'loglevel=%d' % expect


def test_set_get_loglevel(guest):
    assert guest.command('set loglevel=6') == 'loglevel=6'
    assert guest.command('get loglevel') == 'loglevel=6'


def test_set_rejects_bad_values(guest):
    before = guest.command('get loglevel')
    assert_error_line(guest.command('set loglevel=9'), 'set loglevel=9')
    assert_error_line(guest.command('set loglevel=abc'), 'set loglevel=abc')
    assert guest.command('get loglevel') == before, 'a rejected set changed the value'


def test_sizes_take_k_m_g(guest):
    """Keys and commands take 4k, 1m (powers of 1024); a bad suffix is an error."""
    before = guest.command('get vsock_buf')
    try:
        assert guest.command('set vsock_buf=512k') == 'vsock_buf=524288'
        assert guest.command('set vsock_buf=1m') == 'vsock_buf=1048576'
        assert_error_line(guest.command('set vsock_buf=1q'), 'set vsock_buf=1q')
    finally:
        guest.command('set %s' % before)
    assert guest.command('get vsock_buf') == before


def test_unknown_key(guest):
    assert_error_line(guest.command('set nosuchkey=1'), 'set nosuchkey=1')
    assert_error_line(guest.command('get nosuchkey'), 'get nosuchkey')


def test_unknown_command(guest):
    out = guest.command('frobnicate')
    assert_error_line(out, 'frobnicate')
    assert 'frobnicate' in out


def test_overlong_line_refused(guest):
    """A line longer than the editor holds is refused as a whole, in one
    line naming the limit; its start is not run. (The echo stops at the
    limit too, so the output may begin with the echo of what fit.)"""
    out = guest.command('frobnicate ' + 'x' * 300)
    assert out.split('\n')[-1] == 'error: line longer than 255 characters, ignored', out
    assert 'unknown command' not in out
    assert guest.command('get loglevel').startswith('loglevel=')


def test_longest_line_quoted_whole(guest):
    """An error quoting the longest line that fits quotes all of it."""
    value = '9' * (255 - len('set loglevel='))
    out = guest.command('set loglevel=' + value)
    assert out == "error: bad value '%s' for loglevel: expected a number from 0 to 7" % value


def test_empty_line(guest):
    assert guest.command('') == ''


def test_line_editing(guest):
    help_out = guest.command('help')
    assert guest.command('helx\x7fp') == help_out, 'DEL (0x7f) did not erase'
    assert guest.command('helx\x08p') == help_out, 'BS (0x08) did not erase'
    assert guest.command('garbage\x15help') == help_out, 'Ctrl-U did not discard the line'
    assert guest.command('frobnicate\x15') == '', 'Ctrl-U then Enter should run nothing'
    assert guest.command('\x7f\x7fhelp') == help_out, 'backspace on an empty line misbehaved'


def test_newline_ends_a_line(guest):
    assert guest.command('set loglevel=3') == 'loglevel=3'
    guest.send('get loglevel\n')
    m = guest.wait_for(r'loglevel=(\d)\r?\n(?:.*\n)*?ringside> ', COMMAND_TIMEOUT)
    assert m.group(1) == '3'


def test_reboot(guest):
    """reboot comes back to ready with the boot-time configuration."""
    assert guest.command('set loglevel=1') == 'loglevel=1'
    guest.send('reboot\r')
    guest.console.wait_ready(READY_TIMEOUT)
    assert guest.command('get loglevel') == 'loglevel=%d' % (guest.boot.cmdline_loglevel or 4)
    assert info_fields(guest.command('info')).get('boot') == guest.boot.boot_path


def test_poweroff(guest):
    status = guest.poweroff()
    assert status is not None, 'QEMU still runs after poweroff'
    assert status == 0, 'poweroff: QEMU exited with %d, expected 0' % status


def test_set_is_all_or_nothing(guest_factory):
    """A set with one bad KEY=VALUE is bad arguments: one error line, no change.
    (Shell logic, not boot-path specific: one PVH boot is enough.)"""
    require_image(ELF)
    g = guest_factory('--boot', 'elf')
    assert_error_line(g.command('set loglevel=2 loglevel=9'), 'set loglevel=2 loglevel=9')
    assert g.command('get loglevel') == 'loglevel=4', 'a rejected set applied part of its keys'


def test_uefi_direct(guest_factory):
    require_image(ESP)
    g = guest_factory('--firmware', 'uefi-direct', name='esp-ovmf-q35')
    assert info_fields(g.command('info')).get('boot') == 'uefi-direct'
    assert g.poweroff() == 0


# ---------------------------------------------------------------- launcher

def qemu_line(stdout):
    lines = stdout.strip().splitlines()
    assert lines, 'no output'
    return shlex.split(lines[-1])


def has_pair(argv, opt, value):
    return any(a == opt and b == value for a, b in zip(argv, argv[1:]))


def test_dry_run_iso():
    r = run_launcher('--dry-run', '--accel', 'tcg', '--firmware', 'uefi', '--machine', 'pc',
                     '--memory', '256M', '--qemu-arg=-smp', '--qemu-arg=1', '--', '-cpu', 'max')
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1, r.stdout
    argv = qemu_line(r.stdout)
    assert 'qemu' in os.path.basename(argv[0])
    for opt, value in (('-accel', 'tcg'), ('-machine', 'pc'), ('-m', '256M'),
                       ('-bios', '/usr/share/ovmf/OVMF.fd'), ('-cdrom', ISO),
                       ('-display', 'none'), ('-monitor', 'none'), ('-nic', 'none'),
                       ('-serial', 'chardev:s0'),
                       ('-device', 'isa-debug-exit,iobase=0x501,iosize=2')):
        assert has_pair(argv, opt, value), '%s %s missing in %s' % (opt, value, argv)
    chardev = argv[argv.index('-chardev') + 1]
    assert chardev.startswith('stdio,id=s0') and 'signal=off' in chardev
    assert argv[-4:] == ['-smp', '1', '-cpu', 'max'], 'extra QEMU args go last, in order'
    assert '-kernel' not in argv and '-append' not in argv
    assert '-no-reboot' not in argv


def test_dry_run_elf_and_serial_socket(tmp_path):
    sock = str(tmp_path / 'serial.sock')
    r = run_launcher('--dry-run', '--accel', 'kvm', '--boot', 'elf', '--cmdline', 'loglevel=5 x=1',
                     '--serial', 'unix:' + sock, '--no-reboot')
    assert r.returncode == 0, r.stderr
    argv = qemu_line(r.stdout)
    assert has_pair(argv, '-kernel', ELF) and has_pair(argv, '-append', 'loglevel=5 x=1')
    assert has_pair(argv, '-accel', 'kvm') and has_pair(argv, '-machine', 'q35')
    assert has_pair(argv, '-chardev', 'socket,id=s0,path=%s,server=on,wait=on' % sock)
    assert '-no-reboot' in argv and '-bios' not in argv and '-cdrom' not in argv


@pytest.mark.parametrize('args', [['--wait-ready'], ['--wait-ready=no'], ['--wait-ready', 'yes'],
                                  ['--boot', 'elf', '--machine', 'pc'],
                                  ['--firmware', 'uefi-direct']])
def test_dry_run_accepts(args):
    r = run_launcher('--dry-run', '--accel', 'tcg', *args)
    assert r.returncode == 0, r.stderr
    assert qemu_line(r.stdout)


def test_dry_run_cmdline_with_iso_is_noted():
    r = run_launcher('--dry-run', '--accel', 'tcg', '--cmdline', 'loglevel=5')
    assert r.returncode == 0
    assert '-append' not in qemu_line(r.stdout)
    assert 'ignored' in r.stderr


@pytest.mark.parametrize('args', [
        ['--bogus'],
        ['--firmware', 'coreboot'],
        ['--machine', 'virt'],
        ['--memory', 'lots'],
        ['--timeout', '-1'],
        ['--serial', 'tcp:1234'],
        ['--kernel', ELF, '--firmware', 'uefi'],
        ['--iso', ISO, '--kernel', ELF],
        ['--strict'],
        ['--wait-ready=maybe'],
], ids=lambda a: ' '.join(a).replace(ELF, 'ELF').replace(ISO, 'ISO'))
def test_bad_option(args):
    r = run_launcher(*args, '--dry-run')
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stdout == ''
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('ringside run: error: '), r.stderr


def test_help_fits_a_screen():
    r = run_launcher('--help')
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) <= 25, 'ringside run --help has %d lines' % len(lines)
    for opt in ('--boot', '--firmware', '--cmdline', '--accel', '--cmd', '--vsock',
                '--backend', '--dry-run', '--help-all'):
        assert opt in r.stdout
    r = run_launcher('--help-all')
    assert r.returncode == 0
    for opt in ('--iso', '--kernel', '--machine', '--memory', '--serial', '--wait-ready',
                '--timeout', '--qemu-arg', '--allow-bad-cmdline', '--cost-block'):
        assert opt in r.stdout


def test_unknown_cmdline_key_stops_the_run():
    """A misspelt key is named by the guest at boot (cmdline: unknown key
    ...) and the launcher stops there, one line naming each refused key or
    value, before any command runs; --allow-bad-cmdline goes on."""
    require_image(ELF)
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--cmdline', 'rign=split loglevel=9',
                     '--cmd', 'get ring')
    assert r.returncode == 1 and r.stdout == '', (r.returncode, r.stdout, r.stderr)
    last = r.stderr.strip().splitlines()[-1]  # QEMU may say it got SIGTERM first
    assert last == ("ringside run: error: the guest did not take its command line: unknown key "
                    "'rign' (ignored); bad value '9' for loglevel: expected a number from 0 to "
                    "7 (default kept) (to go on anyway: --allow-bad-cmdline)"), r.stderr
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--cmdline', 'rign=split',
                     '--allow-bad-cmdline', '--cmd', 'get ring')
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == 'ring=packed'


def test_unknown_cmdline_key_stops_a_benchmark():
    """The same through a command's launcher options: nothing measured."""
    require_image(ELF)
    r = run_command('bench', '--count', '5', '--sizes', '64', '--no-stream', '--',
                    '--boot', 'elf', '--accel', 'tcg', '--cmdline', 'rign=split', timeout=300)
    assert r.returncode == 1 and r.stdout == '', (r.stdout, r.stderr)
    assert r.stderr.strip().splitlines()[-1] == (
            "ringside bench: error: the guest did not take its command line: unknown key "
            "'rign' (ignored) (to go on anyway: --allow-bad-cmdline)"), r.stderr


def test_scripted_commands():
    require_image(ELF)
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--cmd', 'info', '--cmd', 'get loglevel',
                     '--cmd', 'frobnicate')
    assert r.returncode == 0, r.stderr
    fields = info_fields(r.stdout)
    assert fields.get('boot') == 'pvh', r.stdout
    assert re.search(r'(?m)^loglevel=4$', r.stdout), r.stdout
    assert re.search(r'(?m)^error: ', r.stdout), 'error output is printed'
    assert 'ringside> ' not in r.stdout, 'prompts leak into scripted output'
    assert not re.search(r'(?m)^(info|get loglevel)$', r.stdout), 'echo leaks into output'


def test_scripted_strict_fails_on_error():
    require_image(ELF)
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--strict', '--cmd', 'uptime',
                     '--cmd', 'set loglevel=9')
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert 'error: ' in r.stdout


def test_accel_auto_falls_back_or_uses_kvm():
    require_image(ELF)
    r = run_launcher('--boot', 'elf', '--accel', 'auto', '-v', '--cmd', 'uptime')
    assert r.returncode == 0, r.stderr
    m = re.search(r'--accel auto: .*using (kvm|tcg)', r.stderr)
    assert m, r.stderr
    assert re.search(r'started qemu \(pid \d+\): \S+ -accel %s ' % m.group(1),
                     r.stderr), r.stderr


def test_interactive_on_pipes_and_sigterm_cleanup():
    """Default mode on pipes: typed lines reach the guest; SIGTERM stops all."""
    require_image(ELF)
    proc = subprocess.Popen([*LAUNCHER, '--boot', 'elf', '--accel', 'tcg', '-v'],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        con = rr.Console(proc.stdout.fileno(), proc.stdin.fileno())
        con.wait_ready(READY_TIMEOUT)
        assert con.command('get loglevel', COMMAND_TIMEOUT) == 'loglevel=4'
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(30)
        stderr = proc.stderr.read().decode()
        assert status == 128 + signal.SIGTERM, stderr
        pid = int(re.search(r'started qemu \(pid (\d+)\)', stderr).group(1))
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # the launcher waited for it: no zombie either
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_scripted_reboot_with_no_reboot_exits():
    require_image(ELF)
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--no-reboot', '--cmd', 'reboot')
    assert r.returncode == 0, (r.returncode, r.stderr)


def test_scripted_poweroff_status():
    require_image(ELF)
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '-v', '--cmd', 'poweroff')
    assert r.returncode == 0, r.stderr
    assert 'QEMU exited with status 0 (poweroff)' in r.stderr


def test_scripted_over_serial_socket(tmp_path):
    require_image(ELF)
    sock = str(tmp_path / 'com1.sock')
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--serial', 'unix:' + sock,
                     '--cmd', 'set loglevel=2', '--cmd', 'get loglevel')
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ['loglevel=2', 'loglevel=2'], r.stdout


def test_ready_timeout_is_an_error():
    require_image(ISO)
    r = run_launcher('--firmware', 'uefi', '--accel', 'tcg', '--timeout', '0.5', '--cmd', 'info')
    assert r.returncode == 124, (r.returncode, r.stderr)
    last = r.stderr.strip().splitlines()[-1]  # QEMU may say it got SIGTERM first
    assert last.startswith("ringside run: error: no 'ringside: ready' after 0.5 s"), r.stderr


def test_missing_image_is_an_error(tmp_path):
    """An image named on the command line is named as given; `make` would
    not build it, so it is not suggested."""
    iso = str(tmp_path / 'none.iso')
    r = run_launcher('--iso', iso, '--accel', 'tcg', '--cmd', 'info')
    assert r.returncode == 1
    assert r.stderr == 'ringside run: error: --iso %s: not found\n' % iso
    r = subprocess.run([*LAUNCHER, '--kernel', 'none.elf', '--accel', 'tcg',
                        '--cmd', 'info'], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL, cwd=str(tmp_path))
    assert r.returncode == 1
    assert r.stderr == 'ringside run: error: --kernel none.elf: not found\n'


@pytest.mark.parametrize('option', ['--vsock-uds', '--vsock-socket', '--serial', '--iso',
                                    '--cost-block', '--vsock-backend'])
def test_path_folder_checked_first(tmp_path, option):
    """A path option whose folder does not exist: one line naming it, before
    any back end or QEMU starts (they would fail later, saying less)."""
    path = str(tmp_path / 'missing' / 'x')
    value = 'unix:' + path if option == '--serial' else path
    r = run_launcher('--vsock', option, value, '--accel', 'tcg', '--timeout', '5')
    assert r.returncode == 2
    assert r.stderr == ('ringside run: error: %s %s: folder %s does not exist (see --help)\n'
                        % (option, value, tmp_path / 'missing'))


def test_interactive_terminal_escape_and_restore():
    """On a terminal: raw mode while running, Ctrl-A x quits, modes restored."""
    import pty
    import termios
    require_image(ELF)
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    proc = subprocess.Popen([*LAUNCHER, '--boot', 'elf', '--accel', 'tcg'],
                            stdin=slave, stdout=slave, stderr=subprocess.PIPE)
    con = rr.Console(master, master)
    try:
        con.wait_ready(READY_TIMEOUT)
        assert con.command('get loglevel', COMMAND_TIMEOUT) == 'loglevel=4'
        con.send('\x03')  # raw mode: Ctrl-C is a byte for the guest, not SIGINT
        assert con.command('uptime', COMMAND_TIMEOUT).startswith('uptime')
        assert proc.poll() is None
        con.send('\x01x')
        assert proc.wait(30) == 0, proc.stderr.read()
        assert termios.tcgetattr(slave) == before, 'terminal modes not restored'
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(slave)  # the reader sees EIO/EOF on the master, then
        con.join(10)     # its fd can go without a read() racing the close
        os.close(master)


def test_dry_run_vsock():
    r = run_launcher('--dry-run', '--accel', 'tcg', '--vsock', '--memory', '1G')
    assert r.returncode == 0, r.stderr
    backend, qemu = [shlex.split(line) for line in r.stdout.strip().splitlines()]
    assert backend[0].endswith('build/host/ringside-vhost-vsock')
    sock = backend[backend.index('--socket') + 1]
    assert '--uds' in backend and has_pair(backend, '--guest-cid', '3')
    assert has_pair(qemu, '-object', 'memory-backend-memfd,id=mem,size=1073741824,share=on')
    assert has_pair(qemu, '-machine', 'q35,memory-backend=mem') and has_pair(qemu, '-m', '1G')
    assert has_pair(qemu, '-chardev', 'socket,id=vsock0,path=' + sock)
    assert has_pair(qemu, '-device', 'vhost-user-vsock-pci,chardev=vsock0')


def test_vsock_backend_is_started_and_stopped():
    require_image(ELF)
    require_image(rr.DEFAULT_VSOCK_BACKEND)
    r = run_launcher('--boot', 'elf', '--accel', 'tcg', '--vsock', '-v', '--cmd', 'uptime')
    assert r.returncode == 0, r.stderr
    m = re.search(r'started vhost-vsock \(pid (\d+)\)', r.stderr)
    assert m and 'stopped vhost-vsock (pid %s)' % m.group(1) in r.stderr, r.stderr
    with pytest.raises(ProcessLookupError):
        os.kill(int(m.group(1)), 0)


@pytest.mark.parametrize('fault,vector,name', [('pf', 14, 'page fault'),
                                               ('ud', 6, 'invalid opcode'),
                                               ('de', 0, 'divide error')])
def test_exception_report(guest_factory, fault, vector, name):
    """A fault prints vector, error code, RIP, CR2, registers and a
    frame-pointer backtrace, then the machine halts (QEMU keeps running)."""
    g = guest_factory('--boot', 'elf')
    g.send('crash %s\r' % fault)
    m = g.wait_for(r'\*\*\* exception (\d+) \(([^)]*)\) error (0x[0-9a-f]+|0)\s*\n'
                   r'RIP ([0-9a-f]{16}) CS 8 RFLAGS [0-9a-f]{16} RSP ([0-9a-f]{16})\s*\n'
                   r'CR2 ([0-9a-f]{16})\s*\n'
                   r'RAX [0-9a-f]{16} RBX [^\n]*\n'
                   r'RSI [^\n]*\nR9 [^\n]*\nR13 [^\n]*\n'
                   r'backtrace:\s*\n((?:  #[-\d]+ [0-9a-f]{16}\s*\n)+)halted\.')
    assert int(m.group(1)) == vector and m.group(2) == name
    rip = int(m.group(4), 16)
    assert 0x100000 <= rip < 0x200000, hex(rip)  # inside the kernel image
    if fault == 'pf':
        assert m.group(6) == '00000dead0000000'
        assert int(m.group(3), 16) & 2  # a write
    frames = m.group(7).strip().splitlines()
    assert len(frames) >= 3, frames  # the faulting RIP, the command, the shell...
    assert g.alive  # halted, not reset


def test_vsock_transport_choice():
    """The host kernel's vhost-vsock when asked for (or, on auto, with KVM and
    /dev/vhost-vsock): no back end, no shared memory; else the vhost-user
    back end. Dry runs only: nothing here may open AF_VSOCK."""
    out = run_launcher('--boot', 'elf', '--vsock', '--vsock-transport', 'kernel', '--accel',
                       'tcg', '--dry-run')
    assert out.returncode == 0, out.stderr
    assert 'vhost-vsock-pci,guest-cid=3' in out.stdout
    assert 'ringside-vhost-vsock' not in out.stdout and 'share=on' not in out.stdout
    out = run_launcher('--boot', 'elf', '--vsock', '--accel', 'tcg', '--dry-run')
    assert out.returncode == 0, out.stderr
    assert 'vhost-user-vsock-pci' in out.stdout and 'ringside-vhost-vsock' in out.stdout
    assert 'vhost-vsock-pci,guest-cid' not in out.stdout  # TCG: never kernel vhost
    out = run_launcher('--vsock', '--vsock-transport', 'kernel', '--vsock-uds', '/tmp/x',
                       '--dry-run')
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
