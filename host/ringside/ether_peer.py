# SPDX-License-Identifier: MIT
"""A tiny Ethernet peer for ringside's virtio-net.

QEMU's `-netdev dgram` carries one Ethernet frame per UDP datagram between
the guest's virtio-net and this process, both ends bound to 127.0.0.1, so
nothing leaves the machine. (Unix datagram sockets would be tidier, but a
receiver's queue holds only net.unix.max_dgram_qlen = 10 datagrams; QEMU
7.2's dgram back end then gets EAGAIN and its TX queue stalls for good.
A UDP socket with a large SO_RCVBUF never pushes back on the sender.)
EtherPeer answers ARP for its address and ICMP echo (so the guest can
`ping` it) in a thread, and hands every other frame to
the test through a queue. Frames are built and parsed here with struct,
checksums included, so the tests can also send malformed ones.

tests/qemu/test_net.py and attack_net.py (the net-qemu device) use
the peer; they test ringside, the peer's builders only through what
ringside makes of them.
"""

import queue
import socket
import struct
import threading
import time

from .wait import poll_for

BROADCAST = b'\xff' * 6
ETH_P_IP = 0x0800
ETH_P_ARP = 0x0806


def mac_bytes(text):
    return bytes(int(x, 16) for x in text.split(':'))


def mac_text(b):
    return ':'.join('%02x' % x for x in b)


def ip_bytes(text):
    return socket.inet_aton(text)


def csum(data):
    """RFC 1071 Internet checksum of `data` (bytes)."""
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def eth(dst, src, etype, payload):
    return dst + src + struct.pack('!H', etype) + payload


def arp(op, sha, spa, tha, tpa):
    return struct.pack('!HHBBH', 1, ETH_P_IP, 6, 4, op) + sha + spa + tha + tpa


def ipv4(src, dst, proto, payload, ident=1, ttl=64, flags_frag=0x4000, fix_csum=True,
         total=None):
    total = 20 + len(payload) if total is None else total
    hdr = struct.pack('!BBHHHBBH4s4s', 0x45, 0, total, ident, flags_frag, ttl, proto, 0,
                      src, dst)
    if fix_csum:
        hdr = hdr[:10] + struct.pack('!H', csum(hdr)) + hdr[12:]
    return hdr + payload


def udp(src, dst, sport, dport, payload, fix_csum=True):
    length = 8 + len(payload)
    hdr = struct.pack('!HHHH', sport, dport, length, 0)
    if fix_csum:
        pseudo = src + dst + struct.pack('!BBH', 0, 17, length)
        c = csum(pseudo + hdr + payload) or 0xffff
        hdr = hdr[:6] + struct.pack('!H', c)
    return hdr + payload


def icmp_echo(ident, seq, data, typ=8):
    hdr = struct.pack('!BBHHH', typ, 0, 0, ident, seq)
    c = csum(hdr + data)
    return hdr[:2] + struct.pack('!H', c) + hdr[4:] + data


