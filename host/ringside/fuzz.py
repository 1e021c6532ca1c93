# SPDX-License-Identifier: MIT
"""A campaign of the guest-side virtio fuzzer against one back end (the
command: commands/fuzz.py).

ringside's `fuzz SEED` (drivers/virtio/fuzz.c) drives the devices it has
with a seed's steps: vsock headers, descriptor chains, indirect tables,
ring indices, virtio-net headers and frames, the transport itself. A
campaign boots guests behind one back end (fuzz_backends.py), one after
the other, and runs the seed's steps a batch at a time; after every
batch the host checks its oracles:

  crash        the back end or QEMU exited
  host-kernel  the host kernel logged an oops, BUG, WARNING, a hung task
               or a vhost error (under KVM)
  guest        the guest took an exception, or stopped answering
  silent       the device stopped answering after well-formed steps only,
               without saying it needs a reset (virtio 1.2 2.1.2)
  kept         it kept buffers of well-formed chains for good (our back
               end: any buffer, its own rule, docs/attacks.md)
  garbled      it wrote completions the ring could not follow, after
               well-formed steps only
  dead         after the guest's reset the device does not serve again
  bystander    the bystander connection got a wrong byte, or lost its
               connection with no reset to excuse it
  resources    the back end's (or QEMU's) anonymous memory or open
               descriptors grew past a bound

A device that stops after a malformed step (a looping chain, an avail
index past the ring) has the spec on its side: that is counted (resets),
not a failure. The nested hypervisor's own faults (vcpu_watch.py) are
counted apart and the campaign boots a new guest.

A failure is replayed on a fresh guest (`fuzz replay TOKEN...`, the
failing batch alone, else the guest's whole run to it) and shrunk
(fuzz_minimise.py) to the shortest sequence that still fails the same
oracle: the one-line reproducer. Failures are told apart by oracle and
the kind of the reproducer's last step; each distinct one is saved with
its reproducer, the logs and the versions under build/fuzz/.
"""

import collections
import itertools
import json
import os
import re
import shutil
import sys
import time

from . import fuzz_steps
from .errors import GuestExited, GuestTimeout, LaunchError
from .fuzz_backends import RSS_BOUND, FD_BOUND, nested_fault
from .fuzz_minimise import Minimiser
from .images import REPO
from .results import metadata
from .table import Column, Table

PROG = 'ringside fuzz'
SAVE_DIR = os.path.join(REPO, 'build', 'fuzz')
BATCH = 32
# a seed's run on the console: `fuzz SEED from=I steps=N ...`
STEPS_OF_RUN = re.compile(r'\bsteps=(\d+)')
BATCH_TIMEOUT = 300        # s for one batch's line: 60 s of settling at most, under TCG
BOOT_RETRIES = 3
# every fourth batch drives the transport (it restarts the devices after)
TARGET_ROTATION = 4
# a guest runs this long at most, then the next boots (on the next ring layout)
GUEST_SECONDS = 300

BATCH_LINE = re.compile(
    r'fuzz (?:replay (?P<rn>\d+)|0x(?P<seed>[0-9a-f]+) (?P<target>[a-z]+) (?P<start>\d+)'
    r'\+(?P<n>\d+)): (?P<verdict>[^;\r\n]*); well-formed (?P<wf>\d+)/(?P<ran>\d+), '
    r'skipped (?P<skipped>\d+); digest (?P<digest>[0-9a-f]{16})\r?\n')
STOP_LINE = re.compile(r'fuzz (?:replay|0x[0-9a-f]+ [a-z]+): (?P<verdict>no device|stopped)'
                       r'\r?\n')
EXCEPTION = re.compile(r'\*\*\* exception[^\n]*')
# the batch's end, whichever way it comes
BATCH_END = re.compile('|'.join(
    re.sub(r'\?P<\w+>', '', r.pattern) for r in (BATCH_LINE, STOP_LINE, EXCEPTION)))
# the guest waits for the device's answer: the host's traffic holds meanwhile
SETTLE = re.compile(r'fuzz settle\r?\n')
# between two bystander exchanges: the guest's loop shares the CPUs with them
EXCHANGE_GAP = 0.05
ORACLES = ('crash', 'host-kernel', 'guest', 'silent', 'kept', 'garbled', 'dead', 'bystander',
           'resources')


# Where a back end or QEMU aborted: an assertion's file and line (assert's
# `iov.c:269: iov_copy: Assertion`, GLib's `ERROR:../../qom/object.c:697:object_finalize`)
ABORTED_AT = re.compile(r'([\w-]+\.[ch]):(\d+):')


