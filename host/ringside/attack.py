# SPDX-License-Identifier: MIT
"""The attack matrix: what a back end makes of a hostile guest (the
`attacks` command prints it).

ringside's `attack MODE` (drivers/virtio/vsock_attack.c) writes malformed
vsock headers or forged split-ring entries into the live TX queue. For
each ring layout (the device's packed=off|on) one guest boots behind
build/host/ringside-vhost-vsock and every mode runs in turn, while a
bystander connection to the echo service exchanges data and compares
every byte. The victim (what the header modes lie about) is a connection
to the sink (stream modes) or a SEQPACKET connection to the echo service.

Per mode the outcome is decided from events: the end of the attack (the
guest's `attack MODE ... json` line), the back end's counters (its
control socket) and process, the bystander's bytes, a new connection
after the attack:

  survives      the device answered, nothing counted as a violation, the
                bystander byte-exact, a new connection echoes
  drops         the device answered and counted violations (dropped what
                it had to, or reset the offending connection), the
                bystander byte-exact, a new connection echoes
  resets        the device fell silent; the guest reset it and after the
                reset a new connection echoes byte-exact
  stalls        no new connection echoes after the attack, or it never ended
  crashes       the back end (or QEMU) exited

A cell "-" was not run: the mode needs a split ring (ring modes on a
packed ring print "not for this ring").

The devices under attack: ours (the vsock modes against
build/host/ringside-vhost-vsock, above); net-qemu, net-tap and
net-testpmd (the virtio-net modes against QEMU's own virtio-net, on
-netdev dgram or a tap, and dpdk-testpmd: attack_net.py); kernel and
net-vhost (the kernel's vhost-vsock and vhost-net under KVM:
attack_kernel.py). Each is one entry of devices(): a session class that
boots a guest behind it and says its accelerator and ring layouts, and
the kind of modes it takes.
"""

import os
import re
import socket
import tempfile
import shutil
import time

import ringside as rr

from . import attack_net
from .benchlib import echo_exchange, hybrid_connect, pattern
from .attack_guest import attack_modes, done, done_line, not_for_ring, start, was_reset
from .machine import LoggedLaunch
from .wait import until

RINGS = ('split', 'packed')
OUTCOMES = ('survives', 'drops', 'resets', 'stalls', 'crashes')
ECHO, SINK = 1234, 1235
BOOT_TIMEOUT = 300
ATTACK_TIMEOUT = 240      # one mode, settle included, under TCG
EXCHANGE_TIMEOUT = 30
VICTIM_CHUNK = bytes(range(256)) * 64
CONNECT_TIMEOUT = 60      # the device may be restarting after a reset
# back end counters that count a guest's violation
VIOLATIONS = ('ring_errors', 'rings_broken', 'bad_hdrs', 'credit_violations', 'rst_tx',
              'vring_errors')


def retried_connect(connect, timeout, alive):
    """connect()'s socket once it succeeds within `timeout` s, given up
    early when not alive(); the last OSError otherwise."""
    last = []

    def attempt():
        try:
            return connect()
        except OSError as e:
            last[:] = [e]
            return None
    try:
        return until(attempt, timeout, 'a connection', interval=0.2,
                     fail=lambda: not alive() and 'the guest or its device went away')
    except rr.LaunchError:
        raise last[0] if last else OSError('no connection within %g s' % timeout)


