# SPDX-License-Identifier: MIT
"""nested: run a command on a nested KVM host, as on a real one.

QEMU's TCG emulates AMD SVM with nested paging, so a Debian Linux guest
booted here under TCG with `-cpu max` (L1) runs KVM, and with it the
kernel's vhost-vsock and vhost-net. host/nested boots that L1 (Debian's
kernel and the initrd host/nested-host/build.sh makes), shares this
machine's /usr and /etc read-only (QEMU, Python, firmware) and the
repository read-write at the same path, runs CMD there as root in the same
working directory, and hands back its output (stdout and stderr apart, as
it comes) and its exit status. CMD may be a ringside command (`ringside
nested bench --exits`: ./ringside bench inside) or any program. The
commands run inside unchanged: their `--accel auto` finds KVM and
/dev/vhost-vsock, so their guests (L2) boot under KVM with the kernel's
back end.

Where L1 has no SVM (`--cpu qemu64,-svm`), kvm_amd does not load: this
says so, and CMD still runs; the launcher then boots L2 under TCG.
"""

import argparse
import importlib.util
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

from ..cli import Parser, nonneg_int, positive_int
from ..errors import EXIT_TIMEOUT, LaunchError
from ..images import REPO, repo_path
from ..options import _memory, _seconds
from ..process import Children, read_text

NAME = 'nested'
SUMMARY = 'a command on a nested KVM host (vhost-vsock, -net)'
GROUP = 'tools'
ALIASES = ('nested',)
PROG = 'ringside nested'
# L1's kernel: this machine's (Debian's 6.1, `make nested-host`), or with
# --kernel SERIES Debian's linux-image-SERIES-amd64 (`make nested-host-6.12`)
L1_KERNELS = {None: 'nested-host', '6.12': 'nested-host-6.12'}
EXIT_L1 = 125  # L1 did not run CMD to its end (like env(1)'s 125)
# L1 is stuck for --stuck seconds: its own kernel says one of its CPUs is
# (running an L2 vCPU that KVM cannot get back from: the emulated SVM's
# fault docs/results/kvm.md describes), or it has stopped touching its
# heartbeat file, wedged whole. Nothing in L1 can end either.
EXIT_L1_STUCK = 123
# Touched every HEARTBEAT_S seconds by a loop the job script starts in L1.
HEARTBEAT = 'alive'
HEARTBEAT_S = 5
# Linux's soft-lockup watchdog, repeated while the CPU stays stuck
# (kernel/watchdog.c: "BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]").
SOFT_LOCKUP = re.compile(rb'soft lockup - CPU#(\d+) stuck for (\d+)s! \[([^\]\n]*)\]')
# Passed into L1: the launcher's knobs (RINGSIDE_QEMU and friends).
ENV_PREFIX = 'RINGSIDE_'
# L1's KVM works, but a guest under it boots slowly while this machine is
# busy: --accel auto's probe waits this long there before it picks TCG.
# (a probe that reaches ready returns at once: the wait costs only when KVM
# cannot boot a guest at all; 60 s fell back to TCG once with two other
# QEMUs running on the host)
L1_ENV = {'RINGSIDE_KVM_PROBE_TIMEOUT': '180', 'RINGSIDE_VCPU_WATCH': '1'}


