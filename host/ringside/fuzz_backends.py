# SPDX-License-Identifier: MIT
"""The back ends a fuzz campaign runs against (fuzz.py), one guest at a time
behind each, with what the oracles watch:

  ours         build/host/ringside-vhost-vsock (vhost-user), split and packed
  kernel       the kernel's vhost-vsock under KVM (a KVM host, or host/nested)
  net-qemu     QEMU's virtio-net on -netdev dgram to a peer on 127.0.0.1
  net-testpmd  virtio-net on vhost-user to dpdk-testpmd (rxonly)
  net-vhost    QEMU's virtio-net on a tap the kernel's vhost-net moves (KVM)
  CMD          a vhost-user-vsock back end of the user's own (the launcher's
               --backend CMD: {socket} {uds} {cid}); its exit, its answers
               and the bystander are the oracles, no counters asked of it

The guests are the attack modes' sessions (attack.py,
attack_kernel.py, attack_net.py): the same boots, the same peers. Around
them a FuzzGuest keeps

  the bystander  vsock: an echo connection exchanging patterned data the
                 whole time, every byte compared; net-qemu: a UDP echo
                 through the guest; testpmd, vhost-net: pktgen's frames
                 counted whole by the peer after each batch
  the victims    vsock: a sink connection the host keeps writing to (the
                 stream the steps lie about) and a SEQPACKET one where
                 the back end has them
  the processes  the back end's and QEMU's: their exit, their anonymous
                 memory and their file descriptors
  the host       the host kernel's log, under KVM
"""

import os
import re
import subprocess

from . import attack_kernel, attack_net, vcpu_watch
from .attack import ECHO, SINK, VICTIM_CHUNK, Session
from .benchlib import echo_exchange, pattern
from .images import REPO

VSOCK_TARGETS = ('vsock', 'transport')
NET_TARGETS = ('net', 'transport')
EXCHANGE_TIMEOUT = 30
AFTER_TIMEOUT = 120
# A host kernel that broke, or a back end that said it did (attack_kernel's, and hung tasks,
# soft lockups and vhost's own error lines)
HOST_BROKE = re.compile(attack_kernel.KERNEL_BROKE.pattern + r'|blocked for more than \d+ '
                        r'seconds|soft lockup|rcu_sched detected stall|vhost[^\n]*error')
# Growth past the first batch's that is a leak: anonymous memory, descriptors
RSS_BOUND = {'back end': 64 << 20, 'testpmd': 64 << 20, 'qemu': 256 << 20}
FD_BOUND = 64


def process_usage(pid):
    """(anonymous resident bytes, open descriptors) of a live process, or None."""
    try:
        with open('/proc/%d/status' % pid) as f:
            rss = re.search(r'^RssAnon:\s+(\d+) kB', f.read(), re.M)
        fds = len(os.listdir('/proc/%d/fd' % pid))
    except OSError:
        return None
    return (int(rss.group(1)) << 10 if rss else 0), fds