class Session(LoggedLaunch):
    """One guest on one ring behind our back end, for a series of modes."""

    kind = 'vsock'
    accel = 'tcg'
    rings = RINGS
    # the back end's line for a violation it counted
    violation_line = r'violation: [^\n]*'

    def __init__(self, ring, log_dir, accel='tcg', name=None, every=20, count=20):
        self.ring = ring
        self.every, self.count = every, count
        self.tmp = tempfile.mkdtemp(prefix='ringside-attack-')
        self.uds_seq = os.path.join(self.tmp, 'seq')
        super().__init__(rr.parse_args(self.launcher_args(ring, accel)), accel, log_dir,
                         name or 'attack-%s' % ring)

    def launcher_args(self, ring, accel):
        return ['--vsock', '--accel', accel, '--boot', 'elf', '--qemu-arg=-global',
                '--qemu-arg=vhost-user-vsock-pci.packed=%s' % ('on' if ring == 'packed' else 'off'),
                '--vsock-arg=--uds-seqpacket', '--vsock-arg=%s' % self.uds_seq]

    def start(self):
        super().start().wait_ready(BOOT_TIMEOUT)
        self.connect(ECHO).close()   # the back end has its rings
        return self

    def stop(self):
        super().stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def backend(self):
        for name, proc in self.launch.children.procs:
            if name == 'vhost-vsock':
                return proc
        raise LookupError('no back end')

    def alive(self):
        return (self.backend().poll() is None and self.launch.qemu is not None
                and self.launch.qemu.poll() is None)

    def why_dead(self):
        return 'back end or QEMU exited'

    @staticmethod
    def why_not_here():
        """None where this back end can run, else why not."""
        return None

    def log_mark(self):
        """Where the logs stand now, for violation()."""
        return os.path.getsize(self.stderr_path)

    def violation(self, mark):
        """The first violation the back end logged since `mark`, or ''."""
        v = re.search(self.violation_line, self.backend_log(mark))
        return v.group(0) if v else ''

    def counters(self):
        """The back end's counters (its control socket)."""
        if self.backend().poll() is not None:
            raise ConnectionError('back end exited')
        return self.launch.backend_control().counters()

    def connect(self, port, timeout=CONNECT_TIMEOUT, seq=False):
        """hybrid_connect, retried while the device restarts (the back end
        refuses until QEMU gave it rings)."""
        kind = socket.SOCK_SEQPACKET if seq else socket.SOCK_STREAM
        return retried_connect(lambda: hybrid_connect(self.uds_seq if seq else self.uds, port,
                                                      10, kind), timeout, self.alive)


class Result:
    def __init__(self, ring, mode):
        self.ring, self.mode = ring, mode
        self.outcome = None
        self.guest_line = ''
        self.exchanges = 0        # byte-exact bystander exchanges during the attack
        self.bystander = ''       # what went wrong for the bystander ('' = exact)
        self.after = ''           # what went wrong for a new connection
        self.delta = {}           # back end counters that moved
        self.violation = ''       # the back end's first violation line
        self.backend = 'ours'

    def evidence(self):
        parts = [self.guest_line or 'no done line']
        moved = ' '.join('%s+%d' % kv for kv in sorted(self.delta.items()) if kv[0] in VIOLATIONS)
        if moved:
            parts.append('back end ' + moved)
        if 'delivered' in self.delta:
            parts.append('peer received %(delivered)d of %(sent)d' % self.delta)
        if self.violation:
            parts.append(self.violation)
        if self.bystander:
            parts.append('bystander: ' + self.bystander)
        if self.after:
            parts.append('after: ' + self.after)
        parts.append('%d exact exchanges' % self.exchanges)
        return '; '.join(parts)

    def summary(self):
        return '%s %s %s: %s (%s)' % (self.backend, self.ring, self.mode, self.outcome,
                                      self.evidence())


def _victim(sess, mode):
    seq = mode.startswith('seq-')
    try:
        return sess.connect(ECHO if seq else SINK, seq=seq)
    except OSError:
        return None


def _feed(victim):
    """Keep the host side of a stream victim writing (to the sink), so
    the credit the attack lies about is what the back end sends by."""
    if victim is None or victim.type != socket.SOCK_STREAM:
        return
    try:
        victim.setblocking(False)
        victim.send(VICTIM_CHUNK)
    except OSError:
        pass  # full, or reset by the attack: the victim may suffer


def _after(sess):
    """A new connection, byte-exact for 1 B, 64 KiB and 1 MiB."""
    try:
        s = sess.connect(ECHO)
    except OSError as e:
        return 'connect: %s' % (e.strerror or e)
    with s:
        for size in (1, 65536, 1 << 20):
            err = echo_exchange(s, pattern(size, size), EXCHANGE_TIMEOUT * 4)
            if err:
                return err
    return ''