class Failure:
    def __init__(self, oracle, evidence):
        self.oracle, self.evidence = oracle, evidence

    def signature(self):
        """What tells two failures of one oracle apart beyond their step
        kind: for a crash, the file and line of the assertion it died on
        (QEMU: util/iov.c's and physmem.c's are two bugs), else ''."""
        m = ABORTED_AT.findall(self.evidence) if self.oracle == 'crash' else None
        return '%s:%s' % m[-1] if m else ''

    def __repr__(self):
        return '%s: %s' % (self.oracle, self.evidence)


class Batch:
    """What one fuzz command did: the guest's batch lines (a run the
    guest cut into several batches has several), the bystander, the
    verdicts and the oracles' finding."""

    def __init__(self, command):
        self.command = command
        self.lines = []           # the guest's batch lines (matches)
        self.stop = None          # its line when the run stopped short, or None
        self.ran = self.well_formed = self.skipped = 0
        self.bystander = ''       # what went wrong for the bystander ('' = exact)
        self.exchanges = 0
        self.failure = None       # a Failure, or None
        self.nested = None        # the nested hypervisor's fault, or None
        self.reset = False        # the device was reset (or restarted) meanwhile

    @property
    def line(self):
        """The last batch line, or the stop line, or None."""
        return self.stop or (self.lines[-1] if self.lines else None)

    @property
    def verdict(self):
        return ', then '.join([m.group('verdict') for m in self.lines] +
                              ([self.stop.group('verdict')] if self.stop else []))

    @property
    def n(self):
        return self.ran + self.skipped

    def add(self, m):
        self.lines.append(m)
        self.ran += int(m.group('ran'))
        self.well_formed += int(m.group('wf'))
        self.skipped += int(m.group('skipped'))
        v = m.group('verdict')
        self.reset |= 'reset' in v or v.startswith('restart')


def _send(guest, b, line):
    """One console line of batch b: where its answer starts in the
    console's text, or None once the guest or its back end died before
    answering (b judged then). A line the guest refuses is our error."""
    mark = len(guest.console.text)
    try:
        out = guest.console.command(line, 60)
    except (GuestTimeout, GuestExited) as e:
        _judge(guest, b, mark, str(e))
        return None
    if out.startswith('error:'):
        raise RuntimeError('the guest refused %r: %s' % (line, out))
    return mark


def run_batch(guest, command, expected=None, timeout=BATCH_TIMEOUT):
    """Send one fuzz command and wait for the batch lines of its steps
    (expected of them; None: the first line), exchanging bystander data
    meanwhile; the Batch, judged by the oracles."""
    b = Batch(command)
    console = guest.console
    if guest.live_bystander:
        # once before, as a batch may end before the loop below gets to it
        b.bystander = guest.exchange(0)
        b.exchanges += not b.bystander
    mark = _send(guest, b, command)
    if mark is None:
        return b
    deadline = time.monotonic() + timeout
    pos, n = mark, 0
    while True:
        if not SETTLE.search(console.text, pos):
            guest.feed()
            if guest.live_bystander and not b.bystander:
                b.bystander = guest.exchange(n)
                n += 1
                b.exchanges += not b.bystander
        if console.search(BATCH_END, pos, EXCHANGE_GAP):
            text = console.text
            m = BATCH_LINE.search(text, pos)
            b.stop = STOP_LINE.search(text, pos)
            if EXCEPTION.search(text, pos) or b.stop or m is None:
                break
            b.add(m)
            pos = m.end()
            deadline = time.monotonic() + timeout
            if expected is None or b.n >= expected or _line_failure(guest, m):
                break
        elif not guest.alive() or console.eof:
            break
        if time.monotonic() > deadline:
            return _judge(guest, b, mark, 'no batch line after %d s%s' % (
                timeout, console.diagnose() if console.diagnose else ''))
    return _judge(guest, b, mark, '')


def _line_failure(guest, m):
    """What one batch line's verdict says failed, or None."""
    v = m.group('verdict')
    malformed = int(m.group('wf')) < int(m.group('ran'))
    if v.startswith('restart failed'):
        return Failure('dead', v)
    if v.startswith('silent') and not malformed and 'needs reset' not in v:
        return Failure('silent', v)
    if v.startswith('keeps') and (not malformed or guest.keeps_nothing):
        return Failure('kept', v)
    if 'queue broken' in v and not malformed:
        return Failure('garbled', v)
    return None


