# SPDX-License-Identifier: MIT
"""guest_stats: the `stats json` line is found among other console output,
parsed whole, and a refusal or a cut line is an error, never a guess."""

import pytest

from ringside import StatsError, guest_stats, parse_stats, vsock_queue_sum

LINE = ('stats-json: {"virtio-vsock":{"device":true,"queues":{'
        '"rxq":{"kicks":1,"interrupts":7},"txq":{"kicks":5,"interrupts":2},'
        '"evq":{"kicks":1,"interrupts":0}}},"services":{"echo":{"conns":0,"bytes_in":64}}}')


class FakeConsole:
    """Answers each command with a canned output; remembers the commands."""

    def __init__(self, out):
        self.out, self.cmds = out, []

    def command(self, cmd, timeout):
        self.cmds.append((cmd, timeout))
        return self.out


def test_parses_the_marked_line_among_others():
    # a log line before, one after, and a stray prefix on the line itself
    out = '[   1.5] vsock: reset\r\n\x1b[K' + LINE + '\r\nringside: late line'
    st = parse_stats(out)
    assert st['services']['echo']['bytes_in'] == 64
    assert vsock_queue_sum(st, 'kicks') == 7
    assert vsock_queue_sum(st, 'interrupts') == 9


def test_guest_stats_asks_for_a_section():
    con = FakeConsole(LINE)
    st = guest_stats(con, 30, 'virtio-vsock')
    assert con.cmds == [('stats json virtio-vsock', 30)]
    assert st['virtio-vsock']['queues']['txq']['kicks'] == 5
    guest_stats(con, 5)
    assert con.cmds[-1] == ('stats json', 5)


class LossyConsole:
    """Answers with the given outputs in turn."""

    def __init__(self, outs):
        self.outs, self.asked = list(outs), 0

    def command(self, cmd, timeout):
        self.asked += 1
        return self.outs.pop(0)


def test_a_line_with_a_hole_is_asked_for_again():
    # the console gave a burst up: bytes missing in the middle of the line
    holed = LINE[:40] + LINE[56:]
    con = LossyConsole([holed, LINE])
    assert guest_stats(con, 5)['services']['echo']['bytes_in'] == 64
    assert con.asked == 2
    con = LossyConsole([holed] * 3)
    with pytest.raises(StatsError):
        guest_stats(con, 5)
    assert con.asked == 3


@pytest.mark.parametrize('out', [
    "error: stats: no subsystem 'nosuch'",
    'error: stats json: the object exceeds 16384 bytes',
    '',
    LINE[:-20],                       # cut short
    'stats-json: [1, 2]',             # not an object
])
def test_refusals_and_broken_lines_raise(out):
    with pytest.raises(StatsError):
        guest_stats(FakeConsole(out), 5)