def run_mode(sess, mode, by):
    """One mode on a running session; `by` is the bystander socket (or
    None: a new one is opened). Returns (Result, bystander for the next)."""
    res = Result(sess.ring, mode)
    before = sess.counters()
    log_mark = sess.log_mark()
    victim = _victim(sess, mode)
    if by is None:
        try:
            by = sess.connect(ECHO)
        except OSError as e:
            res.bystander = 'connect: %s' % (e.strerror or e)
    console = sess.launch.console
    mark = len(console.text)
    start(console, mode, sess.every, sess.count)
    deadline = time.monotonic() + ATTACK_TIMEOUT
    n = 0
    m = None
    while time.monotonic() < deadline:
        m = done(console, mark)
        if m or not sess.alive():
            break
        _feed(victim)
        if by is not None and not res.bystander:
            err = echo_exchange(by, pattern(1 + (n * 7919) % 70000, n), EXCHANGE_TIMEOUT)
            n += 1
            if err:
                res.bystander = err
            else:
                res.exchanges += 1
        else:
            time.sleep(0.1)  # waiting for the guest's line, nothing to exchange
    if victim is not None:
        victim.close()
    res.guest_line = done_line(m) if m else ''
    if not sess.alive():
        res.outcome = 'crashes'
        res.guest_line = res.guest_line or sess.why_dead()
        res.violation = sess.violation(log_mark)
        return res, None
    if not m:
        console.command('attack stop', 60)
        console.command('virtio', 60)   # both sides' ring indices, into the serial log
        res.outcome = 'stalls'
        return res, None
    if not_for_ring(m):
        res.outcome = '-'
        return res, by
    if by is not None and not res.bystander:
        # the bystander once more, after the attack: still exact?
        res.bystander = echo_exchange(by, pattern(65536, 7), EXCHANGE_TIMEOUT)
    res.after = _after(sess)
    after = sess.counters()
    res.delta = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    res.violation = sess.violation(log_mark)
    if res.after:
        res.outcome = 'stalls'
    elif was_reset(m):
        res.outcome = 'resets'
    elif res.bystander:
        res.outcome = 'stalls'   # answered, yet a connection it was not attacking broke
    elif any(res.delta.get(k) for k in VIOLATIONS):
        res.outcome = 'drops'
    else:
        res.outcome = 'survives'
    if res.bystander or res.outcome == 'resets':
        if by is not None:
            by.close()
        by = None
    return res, by


DEVICE_NAMES = ('ours', 'net-qemu', 'net-tap', 'net-testpmd', 'kernel', 'net-vhost')


def devices():
    """Device name: (session class, its modes' kind, what the table calls
    it). A session class says its accelerator and ring layouts."""
    from . import attack_kernel   # its sessions build on Session above
    return {
        'ours': (Session, 'vsock', 'ringside-vhost-vsock'),
        'net-qemu': (attack_net.NetQemu, 'net', "QEMU's virtio-net (-netdev dgram)"),
        'net-tap': (attack_net.NetTap, 'net', "QEMU's virtio-net (tap, vnet_hdr=on, vhost=off)"),
        'net-testpmd': (attack_net.NetTestpmd, 'net', 'dpdk-testpmd (vhost-user-net)'),
        'kernel': (attack_kernel.KernelSession, 'vsock', "the kernel's vhost-vsock"),
        'net-vhost': (attack_kernel.NetVhost, 'net',
                      "QEMU's virtio-net on the kernel's vhost-net (tap)"),
    }


def run_session(ring, modes=None, log_dir=None, accel='tcg', every=20, count=20, name=None,
                verbose=False, device='ours'):
    """Boot the guest with `device` (a name of devices()), run `modes` (default: every mode of its
    kind the guest lists) in turn; {mode: Result}. After a crash a new
    guest and back end boot (logs NAME-2, NAME-3, ...) for the modes left."""
    log_dir = log_dir or os.path.join(rr.REPO, 'build', 'attacks')
    cls, kind, _ = devices()[device]
    boots = 1
    sess = cls(ring, log_dir, accel, name, every, count)
    base = sess.name
    results = {}
    by = None
    try:
        sess.start()
        todo = list(modes or attack_modes(sess.launch.console, kind))
        for i, mode in enumerate(todo):
            if kind == 'net':
                res = attack_net.run_mode(sess, mode, Result)
            else:
                res, by = run_mode(sess, mode, by)
            res.backend = device
            results[mode] = res
            if verbose:
                print(res.summary(), flush=True)
            if res.outcome == 'crashes' and i + 1 < len(todo):
                sess.stop()
                boots += 1
                sess = cls(ring, log_dir, accel, '%s-%d' % (base, boots), every, count)
                sess.start()
                by = None
        if by is not None:
            by.close()
        results['_status'] = sess.launch.poweroff(120) if sess.alive() else None
    finally:
        sess.stop()
    return results
