# SPDX-License-Identifier: MIT
"""dpdk-testpmd with a vhost-user server socket: the peer of virtio-net in
`ringside net` and tests/qemu/test_net_testpmd.py."""

import os
import re
import shutil
import subprocess
import threading
import time

from .errors import LaunchError
from .peer import FramePeer
from .process import Children
from .wait import until

TESTPMD = 'dpdk-testpmd'
GUEST_MAC = '52:54:00:12:34:56'


class TestPmdError(Exception):
    pass


def guest_args(sock, packed=True, mem='512M', mrg_rxbuf=True, mac=GUEST_MAC, queues=1):
    """QEMU arguments for virtio-net-pci on a vhost-user back end at `sock`;
    queues > 1 offers VIRTIO_NET_F_MQ with that many pairs and an MSI-X
    entry for each queue, the control queue and the config."""
    mq = ',mq=on,vectors=%d' % (2 * queues + 2) if queues > 1 else ''
    return ['-object', 'memory-backend-memfd,id=mem,size=%s,share=on' % mem,
            '-machine', 'memory-backend=mem',
            '-chardev', 'socket,id=vhu0,path=%s' % sock,
            '-netdev', 'vhost-user,id=n0,chardev=vhu0%s'
            % (',queues=%d' % queues if queues > 1 else ''),
            '-device', 'virtio-net-pci,netdev=n0,packed=%s,mac=%s%s%s'
            % ('on' if packed else 'off', mac, '' if mrg_rxbuf else ',mrg_rxbuf=off', mq)]