def _judge(guest, b, mark, timeout):
    """The oracles, in the order a cause comes before its effects."""
    exc = EXCEPTION.search(guest.console.text, mark)
    verdicts = [f for f in (_line_failure(guest, m) for m in b.lines) if f]
    if not guest.alive():
        b.failure = Failure('crash', guest.why_dead())
    elif guest.host_broke():
        b.failure = Failure('host-kernel', guest.host_broke())
    elif exc:
        b.failure = Failure('guest', exc.group(0).strip())
    elif timeout:
        b.nested = nested_fault(timeout)
        if not b.nested:
            b.failure = Failure('guest', timeout[:300])
    elif b.stop and b.stop.group('verdict') == 'no device':
        b.failure = Failure('dead', 'no device after a reset')
    elif verdicts:
        b.failure = verdicts[0]
    elif b.bystander and ('mismatch' in b.bystander or not b.reset):
        b.failure = Failure('bystander', b.bystander)
    elif b.reset or guest.check_due():
        # a console round trip: the guest's loop has run its recovery by the answer
        try:
            guest.console.command('', 60)
            err = guest.after()
        except (GuestTimeout, GuestExited) as e:
            err = str(e)
        if not guest.alive():
            b.failure = Failure('crash', guest.why_dead())
        elif err:
            b.failure = Failure('dead', err)
    return b


class Usage:
    """The watched processes' memory and descriptors against the first look."""

    def __init__(self):
        self.base = None

    def check(self, guest):
        now = guest.usage()
        if self.base is None:
            self.base = now
            return None
        for name, (rss, fds) in now.items():
            rss0, fds0 = self.base.get(name, (rss, fds))
            if rss - rss0 > RSS_BOUND.get(name, RSS_BOUND['qemu']):
                return Failure('resources', '%s: anonymous memory %d MiB, %d MiB at the start'
                               % (name, rss >> 20, rss0 >> 20))
            if fds - fds0 > FD_BOUND:
                return Failure('resources', '%s: %d open descriptors, %d at the start'
                               % (name, fds, fds0))
        return None


class Reproducer:
    """Runs steps on a fresh guest, a batch as they were: does the same
    oracle fire?"""

    def __init__(self, backend, ring, log_dir, base, verbose=False):
        self.backend, self.ring, self.log_dir = backend, ring, log_dir
        self.base, self.runs, self.verbose = base, 0, verbose
        self.last = None   # the Failure of the last run that failed

    def run(self, steps):
        """The first Failure of a fresh guest replaying steps, or None."""
        return self._run(lambda guest: replay_plan(steps, guest.main_target))

    def run_commands(self, commands):
        """The same for the guest's own seed commands, as they ran."""
        return self.run_lines(commands)

    def run_lines(self, lines):
        """The same for a reproducer's console lines (plan_of_lines)."""
        plan = plan_of_lines(lines)
        return self._run(lambda guest: plan)

    def _run(self, plan_for):
        """The first Failure of a fresh guest given the console lines
        plan_for(guest) says ((line, steps its batch ends with, or None
        for a `fuzz add` line)), or None."""
        self.runs += 1
        name = '%s-replay-%d' % (self.base, self.runs)
        for attempt in range(BOOT_RETRIES):
            try:
                guest = self.backend.boot(self.ring, self.log_dir, name)
                break
            except LaunchError as e:
                if not nested_fault(str(e)) or attempt + 1 == BOOT_RETRIES:
                    raise
        try:
            usage = Usage()
            for line, expected in plan_for(guest):
                b = (run_batch(guest, line, expected) if expected is not None
                     else add_steps(guest, line))
                if b is None:
                    continue
                if b.nested:
                    raise NestedFault(b.nested)
                f = b.failure or usage.check(guest)
                if f:
                    return f
            return None
        finally:
            guest.stop()

    def fails_as(self, oracle, signature=''):
        def fails(steps):
            f = self.run(steps)
            if self.verbose:
                print('  replay %d steps: %s' % (len(steps), f or 'passes'), flush=True)
            if f is not None and f.oracle == oracle and f.signature() == signature:
                self.last = f
                return True
            return False
        return fails


def add_steps(guest, line):
    """A `fuzz add` line of a replay: None, or the Batch judged when the
    guest or its back end died meanwhile (a device that works on its own
    time, such as QEMU's TX timer, can fall over on a step of the batch
    before)."""
    b = Batch(line)
    return b if _send(guest, b, line) is None else None


class NestedFault(Exception):
    pass


