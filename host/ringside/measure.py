# SPDX-License-Identifier: MIT
"""The measurement options, declared once. A command that measures takes
the ones it has from here, each with its own default, so an option means
the same in every command (tests/host/test_options.py checks that no
command declares one of these names itself):

    measure.add(p, time=3.0, parallel=[1, 4], count=300)

-t/--time, -P/--parallel, -l/--length and -R/--reverse are iperf3's;
--json, --csv and --no-save are results.add_options'.
"""


from .cli import guest_list, int_list, nonneg_int, positive_float, positive_int, size_list

# name: (option strings, argparse keywords, help; the default is added)
OPTIONS = {
    'time': (('-t', '--time'), dict(type=positive_float, metavar='S'),
             'seconds of load per cell'),
    'parallel': (('-P', '--parallel'), dict(type=int_list, metavar='LIST'),
                 'connections at once: streams, sessions'),
    'length': (('-l', '--length'), dict(type=size_list, metavar='LIST'),
               'bytes per write of a stream'),
    'reverse': (('-R', '--reverse'), dict(action='store_true'),
                "iperf3's -R: the guest sends, the host receives"),
    'count': (('--count',), dict(type=positive_int, metavar='N'),
              'operations per cell (round trips, packets)'),
    'warmup': (('--warmup',), dict(type=nonneg_int, metavar='N'),
               'operations before a cell, not measured'),
    'sizes': (('--sizes',), dict(type=size_list, metavar='LIST'),
              'message sizes in bytes'),
    'rounds': (('--rounds',), dict(type=positive_int, metavar='N'),
               'each cell N times, interleaved'),
    'guests': (('--guests',), dict(type=guest_list, metavar='LIST'),
               'who boots, in order (also linux-6.12)'),
    'cost': (('--cost',), dict(nargs='?', const='', metavar='OPTS'),
             'guest instructions per op (OPTS: io=on)'),
    'exits': (('--exits',), dict(action='store_true'),
              "VM exits per operation (KVM's tracepoints)"),
}


def _shown(value):
    """A default as the option takes it: 64,4k; 3."""
    if isinstance(value, (list, tuple)):
        return ','.join(_shown(v) for v in value)
    if isinstance(value, int) and value >= 1024 and value % 1024 == 0:
        return '%dk' % (value >> 10) if value < (1 << 20) or value % (1 << 20) else \
            '%dm' % (value >> 20)
    if isinstance(value, float) and value.is_integer():
        return '%d' % value
    return str(value)


def add(p, more=(), **defaults):
    """Add the options named in `defaults` to parser `p`, each with its
    default (None: a flag, or nothing unless given); those in `more` go
    to --help-all only. Returns p."""
    for name, default in defaults.items():
        flags, kw, text = OPTIONS[name]
        kw = dict(kw)
        if kw.get('action') == 'store_true' or kw.get('nargs') == '?':
            help_text = text
        else:
            help_text = '%s (%s)' % (text, _shown(default))
            if kw.get('type') is guest_list and isinstance(default, str):
                default = guest_list(default)
        action = p.add_argument(*flags, default=default, help=help_text, more=name in more,
                                **kw)
        action.shared = name
    return p


def shared_names():
    """Every option string of the shared options: what a command must not
    declare with a meaning of its own."""
    return {flag for flags, _, _ in OPTIONS.values() for flag in flags}


def declared(parser):
    """{option string: shared name or None} of a parser's options."""
    out = {}
    for action in parser._actions:
        for flag in action.option_strings:
            out[flag] = getattr(action, 'shared', None)
    return out