class TestPmd(FramePeer):
    """dpdk-testpmd with a vhost-user server socket, driven on its console.

    Runs interactive (-i) with --auto-start, stdout line-buffered through
    stdbuf so answers arrive as they are printed. Stopped by `quit`, then
    by its process group (Children). Its counters (port_stats()) are never
    cleared, so a reset racing the forwarding lcore cannot skew them;
    testpmd counts RX-packets as it drains.
    """

    def __init__(self, sock, mode='rxonly', lcores='0-1', mbufs=8192, log=None,
                 auto_start=True, txpkts=None, queues=1):
        self.sock, self.mode, self.lcores, self.mbufs = sock, mode, lcores, mbufs
        self.queues = queues
        # txonly toward the guest starts on `start` (forward_start()), not
        # when the guest connects, so a test or benchmark sets up first.
        self.auto_start, self.txpkts = auto_start, txpkts
        self.prefix = 'ringside-%d-%d' % (os.getpid(), int(time.monotonic() * 1000) % 100000)
        self.log = log
        self.proc = None
        self.proc_status = None
        self.text = ''
        self.pos = 0
        self._cond = threading.Condition()
        self._eof = False

    def argv(self):
        return ['stdbuf', '-oL', TESTPMD, '-l', self.lcores, '--no-huge', '-m', '1024',
                '--no-pci', '--file-prefix=%s' % self.prefix,
                '--vdev', 'net_vhost0,iface=%s,queues=%d' % (self.sock, self.queues), '--',
                '-i', '--forward-mode=%s' % self.mode,
                *(['--rxq=%d' % self.queues, '--txq=%d' % self.queues]
                  if self.queues > 1 else []),
                '--port-topology=loop', '--total-num-mbufs=%d' % self.mbufs,
                *(['--auto-start'] if self.auto_start else []),
                *(['--txpkts=%d' % self.txpkts] if self.txpkts else [])]

    def start(self, timeout=60.0):
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        self.children = Children()
        try:
            self.proc = self.children.spawn('testpmd', self.argv(), stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except LaunchError as e:
            raise TestPmdError(str(e))
        threading.Thread(target=self._read, daemon=True).start()
        try:
            # The socket file has no event to wait on: asked for.
            until(lambda: os.path.exists(self.sock), timeout, 'testpmd\'s %s' % self.sock,
                  interval=0.05, fail=lambda: self.proc.poll() is not None and 'testpmd exited')
        except LaunchError:
            exited = self.proc.poll() is not None
            self.stop()
            raise TestPmdError('testpmd exited with status %d: %s' % (
                    self.proc_status, self.text[-500:]) if exited else
                    'testpmd did not create %s in %g s' % (self.sock, timeout))
        return self

    def _read(self):
        for line in iter(self.proc.stdout.readline, b''):
            text = line.decode('latin-1')
            if self.log:
                self.log.write(text)
                self.log.flush()
            with self._cond:
                self.text += text
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def wait_for(self, pattern, timeout=30.0):
        rx = re.compile(pattern, re.S)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                m = rx.search(self.text, self.pos)
                if m:
                    self.pos = m.end()
                    return m
                left = deadline - time.monotonic()
                if self._eof or left <= 0:
                    raise TestPmdError('testpmd: no %r; last output %r'
                                       % (pattern, self.text[-300:]))
                self._cond.wait(left)

    def send(self, cmd):
        with self._cond:
            self.pos = len(self.text)
        self.proc.stdin.write((cmd + '\n').encode())
        self.proc.stdin.flush()

    def port_stats(self, timeout=30.0):
        """{'rx': RX-packets, 'tx': TX-packets, 'rx_bytes': ..., 'missed': ...}."""
        self.send('show port stats 0')
        m = self.wait_for(r'NIC statistics for port 0.*?RX-packets:\s*(\d+)\s+RX-missed:\s*(\d+)'
                          r'\s+RX-bytes:\s*(\d+).*?TX-packets:\s*(\d+).*?#{20,}', timeout)
        return {'rx': int(m.group(1)), 'missed': int(m.group(2)),
                'rx_bytes': int(m.group(3)), 'tx': int(m.group(4))}

    def queue_stats(self, timeout=30.0):
        """{'rx': [per RX queue packets], 'tx': [per TX queue packets]} from
        the vhost PMD's extended statistics (rx_qN_good_packets)."""
        # the list has no closing line: a second command's answer ends it
        self.send('show port xstats 0')
        self.proc.stdin.write(b'show port info 0\n')
        self.proc.stdin.flush()
        m = self.wait_for(r'NIC extended statistics for port 0(.*?)Infos for port 0', timeout)
        if 'Cannot get count of xstats' in m.group(1):
            raise TestPmdError('testpmd has no xstats for port 0 (a queue not enabled)')
        st = {'rx': [0] * self.queues, 'tx': [0] * self.queues}
        for d, q, v in re.findall(r'\b(rx|tx)_q(\d+)_good_packets:\s*(\d+)', m.group(1)):
            if int(q) < self.queues:
                st[d][int(q)] = int(v)
        return st

    def forward_start(self):
        self.send('start')
        self.wait_for(r'%s packet forwarding' % self.mode)

    def forward_stop(self, timeout=60.0):
        """`stop`: after the answer no more frames are sent."""
        self.send('stop')
        self.wait_for(r'Done\.', timeout)

    def clear_stats(self):
        self.send('clear port stats 0')
        self.wait_for(r'NIC statistics for port 0 cleared')

    def net_args(self, packed, mac):
        return guest_args(self.sock, packed=packed, mac=mac, queues=self.queues)

    def stop(self, grace=5.0):
        """`quit`, then its process group stopped (Children.stop)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            if proc.poll() is None:
                proc.stdin.write(b'quit\n')
                proc.stdin.flush()
                proc.wait(grace)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.proc_status = self.children.stop(proc, grace)
        self.children.stop_all()
        for f in (proc.stdin, proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        for path in (self.sock, '/var/run/dpdk/%s' % self.prefix):
            try:
                if os.path.isdir(path):
                    shutil.rmtree(path)
                elif os.path.exists(path):
                    os.unlink(path)
            except OSError:
                pass
