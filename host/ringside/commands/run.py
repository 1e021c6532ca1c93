# SPDX-License-Identifier: MIT
"""run: boot the guest in QEMU, its console here (interactive), scripted
(--cmd) or only printed (--dry-run). The launcher every other command and
the tests boot through: its options follow `--` on theirs."""

import os
import select
import shlex
import signal
import sys
import tempfile
import threading

from ..accel import choose_accel
from ..backends import helper_specs, plan_paths
from ..errors import EXIT_ERROR, GuestExited, GuestTimeout, LaunchError, log
from ..machine import Launch
from ..options import parse_args
from ..process import Children
from ..qemu import qemu_argv

NAME = 'run'
SUMMARY = 'boot ringside: its console here, --cmd, or --dry-run'
GROUP = 'guest'
ALIASES = ('ringside-run',)

try:  # absent on non-POSIX systems only
    import termios
    import tty
except ImportError:  # pragma: no cover
    termios = tty = None


def describe_status(status):
    if status == 0:
        return 'QEMU exited with status 0 (poweroff)'
    if status < 0:
        return 'QEMU killed by signal %d' % -status
    if status & 1:
        return 'QEMU exited with status %d (guest exit(%d))' % (status, status >> 1)
    return 'QEMU exited with status %d' % status


# ---------------------------------------------------------------------- modes

def run_scripted(opts, accel, children):
    """--cmd mode: print each command's output; returns the exit status."""
    tee = None
    if opts.verbose >= 2:
        def tee(data):
            sys.stderr.buffer.write(data)
            sys.stderr.buffer.flush()
    with Launch(opts, accel, children, tee=tee) as launch:
        launch.wait_ready()
        failed = []
        for cmd in opts.cmd:
            if cmd.strip() == 'poweroff':
                break
            try:
                out = launch.console.command(cmd, opts.timeout)
            except GuestExited:
                return _exited_during(launch, cmd, opts)
            if out:
                print(out, flush=True)
            if out.startswith('error:'):
                failed.append(cmd)
        status = launch.poweroff()
    if status is None:
        raise GuestTimeout('guest did not power off within %g s' % opts.timeout)
    if opts.verbose:
        log(describe_status(status))
    if status == 0 and opts.strict and failed:
        log('--strict: error output from %s' % ', '.join(repr(c) for c in failed))
        return EXIT_ERROR
    return status


def _exited_during(launch, cmd, opts):
    """QEMU went away while `cmd` ran: fine for reboot with --no-reboot."""
    status = launch.wait_exit(opts.timeout)
    if status is None:
        raise GuestTimeout('the console closed during %r but QEMU still runs' % cmd)
    if cmd.split()[:1] == ['reboot'] and opts.no_reboot:
        if opts.verbose:
            log(describe_status(status))
        return status
    log('error: %s during %r' % (describe_status(status), cmd))
    return status or EXIT_ERROR


def run_interactive(opts, accel, children):
    """The console on this terminal; returns QEMU's exit status."""
    if opts.serial_path:
        with Launch(opts, accel, children, attach_console=False) as launch:
            log('serial console on %s (QEMU waits for a client): '
                'socat -,raw,echo=0 UNIX-CONNECT:%s' % (opts.serial_path, opts.serial_path))
            return launch.qemu.wait()

    out_fd = sys.stdout.fileno()

    def tee(data):
        os.write(out_fd, data)

    launch = Launch(opts, accel, children, tee=tee)
    in_fd = sys.stdin.fileno()
    is_tty = os.isatty(in_fd)
    saved = termios.tcgetattr(in_fd) if is_tty and termios else None
    done = threading.Event()
    try:
        launch.start()
        if opts.vsock:
            log(launch.vsock_note())   # once the back end listens: the path exists
        if saved:
            tty.setraw(in_fd)  # after start(): its -v lines need a cooked tty
        threading.Thread(target=lambda: (launch.qemu.wait(), done.set()), daemon=True).start()
        threading.Thread(target=_relay_input, args=(in_fd, launch.console, is_tty, done),
                         daemon=True).start()
        if opts.wait_ready:
            launch.wait_ready()
        done.wait()
        status = launch.qemu.poll()
    finally:
        if saved:
            try:
                termios.tcsetattr(in_fd, termios.TCSADRAIN, saved)
                os.write(out_fd, b'\n')  # the shell's prompt on a line of its own
            except (termios.error, OSError):
                pass  # the terminal hung up
        launch.stop()
    if status is None:
        return 0  # Ctrl-A x
    if opts.verbose:
        log(describe_status(status))
    return status


def _relay_input(fd, console, is_tty, done):
    """Keyboard -> guest. On a terminal, Ctrl-A x quits, Ctrl-A Ctrl-A sends ^A."""
    escape = False
    while not done.is_set():
        try:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            data = os.read(fd, 1024)
        except OSError:
            return
        if not data:
            return  # EOF: QEMU keeps running until the guest stops
        if is_tty:
            out = bytearray()
            for b in data:
                if escape:
                    escape = False
                    if b in (ord('x'), ord('X')):
                        done.set()
                        return
                    if b == 1:
                        out.append(1)
                    continue
                if b == 1:
                    escape = True
                else:
                    out.append(b)
            data = bytes(out)
        try:
            console.send(data)
        except GuestExited:
            return


def dry_run(opts, accel):
    if opts.vsock:
        plan_paths(opts, os.path.join(tempfile.gettempdir(), 'ringside-XXXXXX'))
    for spec in helper_specs(opts, accel):
        print(shlex.join(spec.argv))
    print(shlex.join(qemu_argv(opts, accel, opts.serial_path)))
    return 0


def _on_signal(signum, frame):
    raise SystemExit(128 + signum)


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    if opts.cmdline and opts.boot != 'elf':
        log('note: --cmdline is ignored for %s boots (the GRUB menu has a fixed '
            'command line); use --kernel or --boot elf' % opts.boot)
    if opts.dry_run:
        accel = 'tcg' if opts.accel == 'auto' else opts.accel
        if opts.accel == 'auto':
            log('note: --accel auto is not probed in --dry-run; showing tcg')
        return dry_run(opts, accel)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    children = Children(opts.verbose)
    try:
        accel = choose_accel(opts)
        if opts.cmd:
            return run_scripted(opts, accel, children)
        return run_interactive(opts, accel, children)
    except LaunchError as e:
        children.stop_all()  # QEMU's own last words come before ours
        log('error: %s' % e)
        return e.status
    except KeyboardInterrupt:
        return 130
    finally:
        children.stop_all()
