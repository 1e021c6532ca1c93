# SPDX-License-Identifier: MIT
"""Shrinking a failing step sequence to its core: delta debugging over the
steps (Zeller and Hildebrandt's ddmin: drop halves, quarters, ... while
the failure stays), then over each step's set bits, towards 0, the
honest value of every field, while the failure stays.

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
        return self._ddmin(list(tokens), self.fails)

    def _ddmin(self, items, fails):
        """ddmin over items with the test fails(sublist)."""
        c, n = list(items), 2
        while len(c) >= 2 and not self.over():
            chunks = _split(c, n)
            for i, chunk in enumerate(chunks):
                if fails(chunk):
                    c, n = chunk, 2
                    break
                rest = [t for j, ch in enumerate(chunks) if j != i for t in ch]
                if n > 2 and fails(rest):
                    c, n = rest, max(n - 1, 2)
                    break
                if self.over():
                    return c
            else:
                if n >= len(c):
                    break
                n = min(2 * n, len(c))
        return c

    def shrink_words(self, steps):
        """Each step's word down to the bits the failure needs: 0 if it
        fails as the honest step, else ddmin over its set bits. A step is
        a token, or anything with a .token and a ._replace(token=...)."""
        c = list(steps)
        for i in range(len(c)):
            if self.over():
                break
            kind, word = fuzz_steps.parse(_token(c[i]))

            def with_bits(bits, i=i, kind=kind):
                return c[:i] + [_with_token(c[i], fuzz_steps.token(kind, sum(bits)))] + c[i + 1:]

            bits = [1 << b for b in range(64) if word >> b & 1]
            if not bits or self.fails(with_bits([])):
                c = with_bits([])
                continue
            keep = self._ddmin(bits, lambda sub: self.fails(with_bits(sub)))
            if self.fails(with_bits(keep)):
                c = with_bits(keep)
        return c

    def minimise(self, tokens):
        return self.shrink_words(self.ddmin(tokens))


def _token(step):
    return step if isinstance(step, str) else step.token


def _with_token(step, token):
    return token if isinstance(step, str) else step._replace(token=token)


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
