# SPDX-License-Identifier: MIT
"""A test-only TCP relay into the guest through the back end's hybrid
Unix socket: it accepts TCP on 127.0.0.1 (a free port), opens
`CONNECT <port>` on the back end for each connection and copies bytes both
ways, so an unmodified TCP client (Debian's iperf3) reaches a guest vsock
service. The back end's own --forward-tcp replaces this once it lands.
"""
import socket
import threading

from vsockhost import hybrid_connect

CHUNK = 1 << 16


def _pump(src, dst):
    """Copy until EOF or an error, then pass the EOF on."""
    try:
        while True:
            data = src.recv(CHUNK)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
        try:
            s.shutdown(how)
        except OSError:
            pass


class HybridTcpRelay:
    """127.0.0.1:self.port -> guest vsock port `vport` via `uds`."""

    def __init__(self, uds, vport):
        self.uds = uds
        self.vport = vport
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self.refused = 0
        self._socks = []
        self._threads = []
        self._closed = False
        self._accept_thread = threading.Thread(target=self._accept_loop,
                                               daemon=True)
        self._accept_thread.start()

    def _accept_loop(self):
        while not self._closed:
            try:
                tcp, _ = self.listener.accept()
            except OSError:
                return
            try:
                guest = hybrid_connect(self.uds, self.vport)
            except OSError:
                self.refused += 1
                tcp.close()
                continue
            guest.settimeout(None)
            self.connections += 1
            self._socks += [tcp, guest]
            for a, b in ((tcp, guest), (guest, tcp)):
                t = threading.Thread(target=_pump, args=(a, b), daemon=True)
                t.start()
                self._threads.append(t)

    def close(self):
        self._closed = True
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        for s in self._socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        for t in self._threads + [self._accept_thread]:
            t.join(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