def parse_args(argv):
    p = Parser(
            prog=PROG, usage='%(prog)s [options] [--] CMD [ARG...]',
            description='Run CMD as root on a nested KVM host: a Debian L1 under TCG with '
                        'KVM,\n/dev/vhost-vsock and /dev/vhost-net, this repository at the '
                        'same path.\nExit status: CMD\'s; %d if L1 did not run it to its end; '
                        '%d if L1 got stuck\n(--stuck); %d on --timeout.'
                        % (EXIT_L1, EXIT_L1_STUCK, EXIT_TIMEOUT),
            epilog='examples:\n'
                   '  ringside nested bench --count 200 -- --vsock-transport kernel\n'
                   '  ringside nested sh -c \'lsmod; ls -l /dev/kvm /dev/vhost-vsock\'\n'
                   'L1 needs `make nested-host` (build/nested-host/). Inside, KVM\'s '
                   'statistics\nare in /sys/kernel/debug/kvm and its tracepoints under '
                   '/sys/kernel/tracing.')
    p.add_argument('--timeout', type=_seconds, default=3600.0, metavar='S',
                   help='stop L1 after S seconds (3600)')
    p.add_argument('--memory', type=_memory, default='3G', metavar='SIZE', more=True,
                   help="L1's memory (3G)")
    p.add_argument('--smp', type=positive_int, default=2, metavar='N', more=True,
                   help="L1's vCPUs (2)")
    p.add_argument('--cpu', default='max', metavar='MODEL',
                   help="L1's CPU (max: SVM with nested paging; qemu64,-svm: none)")
    p.add_argument('--stuck', type=nonneg_int, default=60, metavar='S',
                   help="stop L1 when its kernel reports a CPU stuck for S seconds or it "
                        "does nothing for S seconds, exit status %d (60; 0: never)"
                   % EXIT_L1_STUCK)
    p.add_argument('--kernel', choices=[k for k in L1_KERNELS if k], metavar='SERIES',
                   help="L1 on Debian's SERIES (6.12: make nested-host-6.12)")
    p.add_argument('--log', metavar='PATH', more=True,
                   help="L1's serial console (build/nested-host/console.log)")
    p.add_argument('-v', '--verbose', action='store_true',
                   help='say what happens; L1 console on stderr at the end')
    p.add_argument('cmd', nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.cmd[:1] == ['--']:
        opts.cmd = opts.cmd[1:]
    if not opts.cmd:
        p.error('no CMD to run')
    if is_command(opts.cmd[0]):
        opts.cmd = [os.path.join(REPO, 'ringside')] + opts.cmd
    opts.l1_dir = l1_dir(opts.kernel)
    opts.log = opts.log or os.path.join(opts.l1_dir, 'console.log')
    return opts


def l1_dir(series=None):
    return repo_path('build', L1_KERNELS[series])


def is_command(word):
    """Whether `word` names a ringside command (a module of
    ringside.commands called after it), found without importing it."""
    return bool(re.fullmatch(r'[a-z][a-z0-9-]*', word)) and importlib.util.find_spec(
            '%s.%s' % (__package__, word.replace('-', '_'))) is not None


def job_script(cmd, cwd, env):
    """The shell script L1's init runs: cwd, environment, then CMD."""
    lines = ['cd %s || exit %d' % (shlex.quote(cwd), EXIT_L1),
             '(while :; do echo >/job/%s; sleep %d; done) </dev/null >/dev/null 2>&1 &'
             % (HEARTBEAT, HEARTBEAT_S)]
    lines += ['export %s=%s' % (k, shlex.quote(v)) for k, v in sorted(env.items())]
    lines.append('exec ' + shlex.join(cmd))
    return '\n'.join(lines) + '\n'


def inner_cwd():
    """The working directory inside: this one if it is in the repository
    (shared at the same path), else the repository's top."""
    cwd = os.getcwd()
    return cwd if (cwd + '/').startswith(REPO + '/') else REPO


def l1_argv(opts, job, out_fd, err_fd):
    qemu = os.environ.get('RINGSIDE_QEMU', 'qemu-system-x86_64')

    def share(tag, path, readonly):
        return ['-virtfs', 'local,path=%s,mount_tag=%s,security_model=none%s'
                % (path, tag, ',readonly=on' if readonly else '')]
    return ([qemu, '-accel', 'tcg', '-cpu', opts.cpu, '-smp', str(opts.smp),
             '-m', opts.memory, '-machine', 'q35', '-display', 'none', '-monitor', 'none',
             '-nic', 'none', '-no-reboot',
             '-kernel', os.path.join(opts.l1_dir, 'bzImage'),
             '-initrd', os.path.join(opts.l1_dir, 'initrd'),
             '-append', 'console=ttyS0 quiet panic=-1 nested.repo=%s' % REPO,
             '-serial', 'file:%s' % opts.log,
             '-device', 'virtio-serial-pci',
             '-chardev', 'file,id=out,path=/proc/self/fd/%d' % out_fd,
             '-device', 'virtserialport,chardev=out,name=out',
             '-chardev', 'file,id=err,path=/proc/self/fd/%d' % err_fd,
             '-device', 'virtserialport,chardev=err,name=err']
            + share('job', job, False) + share('usr', '/usr', True)
            + share('etc', '/etc', True) + share('repo', REPO, False))


def _copy(fd, dest):
    """L1's output, as it comes, to our stdout or stderr."""
    with os.fdopen(fd, 'rb', buffering=0) as src:
        while True:
            data = src.read(65536)
            if not data:
                return
            dest.write(data)
            dest.flush()


def _console_tail(path, lines=5):
    text = read_text(path) or ''
    return [line for line in text.splitlines() if line.strip()][-lines:]


def say(msg):
    sys.stderr.write('%s: %s\n' % (PROG, msg))
    sys.stderr.flush()


def run(opts):
    """Boot L1, run opts.cmd in it; CMD's exit status, or EXIT_L1/EXIT_TIMEOUT."""
    for f in ('bzImage', 'initrd'):
        if not os.path.exists(os.path.join(opts.l1_dir, f)):
            say('error: %s missing (run make %s)' % (os.path.join(opts.l1_dir, f),
                                                     os.path.basename(opts.l1_dir)))
            return EXIT_L1
    os.makedirs(os.path.dirname(os.path.abspath(opts.log)), exist_ok=True)
    try:
        os.unlink(opts.log)   # the watch must not read an earlier L1's lockup
    except FileNotFoundError:
        pass
    job = tempfile.mkdtemp(prefix='ringside-nested-')
    env = dict(L1_ENV)
    env.update((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX))
    with open(os.path.join(job, 'cmd'), 'w') as f:
        f.write(job_script(opts.cmd, inner_cwd(), env))
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    argv = l1_argv(opts, job, out_w, err_w)
    if opts.verbose:
        say('L1: ' + shlex.join(argv))
    children = Children()
    try:
        qemu = children.spawn('L1', argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, pass_fds=(out_w, err_w))
    except LaunchError as e:
        say('error: %s' % e)
        return EXIT_L1
    finally:
        os.close(out_w)
        os.close(err_w)
    copiers = [threading.Thread(target=_copy, args=(out_r, sys.stdout.buffer), daemon=True),
               threading.Thread(target=_copy, args=(err_r, sys.stderr.buffer), daemon=True)]
    for t in copiers:
        t.start()
    try:
        return _wait(opts, qemu, job, copiers)
    finally:
        children.stop_all(grace=0)
        for name in ('cmd', 'status', 'error', 'no-kvm', HEARTBEAT):
            try:
                os.unlink(os.path.join(job, name))
            except FileNotFoundError:
                pass
        os.rmdir(job)


class LockupWatch:
    """L1's console, read as it grows, for a CPU stuck at least `limit`
    seconds: the watchdog's line, or None."""

    def __init__(self, path, limit):
        self.path, self.limit = path, limit
        self.offset, self.rest = 0, b''

    def check(self):
        if not self.limit:
            return None
        try:
            with open(self.path, 'rb') as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return None
        self.offset += len(data)
        lines = (self.rest + data).split(b'\n')
        self.rest = lines.pop()[-4096:]
        for line in lines:
            m = SOFT_LOCKUP.search(line)
            if m and int(m.group(2)) >= self.limit:
                return m.group(0).decode(errors='replace')
        return None


def silent_for(path, limit):
    """Why L1 counts as wedged: its heartbeat file, once there, untouched
    for `limit` seconds; else None."""
    try:
        age = time.time() - os.stat(path).st_mtime
    except FileNotFoundError:
        return None
    if not limit or age < limit:
        return None
    return 'nothing ran in it for %d s (its heartbeat, every %d s, stopped)' % (age, HEARTBEAT_S)


def _wait(opts, qemu, job, copiers):
    deadline = time.monotonic() + opts.timeout
    told_no_kvm = False
    lockup = LockupWatch(opts.log, opts.stuck)
    while qemu.poll() is None:
        if not told_no_kvm and os.path.exists(os.path.join(job, 'no-kvm')):
            say('L1 has no KVM (%s): its guests run under TCG'
                % read_text(os.path.join(job, 'no-kvm')))
            told_no_kvm = True
        if time.monotonic() > deadline:
            say('error: %s did not finish within %g s (L1 console: %s)'
                % (shlex.join(opts.cmd), opts.timeout, opts.log))
            return EXIT_TIMEOUT
        stuck = lockup.check()
        if stuck:
            stuck = 'its kernel reports "%s"' % stuck
        else:
            stuck = silent_for(os.path.join(job, HEARTBEAT), opts.stuck)
        if stuck:
            say('error: L1 is stuck, stopped: %s (the nested hypervisor fault of '
                'docs/results/kvm.md; console: %s)' % (stuck, opts.log))
            return EXIT_L1_STUCK
        try:
            qemu.wait(0.5)
        except subprocess.TimeoutExpired:
            pass
    for t in copiers:
        t.join(10)
    qemu_err = qemu.stderr.read().decode(errors='replace').strip()
    status, error = read_text(os.path.join(job, 'status')), read_text(os.path.join(job, 'error'))
    if opts.verbose:
        say('L1 console (%s):\n%s' % (opts.log, read_text(opts.log) or ''))
    if status is not None and status.isdigit():
        return int(status)
    if error:
        say('error: L1: %s (console: %s)' % (error, opts.log))
    elif qemu.returncode != 0:
        say('error: L1\'s QEMU exited with status %d: %s'
            % (qemu.returncode, qemu_err.splitlines()[-1] if qemu_err else 'no message'))
    else:
        say('error: L1 stopped before %s finished; its console ends: %s'
            % (shlex.join(opts.cmd), ' | '.join(_console_tail(opts.log)) or '(empty)'))
    return EXIT_L1


def _on_signal(signum, frame):
    raise SystemExit(128 + signum)   # run()'s finally stops L1


def main(argv=None):
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    try:
        return run(opts)
    except KeyboardInterrupt:
        return 130
