# SPDX-License-Identifier: MIT
"""One guest: its helper processes, QEMU and serial console."""

import copy
import os
import re
import shlex
import socket
import subprocess
import tempfile
import time

from .backend_ctl import BackendControl, BackendProcess
from .backends import (backend_spec, control_path, helper_specs, is_listening, plan_paths,
                       remove_stale_socket)
from .console import Console
from .errors import GuestExited, LaunchError
from .images import DEFAULT_ELF, DEFAULT_ESP, DEFAULT_ISO, LINUX_READY_TIMEOUT
from .process import Children
from . import vcpu_watch
from .qemu import packed_requested, qemu_argv, size_bytes, vsock_kernel
from .vhost import kernel_vsock_problem
from .wait import until

# The guest's own report of a command-line word it did not take
# (kernel/config.c): an unknown key, or a bad value of a known one.
CMDLINE_REFUSED = re.compile(r'^cmdline: ([^\r\n]*)', re.M)


class BadCmdline(LaunchError):
    """The guest named a key of its command line it did not take."""


def boots_ringside(opts):
    """Whether the image is ringside's: the ISO, the ESP, or an ELF for
    -kernel (PVH). The Linux guests boot as a bzImage."""
    if opts.boot != 'elf':
        return True
    with open(opts.image, 'rb') as f:
        return f.read(4) == b'\x7fELF'


def ringside_code(opts):
    """Where ringside's code lies when the image is known to hold the code of
    an ELF: that ELF booted with -kernel, or the default ISO, which make
    builds from build/ringside.elf. None otherwise."""
    if opts.boot == 'elf':
        return vcpu_watch.code_range(opts.image)
    if os.path.realpath(opts.image) == DEFAULT_ISO and os.path.exists(DEFAULT_ELF):
        return vcpu_watch.code_range(DEFAULT_ELF)
    return None


def wait_listening(spec, proc):
    """Wait until a helper listens on its socket (a path has no event to
    wait on). The error names the command."""
    def exited():
        if proc.poll() is not None:
            return 'back end exited with status %d before listening on %s: %s' % (
                    proc.returncode, spec.socket_path, shlex.join(spec.argv))
    try:
        until(lambda: is_listening(spec.socket_path), spec.timeout,
              'back end listening on %s' % spec.socket_path, interval=0.02, fail=exited)
    except LaunchError:
        raise LaunchError(exited() or 'back end did not listen on %s within %g s: %s' % (
                spec.socket_path, spec.timeout, shlex.join(spec.argv)))


class VsockBackend:
    """The vhost-user-vsock back end a launch would start (ours, or
    --backend CMD), on its own: QEMUs may come and go while it stays
    (Launch(..., backend=it)). Its sockets live in a folder of its own;
    stderr goes to `stderr` (a file, or None: inherited)."""

    def __init__(self, opts, children=None, stderr=None):
        self.opts = copy.copy(opts)
        self.children = children or Children(opts.verbose)
        self.stderr = stderr
        self.proc = None
        self._workdir = None

    def start(self):
        try:
            self._workdir = tempfile.mkdtemp(prefix='ringside-')
            plan_paths(self.opts, self._workdir)
            spec = backend_spec(self.opts)
            self.proc = self.children.spawn(spec.name, spec.argv, stdin=subprocess.DEVNULL,
                                            stderr=self.stderr)
            wait_listening(spec, self.proc)
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def uds(self):
        """The hybrid socket host programs connect to."""
        return self.opts.vsock_uds

    def control(self):
        """Its control socket (BackendControl), or None (see Launch)."""
        path = control_path(self.opts)
        return BackendControl(path) if path else None

    def process(self):
        return BackendProcess(self.proc) if self.proc else None

    def stop(self):
        """Stop it (its process group); remove its sockets and folder."""
        if self.proc:
            self.children.stop(self.proc)
        remove_stale_socket(self.opts.vsock_socket)
        _remove_folder(self._workdir)
        self._workdir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _remove_folder(path):
    """A run's own folder and the files in it (sockets, a cost block)."""
    if not path:
        return
    for name in os.listdir(path):
        try:
            os.unlink(os.path.join(path, name))
        except OSError:
            pass
    try:
        os.rmdir(path)
    except OSError:
        pass