# A step of a replay: its token and the batch it ran in, so that a replay
# runs the batches as they were (a guest's run is batches, each its own settle).
Step = collections.namedtuple('Step', 'batch token')


def steps_of(tokens, batch=0):
    return [Step(batch, t) for t in tokens]


def replay_plan(steps, main_target):
    """[(console line, steps its batch ends with, or None for `fuzz add`)]:
    a batch per run of steps of one batch and target (the transport's, or
    main_target's)."""
    plan = []

    def target(step):
        return ('transport' if fuzz_steps.kind(step.token) in fuzz_steps.TRANSPORT_KINDS
                else main_target)
    for (_, t), group in itertools.groupby(steps, key=lambda s: (s.batch, target(s))):
        toks = [s.token for s in group]
        lines = fuzz_steps.replay_lines(toks, t)
        plan += [(x, None) for x in lines[:-1]] + [(lines[-1], len(toks))]
    return plan


def replay_lines(steps, main_target):
    return [line for line, _ in replay_plan(steps, main_target)]


def plan_of_lines(lines):
    """A reproducer's console lines as Reproducer plans them: (line, steps
    its batch ends with, or None for a `fuzz add` line). ValueError names
    a line that is none of `fuzz replay`, `fuzz add` and a seed's run."""
    plan, added = [], 0
    for line in lines:
        words, run = line.split(), STEPS_OF_RUN.search(line)
        if words[:2] == ['fuzz', 'add']:
            added += len([w for w in words[2:] if not w.startswith('target=')])
            plan.append((line, None))
        elif words[:2] == ['fuzz', 'replay']:
            n = len([w for w in words[2:] if not w.startswith('target=')])
            plan.append((line, added + n))
            added = 0
        elif words[:1] == ['fuzz'] and run:
            plan.append((line, int(run.group(1))))
        else:
            raise ValueError('%r is not a fuzz replay, fuzz add or fuzz SEED line' % line)
    if not plan or plan[-1][1] is None:
        raise ValueError('no `fuzz replay` line after the `fuzz add` lines')
    return plan


def replay_file(backend, ring, lines, log_dir, verbose=False):
    """The first Failure of a fresh guest behind backend running a
    reproducer's lines on ring, or None."""
    return Reproducer(backend, ring, log_dir, 'replay-%s' % ring, verbose).run_lines(lines)


class Found:
    """A distinct failure: its oracle, the kind of its reproducer's last step."""

    def __init__(self, failure, batch_tokens, history, commands, ring):
        self.oracle = failure.oracle
        self.evidence = failure.evidence
        self.signature = failure.signature()
        self.batch_tokens = batch_tokens
        self.history = history     # Steps: the guest's batches up to the failure
        self.commands = commands   # the guest's fuzz commands, as they ran
        self.ring = ring
        self.reproducer = None     # minimised Steps, or None
        self.reproduced = None     # True, False (flaky), None (not tried)
        self.count = 1
        self.kind = fuzz_steps.kind(batch_tokens[-1]) if batch_tokens else '-'
        self.replays = 0
        self.saved = None

    def reproducer_tokens(self):
        return [s.token for s in self.reproducer] if self.reproducer else None

    def key(self):
        return self.oracle, self.kind, self.signature

    def label(self):
        """The oracle, and where it aborted when that tells it apart."""
        return '%s (%s)' % (self.oracle, self.signature) if self.signature else self.oracle

    def lines(self, main_target):
        if self.reproduced == 'from its seed':
            return list(self.commands)
        return replay_lines(self.reproducer or steps_of(self.batch_tokens), main_target)

    def line(self, main_target):
        return ' ; '.join(self.lines(main_target))


def minimise(found, backend, log_dir, base, budget, verbose):
    """Reproduce found on fresh guests and shrink it; sets its reproducer."""
    rep = Reproducer(backend, found.ring, log_dir, base, verbose)
    deadline = time.monotonic() + budget
    m = Minimiser(rep.fails_as(found.oracle, found.signature), deadline)
    start = None
    try:
        for candidate in (steps_of(found.batch_tokens), found.history[-8 * BATCH:]):
            if candidate and m.fails(candidate):
                start = candidate
                break
        found.reproduced = start is not None
        if start is None and time.monotonic() < deadline:
            # the guest's whole run again, from its seed, command by command
            f = rep.run_commands(found.commands)
            if f is not None and f.oracle == found.oracle and f.signature() == found.signature:
                found.reproduced = 'from its seed'
                found.evidence = f.evidence
        if start is not None:
            found.reproducer = m.minimise(start)
            found.kind = fuzz_steps.kind(found.reproducer[-1].token)
            if rep.last:
                found.evidence = rep.last.evidence
    except NestedFault as e:
        found.reproduced = None
        if verbose:
            print('  minimising stopped by the nested hypervisor: %s' % e, flush=True)
    found.replays = rep.runs