def _version(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else None


class FuzzGuest:
    """One guest behind one back end, for a run of fuzz batches."""

    targets = VSOCK_TARGETS
    live_bystander = True
    # hands every buffer back, malformed or not (ours says so: docs/attacks.md)
    keeps_nothing = False

    def __init__(self, sess):
        self.sess = sess
        self.exchanges = 0

    @property
    def console(self):
        return self.sess.launch.console

    @property
    def main_target(self):
        return self.targets[0]

    def start(self):
        self.sess.start()
        return self

    def stop(self):
        self.sess.stop()

    def alive(self):
        return self.sess.alive()

    def processes(self):
        """[(name, Popen)] whose exit, memory and descriptors are watched."""
        q = self.sess.launch.qemu if self.sess.launch else None
        return [('qemu', q)] if q else []

    def why_dead(self):
        """Which watched process exited, how, and what it said last."""
        gone = ['%s exited with status %s' % (name, p.returncode)
                for name, p in self.processes() if p.poll() is not None]
        said = [x.strip() for x in self.sess.backend_log().splitlines()
                if re.search(r'Assertion|abort|Segmentation|qemu-system|error|panic|BUG', x)]
        return '; '.join(gone + said[-3:]) or 'a back-end process exited'

    def usage(self):
        """{name: (anonymous bytes, descriptors)} of the watched processes."""
        out = {}
        for name, p in self.processes():
            u = process_usage(p.pid) if p.poll() is None else None
            if u:
                out[name] = u
        return out

    def host_broke(self):
        """The host kernel's first line of an oops, warning or hung task since
        the guest started, under KVM; '' elsewhere."""
        return ''

    def feed(self):
        """Keep the victims busy (between bystander exchanges)."""

    def exchange(self, n):
        """One bystander exchange during a batch: '' or what went wrong."""
        return ''

    def after(self):
        """After a reset: is the device serving again? '' or what failed."""
        return ''

    def check_due(self):
        """With no bystander live during batches: time to check the
        device serves (after()) though nothing was reset."""
        return False

    @classmethod
    def environment(cls):
        """The versions a failure report needs."""
        env = {'qemu': _version([os.environ.get('RINGSIDE_QEMU', 'qemu-system-x86_64'),
                                 '--version']),
               'host_kernel': os.uname().release}
        env.update(cls.backend_version())
        return env

    @staticmethod
    def backend_version():
        return {}


class VsockGuest(FuzzGuest):
    """A vsock back end: bystander and victims are vsock connections."""

    seqpacket = True

    def __init__(self, sess):
        super().__init__(sess)
        self.by = None
        self.victims = {}

    def start(self):
        super().start()
        self.by = self.sess.connect(ECHO)
        return self

    def _close(self):
        for s in [self.by] + list(self.victims.values()):
            if s is not None:
                s.close()
        self.by, self.victims = None, {}

    def stop(self):
        self._close()
        super().stop()

    def _victim(self, seq):
        s = self.victims.get(seq)
        if s is not None:
            return s
        try:
            s = self.sess.connect(ECHO if seq else SINK, timeout=5, seq=seq)
            s.setblocking(False)
        except OSError:
            return None
        self.victims[seq] = s
        return s

    def feed(self):
        for seq in (False, True) if self.seqpacket else (False,):
            s = self._victim(seq)
            if s is None:
                continue
            try:
                if not seq:
                    s.send(VICTIM_CHUNK)
                while s.recv(1 << 16):
                    pass
                raise ConnectionError('EOF')
            except BlockingIOError:
                continue
            except OSError:
                s.close()   # the steps ended it: a new one next time
                del self.victims[seq]

    def exchange(self, n):
        if self.by is None:
            return 'no bystander connection'
        err = echo_exchange(self.by, pattern(1 + (n * 7919) % 16384, n), EXCHANGE_TIMEOUT)
        if not err:
            self.exchanges += 1
        return err

    def after(self):
        self._close()
        try:
            s = self.sess.connect(ECHO, timeout=AFTER_TIMEOUT)
        except OSError as e:
            return 'connect after the reset: %s' % (e.strerror or e)
        for size in (1, 65536):
            err = echo_exchange(s, pattern(size, size), EXCHANGE_TIMEOUT)
            if err:
                s.close()
                return 'echo after the reset: %s' % err
        self.by = s
        return ''


class OursGuest(VsockGuest):
    keeps_nothing = True

    def processes(self):
        return [('back end', self.sess.backend())] + super().processes()

    @staticmethod
    def backend_version():
        return {'backend': 'ringside-vhost-vsock', 'backend_version':
                _version(['git', '-C', REPO, 'describe', '--always', '--dirty'])}


class CustomSession(Session):
    """Session behind a back end of the user's own (the launcher's --backend)."""

    backend_cmd = None

    def launcher_args(self, ring, accel):
        return ['--vsock', '--accel', accel, '--boot', 'elf', '--backend', self.backend_cmd,
                '--qemu-arg=-global', '--qemu-arg=vhost-user-vsock-pci.packed=%s'
                % ('on' if ring == 'packed' else 'off')]


class CustomGuest(OursGuest):
    seqpacket = False   # no SEQPACKET socket is asked of it
    keeps_nothing = False

    @staticmethod
    def backend_version():
        return {'backend': CustomSession.backend_cmd}


class KernelGuest(VsockGuest):
    def __init__(self, sess):
        super().__init__(sess)
        self.kernel_mark = len(attack_kernel.kernel_log())

    def host_broke(self):
        for line in attack_kernel.kernel_log()[self.kernel_mark:]:
            if HOST_BROKE.search(line):
                return line.strip()
        return ''

    def alive(self):
        q = self.sess.launch.qemu if self.sess.launch else None
        return q is not None and q.poll() is None

    @staticmethod
    def backend_version():
        return {'backend': "the kernel's vhost-vsock", 'backend_version': os.uname().release}


class NetGuest(FuzzGuest):
    targets = NET_TARGETS
    # batches between two checks by pktgen where no bystander is live
    CHECK_EVERY = 8

    def __init__(self, sess):
        super().__init__(sess)
        self.live_bystander = sess.live_bystander
        self.n_after = 0
        self.unchecked = 0

    def check_due(self):
        self.unchecked += 1
        return not self.live_bystander and self.unchecked % self.CHECK_EVERY == 0

    def exchange(self, n):
        err = self.sess.exchange(n) if self.live_bystander else ''
        if not err and self.live_bystander:
            self.exchanges += 1
        return err

    def after(self):
        self.n_after += 1
        return self.sess.after()


class NetQemuGuest(NetGuest):
    @staticmethod
    def backend_version():
        return {'backend': "QEMU's virtio-net (-netdev dgram)"}


class TestpmdGuest(NetGuest):
    def processes(self):
        return [('testpmd', self.sess.pmd.proc)] + super().processes()

    @staticmethod
    def backend_version():
        return {'backend': 'dpdk-testpmd (vhost-user-net)',
                'backend_version': _version(['dpkg-query', '-W', '-f', '${Version}\n',
                                             'dpdk'])}


class NetVhostGuest(NetGuest):
    def __init__(self, sess):
        super().__init__(sess)
        self.kernel_mark = len(attack_kernel.kernel_log())

    def host_broke(self):
        return KernelGuest.host_broke(self)

    @staticmethod
    def backend_version():
        return {'backend': "QEMU's virtio-net on the kernel's vhost-net (tap)",
                'backend_version': os.uname().release}


class Backend:
    """A back end's name, what its guests are, and where they can run."""

    def __init__(self, name, label, session, guest, accel='tcg', rings=('split', 'packed')):
        self.name, self.label = name, label
        self.session, self.guest = session, guest
        self.accel, self.rings = accel, rings
        self.targets = guest.targets

    def why_not_here(self):
        return self.session.why_not_here()

    def boot(self, ring, log_dir, name):
        """A FuzzGuest, started: its guest ready, its bystander connected."""
        guest = self.guest(self.session(ring, log_dir, self.accel, name))
        try:
            return guest.start()
        except BaseException:
            guest.stop()
            raise


def backends():
    """{name: Backend} of the back ends that have names."""
    return {
        'ours': Backend('ours', 'ringside-vhost-vsock', Session, OursGuest),
        'kernel': Backend('kernel', "the kernel's vhost-vsock", attack_kernel.KernelSession,
                          KernelGuest, accel='kvm', rings=('split',)),
        'net-qemu': Backend('net-qemu', "QEMU's virtio-net (-netdev dgram)",
                            attack_net.NetQemu, NetQemuGuest),
        'net-testpmd': Backend('net-testpmd', 'dpdk-testpmd (vhost-user-net)',
                               attack_net.NetTestpmd, TestpmdGuest),
        'net-vhost': Backend('net-vhost', "QEMU's virtio-net on the kernel's vhost-net",
                             attack_kernel.NetVhost, NetVhostGuest, accel='kvm',
                             rings=('split',)),
    }


def custom(cmd):
    """The Backend for a back end command of the user's own."""
    CustomSession.backend_cmd = cmd
    return Backend('custom', cmd, CustomSession, CustomGuest)


def nested_fault(text):
    """The nested hypervisor's fault (vcpu_watch) in text, not the back
    end's: the report, or None."""
    return vcpu_watch.below_us(text) if text else None
