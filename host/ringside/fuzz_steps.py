# SPDX-License-Identifier: MIT
"""The guest fuzzer's steps on the host side: the tokens of a seed's
range from the same generator the guest runs (drivers/virtio/fuzz_gen.c,
built as build/host/ringside-fuzz-gen), their digest, and the console
lines that replay them.

A token is KIND.HEX: two letters for what the step does and the word
whose bit fields say how (0: the honest step). A console line holds at
most REPLAY_MAX tokens (16 words, 255 characters): a longer batch
replays as `fuzz add` lines, then `fuzz replay` with the last tokens.
"""

import hashlib
import os
import re
import subprocess

from .images import repo_path

GEN = repo_path('build', 'host', 'ringside-fuzz-gen')
TARGETS = ('vsock', 'net', 'transport')
TOKEN = re.compile(r'^([a-z]{2})\.([0-9a-f]{1,16})$')
REPLAY_MAX = 13          # `fuzz replay target=T` and 13 tokens: 16 words
LINE_MAX = 250           # characters a console line keeps (255), with room
# what each target draws (fuzz_gen.c's tables)
KINDS = {'vsock': ('hd', 'cr', 'sq', 'dc', 'it', 'rg', 'ev', 'kk', 'rx'),
         'net': ('nh', 'dc', 'it', 'rg', 'ev', 'kk'),
         'transport': ('st', 'qs', 'mv', 'nq', 'qr')}
# the transport's kinds: a replay of them is a transport batch
TRANSPORT_KINDS = KINDS['transport']


class GeneratorMissing(RuntimeError):
    pass


def _gen(args):
    if not os.path.exists(GEN):
        raise GeneratorMissing('%s missing: run make' % os.path.relpath(GEN, repo_path()))
    out = subprocess.run([GEN] + [str(a) for a in args], capture_output=True, text=True,
                         check=True, timeout=60)
    lines = out.stdout.split()
    return lines[:-2], lines[-1]


def steps(seed, target, start, count):
    """([token, ...], the guest's digest of them) for steps start.. of seed."""
    return _gen([seed, target, start, count])


def digest(tokens):
    """The digest the guest prints for a batch of these tokens."""
    return _gen(['--digest'] + list(tokens))[1]


def run_digest(tokens):
    """A digest of a whole run's tokens in order, to show two runs are the same."""
    return hashlib.sha256(' '.join(tokens).encode()).hexdigest()[:16]


def parse(token):
    """(kind, word) of a token, or ValueError."""
    m = TOKEN.match(token)
    if not m:
        raise ValueError('not a fuzz step: %r' % token)
    return m.group(1), int(m.group(2), 16)


def token(kind, word):
    return '%s.%x' % (kind, word)


def kind(tok):
    return tok.split('.', 1)[0]


def replay_lines(tokens, target):
    """The console lines that replay tokens for target as one batch: `fuzz
    add` lines while more are to come, then `fuzz replay`."""
    lines, cur = [], []
    for tok in tokens:
        line = ' '.join(['fuzz replay target=%s' % target] + cur + [tok])
        if cur and (len(cur) == REPLAY_MAX or len(line) > LINE_MAX):
            lines.append(' '.join(['fuzz add target=%s' % target] + cur))
            cur = []
        cur.append(tok)
    lines.append(' '.join(['fuzz replay target=%s' % target] + cur))
    return lines