class Campaign:
    """One back end, one seed: guests one after the other until the time or
    the steps run out."""

    def __init__(self, backend, seed, opts, save_dir):
        self.backend, self.seed, self.opts = backend, seed, opts
        self.save_dir = save_dir
        self.log_dir = os.path.join(save_dir or os.path.join(SAVE_DIR, 'scratch'), 'logs')
        self.next = {t: 0 for t in backend.targets}
        self.tokens = []           # every step run, in order: the digest
        self.steps = self.batches = self.guests = self.resets = 0
        self.nested = 0
        self.failures = 0
        self.found = {}            # key -> Found
        self.fuzz_s = 0.0
        self.started = time.monotonic()
        self.rings = [r for r in backend.rings if r in opts.rings]
        self.env = None

    def over(self):
        if self.opts.steps is not None:
            return self.steps >= self.opts.steps
        return time.monotonic() - self.started >= self.opts.time

    def target_of(self, batch):
        targets = [t for t in self.backend.targets if t in self.opts.targets]
        if len(targets) == 1:
            return targets[0]
        return targets[1] if batch % TARGET_ROTATION == TARGET_ROTATION - 1 else targets[0]

    def run(self):
        while not self.over():
            ring = self.rings[self.guests % len(self.rings)]
            self.guests += 1
            name = '%s-%s-%d' % (self.backend.name, ring, self.guests)
            try:
                guest = self.backend.boot(ring, self.log_dir, name)
            except LaunchError as e:
                if nested_fault(str(e)):
                    self.nested += 1
                    continue
                raise
            try:
                failed = self.run_guest(guest, ring, name)
            finally:
                guest.stop()
            if failed:
                self.failed(*failed)
            self.save()
        return self

    def run_guest(self, guest, ring, name):
        """Batches on one guest until a failure, a nested fault or the end:
        (failure, its batch's tokens, the guest's, ring, name) or None."""
        history, commands = [], []
        usage = Usage()
        t0 = time.monotonic()
        while not self.over() and time.monotonic() - t0 < GUEST_SECONDS:
            target = self.target_of(self.batches)
            start = self.next[target]
            count = BATCH
            if self.opts.steps is not None:
                count = min(count, self.opts.steps - self.steps)
            t_batch = time.monotonic()
            only = [k for k in self.opts.kinds if k in fuzz_steps.KINDS[target]]
            b = run_batch(guest, 'fuzz %#x from=%d steps=%d batch=%d target=%s%s'
                          % (self.seed, start, count, count, target,
                             ' only=' + ','.join(only) if only else ''), count)
            self.batches += 1
            n = b.n if b.lines and not b.failure else count
            toks, _ = fuzz_steps.steps(self.seed, target, start, n)
            for m in b.lines:
                at = int(m.group('start'))
                dig = fuzz_steps.steps(self.seed, target, at, int(m.group('n')))[1]
                if m.group('digest') != dig:
                    raise RuntimeError('the guest ran other steps than the generator draws: '
                                       'digest %s, expected %s (%s)'
                                       % (m.group('digest'), dig, b.command))
            self.next[target] += n
            self.steps += n
            self.tokens += toks
            history += steps_of(toks, self.batches)
            commands.append(b.command)
            self.resets += b.reset
            if self.opts.verbose >= 2:
                print('%s: %s -> %s%s (%.1f s, %d exchanges)'
                      % (name, b.command, b.verdict or '-', ' [%s]' % b.failure if b.failure
                         else '', time.monotonic() - t_batch, b.exchanges), flush=True)
            if b.nested:
                self.nested += 1
                self.note('%s: the nested hypervisor lost the guest: %s' % (name, b.nested))
                break
            failure = b.failure or usage.check(guest)
            if failure:
                self.fuzz_s += time.monotonic() - t0
                return failure, toks, history, commands, ring, name
        self.fuzz_s += time.monotonic() - t0
        return None

    def note(self, text):
        if self.opts.verbose:
            print(text, flush=True)

    def failed(self, failure, toks, history, commands, ring, name):
        self.failures += 1
        self.note('%s: %s after %s' % (name, failure, ' '.join(toks)))
        found = Found(failure, toks, history, commands, ring)
        # a failure of an oracle (and abort) already shrunk to a step kind this batch has:
        # the same
        for f in self.found.values():
            if (f.oracle == failure.oracle and f.signature == failure.signature()
                    and f.kind in {fuzz_steps.kind(t) for t in toks}):
                f.count += 1
                return
        if not self.opts.no_minimise:
            minimise(found, self.backend, self.log_dir, name, self.opts.minimise_time,
                     self.opts.verbose)
        key = found.key()
        if key in self.found:
            self.found[key].count += 1
            return
        self.found[key] = found
        found.saved = self.save_failure(found, name)
        self.note('%s: %s/%s, reproducer: %s'
                  % (name, found.label(), found.kind, found.line(self.backend.targets[0])))

    def save_failure(self, found, name):
        if not self.save_dir:
            return None
        d = os.path.join(self.save_dir, 'failure-%d-%s-%s' % (len(self.found), found.oracle,
                                                              found.kind))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, 'reproducer.txt'), 'w') as f:
            f.write('\n'.join(found.lines(self.backend.targets[0])) + '\n')
        for suffix in ('serial.log', 'stderr.log'):
            src = os.path.join(self.log_dir, '%s.%s' % (name, suffix))
            if os.path.exists(src):
                shutil.copy(src, os.path.join(d, 'failing-guest.' + suffix))
        with open(os.path.join(d, 'failure.json'), 'w') as f:
            json.dump(self.failure_doc(found), f, indent=1)
        return os.path.relpath(d, REPO)

    def failure_doc(self, found):
        return {'oracle': found.oracle, 'kind': found.kind, 'aborted_at': found.signature,
                'evidence': found.evidence,
                'ring': found.ring, 'count': found.count, 'reproduced': found.reproduced,
                'replays': found.replays, 'reproducer': found.reproducer_tokens(),
                'reproducer_lines': found.lines(self.backend.targets[0]),
                'failing_batch': found.batch_tokens, 'environment': self.environment()}

    def environment(self):
        if self.env is None:
            self.env = dict(self.backend.guest.environment(), accel=self.backend.accel,
                            backend=self.backend.name, backend_label=self.backend.label)
        return self.env

    def summary(self):
        elapsed = time.monotonic() - self.started
        return {'backend': self.backend.name, 'label': self.backend.label,
                'seed': '%#x' % self.seed, 'digest': fuzz_steps.run_digest(self.tokens),
                'rings': self.rings, 'targets': list(self.backend.targets),
                'steps': self.steps, 'batches': self.batches, 'guests': self.guests,
                'seconds': round(elapsed, 1), 'fuzz_seconds': round(self.fuzz_s, 1),
                'steps_per_s': round(self.steps / self.fuzz_s, 2) if self.fuzz_s else 0,
                'resets': self.resets, 'nested_faults': self.nested,
                'failures': self.failures, 'distinct': len(self.found),
                'found': [dict(self.failure_doc(f), saved=f.saved)
                          for f in self.found.values()],
                'next': self.next}

    def save(self):
        if not self.save_dir:
            return
        doc = dict(self.summary(), meta=metadata(PROG, getattr(self.opts, 'argv', sys.argv[1:]),
                                                 accel=self.backend.accel))
        with open(os.path.join(self.save_dir, 'summary.json'), 'w') as f:
            json.dump(doc, f, indent=1)


def print_tables(c):
    s = c.summary()
    print('fuzz: backend %s (%s), seed %s, digest %s'
          % (s['backend'], s['label'], s['seed'], s['digest']))
    t = Table([Column('backend', left=True), Column('rings', left=True), Column('time s'),
               Column('steps'), Column('steps/s'), Column('batches'), Column('guests'),
               Column('resets'), Column('failures'), Column('distinct'),
               Column('nested faults')])
    t.row(s['backend'], ','.join(s['rings']), s['seconds'], s['steps'], s['steps_per_s'],
          s['batches'], s['guests'], s['resets'], s['failures'], s['distinct'],
          s['nested_faults'])
    t.print()
    if c.found:
        print()
        t = Table([Column('oracle', left=True), Column('first failing step kind', left=True),
                   Column('count'), Column('reproduced', left=True),
                   Column('reproducer', left=True)])
        for f in c.found.values():
            t.row(f.label(), f.kind, f.count,
                  {True: 'yes', False: 'no', None: '-'}.get(f.reproduced, f.reproduced),
                  f.line(c.backend.targets[0]))
        t.print()