class Launch:
    """One guest: helper processes, QEMU, and (unless interactive on a Unix
    socket) the serial console. Use start(), then .console, then stop().

    `qemu_stderr` is where QEMU's and the back ends' stderr go (None: inherited); `tee` and
    `log` are handed to the Console.
    """

    def __init__(self, opts, accel, children=None, qemu_stderr=None, tee=None,
                 log=None, attach_console=True, backend=None):
        self.opts = copy.copy(opts)  # start() fills in per-run paths
        self.accel = accel
        self.backend = backend       # a VsockBackend that outlives this launch
        self.children = children or Children(opts.verbose)
        self.qemu_stderr = qemu_stderr
        self.tee, self.log = tee, log
        self.attach_console = attach_console
        self.qemu = None
        self.console = None
        self.started_at = None  # time.monotonic() right before QEMU's exec
        self._workdir = None
        self._sockets = []   # helpers' sockets, removed at stop()

    def argv(self):
        return qemu_argv(self.opts, self.accel, self.opts.serial_path)

    def start(self):
        """Start helpers and QEMU; on failure everything started is stopped."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self):
        image = self.opts.image
        if not os.path.exists(image):
            # `make` builds only the default images; others are named as given
            if image in (DEFAULT_ISO, DEFAULT_ELF, DEFAULT_ESP):
                raise LaunchError('%s not found (run make)' % os.path.relpath(image))
            option = {'iso': '--iso', 'elf': '--kernel', 'esp': '--esp'}[self.opts.boot]
            raise LaunchError('%s %s: not found' % (option, image))
        if self.opts.vsock:
            self._workdir = tempfile.mkdtemp(prefix='ringside-')
            plan_paths(self.opts, self._workdir)
        if vsock_kernel(self.opts, self.accel):
            # --vsock-transport kernel was checked with the options; auto here
            problem = kernel_vsock_problem(packed_requested(self.opts.qemu_arg))
            if problem:
                raise LaunchError('vhost-vsock-pci: ' + problem)
        if self.backend:
            # QEMU connects to a back end that runs already
            for name in ('vsock_socket', 'vsock_uds', 'vsock_control', 'backend_cmd'):
                setattr(self.opts, name, getattr(self.backend.opts, name))
        else:
            for spec in helper_specs(self.opts, self.accel):
                remove_stale_socket(spec.socket_path)
                self._sockets += [spec.socket_path]
                proc = self.children.spawn(spec.name, spec.argv, stdin=subprocess.DEVNULL,
                                           stderr=self.qemu_stderr)
                if spec.socket_path:
                    wait_listening(spec, proc)
        argv = self.argv()
        watch = None
        if self.accel == 'kvm' and vcpu_watch.wanted():
            # a console timeout reads the vCPU's registers (vcpu_watch.py)
            self._workdir = self._workdir or tempfile.mkdtemp(prefix='ringside-')
            watch = os.path.join(self._workdir, 'qmp.sock')
            argv += ['-qmp', 'unix:%s,server=on,wait=off' % watch]
        serial_path = self.opts.serial_path
        remove_stale_socket(serial_path)
        pipes = serial_path is None
        self.started_at = time.monotonic()
        self.qemu = self.children.spawn(
                'qemu', argv,
                stdin=subprocess.PIPE if pipes else subprocess.DEVNULL,
                stdout=subprocess.PIPE if pipes else subprocess.DEVNULL,
                stderr=self.qemu_stderr)
        if pipes:
            self.console = Console(self.qemu.stdout.fileno(), self.qemu.stdin.fileno(),
                                   tee=self.tee, log=self.log)
        elif self.attach_console:
            sock = self._connect(serial_path)
            self.console = Console(sock.fileno(), sock.fileno(), tee=self.tee,
                                   log=self.log, holder=sock)
        if watch and self.console:
            ram, ringside = size_bytes(self.opts.memory), boots_ringside(self.opts)
            code = ringside_code(self.opts) if ringside else None
            self.console.diagnose = lambda: vcpu_watch.explain(watch, ram, ringside, code)
        return self

    def _connect(self, path, timeout=30.0):
        """Connect to QEMU's serial socket once QEMU has created it."""
        def connected():
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(path)
                return sock
            except OSError:
                sock.close()
                return None

        def exited():
            if self.qemu.poll() is not None:
                return 'QEMU exited with status %d before its serial socket opened' % (
                        self.qemu.returncode)
        try:
            return until(connected, timeout, 'serial socket %s' % path, interval=0.02,
                         fail=exited)
        except LaunchError:
            raise LaunchError(exited() or 'cannot connect to %s within %g s' % (path, timeout))

    def wait_ready(self, timeout=None, linux=False):
        """Until the guest is ready: ringside's ready line and prompt
        (within --timeout), or with `linux` the Linux guest's ready line
        (within LINUX_READY_TIMEOUT); `timeout` seconds for either.
        ringside naming a word of its command line it did not take (an
        unknown key, a bad value) is BadCmdline here, before anything is
        measured, unless --allow-bad-cmdline."""
        if linux:
            self.console.wait_linux_ready(LINUX_READY_TIMEOUT if timeout is None else timeout)
            return
        boot = self.console.wait_ready(self.opts.timeout if timeout is None else timeout)
        refused = CMDLINE_REFUSED.findall(boot)
        if refused and not getattr(self.opts, 'allow_bad_cmdline', False):
            raise BadCmdline('the guest did not take its command line: %s (to go on anyway: '
                             '--allow-bad-cmdline)' % '; '.join(refused))

    # -- what a command reaches the guest and its back end through

    def vsock_target(self):
        """ringside-bench's arguments that reach the guest's vsock device:
        ['--cid', N] on the kernel's vhost-vsock, else ['--uds', PATH]
        (the back end's hybrid socket); None without vsock."""
        if not self.opts.vsock:
            return None
        if vsock_kernel(self.opts, self.accel):
            return ['--cid', str(self.opts.vsock_cid)]
        return ['--uds', self.opts.vsock_uds]

    def vsock_note(self):
        """One line saying where host programs reach the guest."""
        kind, where = self.vsock_target()
        if kind == '--cid':
            return "vsock: the kernel's vhost-vsock; host programs use AF_VSOCK to CID %s" % where
        return ('vsock: the back end %s; host programs use its hybrid socket %s '
                '(CONNECT <port>)' % (os.path.basename(self.opts.backend_cmd[0]), where))

    def backend_process(self):
        """The vhost-user back end's process (BackendProcess), or None."""
        if self.backend:
            return self.backend.process()
        proc = self.children.find('vhost-vsock')
        return BackendProcess(proc) if proc else None

    def backend_control(self):
        """The back end's control socket (BackendControl), or None where
        its command does not name {control} (backends.missing says so
        before the boot)."""
        path = control_path(self.opts)
        return BackendControl(path) if path else None

    def wait_exit(self, timeout):
        """QEMU's exit status, or None if it still runs after `timeout`."""
        try:
            return self.qemu.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def poweroff(self, timeout=None):
        """Send `poweroff`; return QEMU's status, or None if it did not exit."""
        timeout = self.opts.timeout if timeout is None else timeout
        try:
            self.console.send('poweroff\r')
        except GuestExited:
            pass
        return self.wait_exit(timeout)

    def stop(self):
        """Stop QEMU and every helper (newest first); safe to call twice."""
        self.children.stop_all()
        for path in self._sockets:
            remove_stale_socket(path)   # a back end that died left it
        self._sockets = []
        if self.console is None or self.console.join(5.0):
            for f in (self.qemu and self.qemu.stdin, self.qemu and self.qemu.stdout):
                try:
                    if f:
                        f.close()
                except OSError:
                    pass
            if self.console and self.console.holder:
                self.console.holder.close()
        _remove_folder(self._workdir)
        self._workdir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class LoggedLaunch:
    """A guest whose QEMU and back-end stderr and serial console are kept
    in LOG_DIR/NAME.stderr.log and NAME.serial.log: one cell of a matrix
    (faults, attacks), read back as evidence."""

    def __init__(self, opts, accel, log_dir, name):
        self.opts, self.accel, self.name = opts, accel, name
        os.makedirs(log_dir, exist_ok=True)
        self.stderr_path = os.path.join(log_dir, name + '.stderr.log')
        self.serial_path = os.path.join(log_dir, name + '.serial.log')
        self._files = []
        self.launch = None

    def start(self):
        """Start the guest (not waiting for it) and return its Launch."""
        err = open(self.stderr_path, 'wb')
        ser = open(self.serial_path, 'wb')
        self._files = [err, ser]
        self.launch = Launch(self.opts, self.accel, qemu_stderr=err, log=ser)
        return self.launch.start()

    def stop(self):
        if self.launch:
            self.launch.stop()
        for f in self._files:
            f.close()
        self._files = []

    @property
    def uds(self):
        return self.launch.opts.vsock_uds

    def backend_log(self, start=0):
        """The back end's and QEMU's stderr so far, from byte `start`."""
        with open(self.stderr_path, 'rb') as f:
            return f.read()[start:].decode(errors='replace')