def free_udp_port():
    """A UDP port on 127.0.0.1 nobody uses now (QEMU binds it next)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]
    finally:
        s.close()


class Frame:
    """A parsed frame: eth fields, and ip/udp/icmp/arp fields when present."""

    def __init__(self, raw):
        self.raw = raw
        self.dst, self.src = raw[0:6], raw[6:12]
        self.type = struct.unpack('!H', raw[12:14])[0]
        self.ip = self.udp = self.icmp = self.arp = None
        body = raw[14:]
        if self.type == ETH_P_ARP and len(body) >= 28:
            self.arp = dict(op=struct.unpack('!H', body[6:8])[0], sha=body[8:14],
                            spa=body[14:18], tha=body[18:24], tpa=body[24:28])
        elif self.type == ETH_P_IP and len(body) >= 20:
            ihl = (body[0] & 15) * 4
            total = struct.unpack('!H', body[2:4])[0]
            self.ip = dict(src=body[12:16], dst=body[16:20], proto=body[9],
                           csum_ok=csum(body[:ihl]) == 0, total=total)
            pl = body[ihl:total]
            if body[9] == 17 and len(pl) >= 8:
                sport, dport, length, c = struct.unpack('!HHHH', pl[:8])
                pseudo = body[12:20] + struct.pack('!BBH', 0, 17, length)
                self.udp = dict(sport=sport, dport=dport, length=length,
                                payload=pl[8:length],
                                csum_ok=c == 0 or csum(pseudo + pl[:length]) == 0)
            elif body[9] == 1 and len(pl) >= 8:
                typ, code, c, ident, seq = struct.unpack('!BBHHH', pl[:8])
                self.icmp = dict(type=typ, code=code, id=ident, seq=seq, data=pl[8:],
                                 csum_ok=csum(pl) == 0)


class EtherPeer:
    """The host end of `-netdev dgram` over Unix datagram sockets."""

    def __init__(self, mac='02:00:00:00:00:02', ip='10.0.2.2', answer=True):
        self.mac, self.ip = mac_bytes(mac), ip_bytes(ip)
        self.answer = answer
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind(('127.0.0.1', 0))
        self.host_port = self.sock.getsockname()[1]
        self.guest_port = free_udp_port()
        self.frames = queue.Queue()
        self.counts = {'arp_replies': 0, 'echo_replies': 0, 'udp9': 0, 'udp9_bad': 0,
                       'rx': 0, 'runts': 0, 'tcp9': 0}
        self.udp9_first = None
        self.guest_mac = None
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def qemu_args(self, packed=False, extra=''):
        return ['-netdev', 'dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=%d,'
                'remote.type=inet,remote.host=127.0.0.1,remote.port=%d'
                % (self.guest_port, self.host_port),
                '-device', 'virtio-net-pci,netdev=n0,packed=%s%s'
                % ('on' if packed else 'off', extra)]

    def send(self, frame):
        self.sock.sendto(frame, ('127.0.0.1', self.guest_port))

    def _run(self):
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                raw = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            self.counts['rx'] += 1
            if len(raw) < 14:
                self.counts['runts'] += 1   # no Ethernet header: nothing to parse
                continue
            f = Frame(raw)
            if f.ip and f.ip['proto'] == 6 and raw[36:38] == b'\x00\x09':
                self.counts['tcp9'] += 1    # the hostile driver's frames: counted only
                continue
            if f.udp and f.udp['dport'] == 9:
                # pktgen flow: counted here, not queued (there are many)
                if self.udp9_first is None:
                    self.udp9_first = raw
                if raw == self.udp9_first and f.udp['csum_ok'] and f.ip['csum_ok']:
                    self.counts['udp9'] += 1
                else:
                    self.counts['udp9_bad'] += 1
                continue
            if self.answer and f.arp and f.arp['op'] == 1 and f.arp['tpa'] == self.ip:
                self.guest_mac = f.arp['sha']
                self.send(eth(f.src, self.mac, ETH_P_ARP,
                              arp(2, self.mac, self.ip, f.arp['sha'], f.arp['spa'])))
                self.counts['arp_replies'] += 1
                continue
            if (self.answer and f.icmp and f.icmp['type'] == 8 and f.ip['dst'] == self.ip
                    and f.icmp['csum_ok']):
                # counted before it goes: a guest that printed the reply
                # must not find the count behind it
                self.counts['echo_replies'] += 1
                self.send(eth(f.src, self.mac, ETH_P_IP,
                              ipv4(self.ip, f.ip['src'], 1,
                                   icmp_echo(f.icmp['id'], f.icmp['seq'], f.icmp['data'],
                                             typ=0))))
                continue
            self.frames.put(f)

    def expect(self, pred, timeout=30.0):
        """The next queued frame for which pred(frame) holds (others skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError('no matching frame from the guest in %g s' % timeout)
            try:
                f = self.frames.get(timeout=left)
            except queue.Empty:
                continue
            if pred(f):
                return f

    def drain(self):
        while True:
            try:
                self.frames.get_nowait()
            except queue.Empty:
                return

    def wait_count(self, key, n, timeout=60.0):
        """Wait until counts[key] >= n; polls a counter the thread bumps."""
        poll_for(lambda: self.counts[key] >= n, timeout, interval=0.05)
        return self.counts[key]

    def close(self):
        self._stop = True
        self._thread.join(2)
        self.sock.close()
