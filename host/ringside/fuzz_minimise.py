# SPDX-License-Identifier: MIT
"""Shrinking a failing step sequence to its core: delta debugging over the
steps (Zeller and Hildebrandt's ddmin: drop halves, quarters, ... while
the failure stays), then each step's word towards 0, the honest value of
every field (its bytes, then its bits), while the failure stays.

`fails(tokens)` runs a sequence (a fresh guest each time, in the campaign)
and says whether the same failure came back. Every sequence is tried at
most once; the work stops at the deadline with the shortest sequence
found so far, which still fails.
"""

import time

from . import fuzz_steps


class Minimiser:
    def __init__(self, fails, deadline=None, clock=time.monotonic):
        self._fails = fails
        self.deadline = deadline
        self.clock = clock
        self.tried = {}

    def over(self):
        return self.deadline is not None and self.clock() >= self.deadline

    def fails(self, tokens):
        key = tuple(tokens)
        if key not in self.tried:
            self.tried[key] = bool(tokens) and self._fails(list(tokens))
        return self.tried[key]

    def ddmin(self, tokens):
        """The shortest sublist (order kept) that still fails, as far as
        ddmin finds it before the deadline."""
        c, n = list(tokens), 2
        while len(c) >= 2 and not self.over():
            chunks = _split(c, n)
            for i, chunk in enumerate(chunks):
                if self.fails(chunk):
                    c, n = chunk, 2
                    break
                rest = [t for j, ch in enumerate(chunks) if j != i for t in ch]
                if n > 2 and self.fails(rest):
                    c, n = rest, max(n - 1, 2)
                    break
                if self.over():
                    return c
            else:
                if n >= len(c):
                    break
                n = min(2 * n, len(c))
        return c

    def shrink_words(self, tokens):
        """Each token's word with as many bits cleared as keep it failing:
        the whole word, then each byte, then each bit left."""
        c = list(tokens)
        for i in range(len(c)):
            kind, word = fuzz_steps.parse(c[i])
            masks = [~0] + [0xff << (8 * b) for b in reversed(range(8))]
            for mask in masks + [1 << b for b in reversed(range(64))]:
                if self.over():
                    return c
                if not word & mask:
                    continue
                trial = c[:i] + [fuzz_steps.token(kind, word & ~mask)] + c[i + 1:]
                if self.fails(trial):
                    c, word = trial, word & ~mask
        return c

    def minimise(self, tokens):
        return self.shrink_words(self.ddmin(tokens))


def _split(items, n):
    """items in n runs as even as may be, none empty."""
    n = min(n, len(items))
    k, r = divmod(len(items), n)
    out, at = [], 0
    for i in range(n):
        size = k + (1 if i < r else 0)
        out.append(items[at:at + size])
        at += size
    return out
