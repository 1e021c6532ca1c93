# SPDX-License-Identifier: MIT
"""docs/config.md from the guest's own declarations.

Every configuration key is declared in C beside the code that owns it
(`CONFIG_KEY(var) = { .name = ..., .help = ..., ... }`, kernel/config.h).
This module reads those declarations from the sources (no build needed),
with the value types' descriptions from the comments of `enum config_type`
in kernel/config.h, and renders one Markdown page. `make docs` writes it;
tests/host/test_docs.py fails when the page in the tree differs from what
the sources say (`ringside config-doc`: the command).
"""

import ast
import glob
import operator
import os
import re

from .images import REPO

DOC = os.path.join(REPO, 'docs', 'config.md')
SOURCE_DIRS = ('kernel', 'drivers', 'net', 'app', 'boot', 'libc')
CONFIG_H = os.path.join('kernel', 'config.h')

KEY_RE = re.compile(r'^CONFIG_KEY\((\w+)\)\s*=\s*\{(.*?)^\};', re.M | re.S)
FIELD_RE = re.compile(r'\.(\w+)\s*=\s*')
STRING_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')
CHOICES_RE = re.compile(r'static\s+const\s+char\s*\*\s*const\s+(\w+)\s*\[[^\]]*\]\s*=\s*'
                        r'\{(.*?)\};', re.S)
DESIGNATED_RE = re.compile(r'\[\s*(\w+)\s*\]\s*=\s*"((?:[^"\\]|\\.)*)"')
ENUM_RE = re.compile(r'\benum\s+\w+\s*\{([^}]*)\}\s*;')
HOOK_RE = re.compile(r'config_on_change\(\s*&(\w+)\s*,')
TYPE_RE = re.compile(r'^\s*(CONFIG_\w+),?\s*/\*\s*(.*?)\s*\*/', re.M)
COMMENT_RE = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
INT_SUFFIX_RE = re.compile(r'\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]+\b')


class DeclarationError(Exception):
    """A CONFIG_KEY this module cannot read: names the file and the key."""


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitOr: operator.or_}


def c_int(text, names=None):
    """The value of a C integer constant expression of literals, the
    enumeration constants in @names, and + - * << >> | (what the
    declarations use: 65536 + 44, 256 << 10, RING_PACKED)."""
    text = INT_SUFFIX_RE.sub(r'\1', text.strip())

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and names and node.id in names:
            return names[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError('not a constant expression: %r' % text)
    return ev(ast.parse(text, mode='eval'))


def c_string(text):
    """Adjacent C string literals joined, with \\" and \\\\ undone."""
    parts = STRING_RE.findall(text)
    if not parts:
        raise ValueError('not a string literal: %r' % text.strip())
    return ''.join(re.sub(r'\\(.)', r'\1', p) for p in parts)


def fields(body):
    """{field: C text of its value} of a designated initialiser."""
    body = COMMENT_RE.sub(' ', body)
    marks = list(FIELD_RE.finditer(body))
    out = {}
    for m, nxt in zip(marks, marks[1:] + [None]):
        value = body[m.end():nxt.start() if nxt else len(body)]
        out[m.group(1)] = value.strip().rstrip(',').strip()
    return out


def enum_constants(text):
    """{NAME: value} of the file's enumerations (C's implicit counting);
    an enumeration this cannot evaluate (macros in its values) is left out
    from there on: a key that names one of those constants fails then."""
    out = {}
    for body in ENUM_RE.findall(COMMENT_RE.sub(' ', text)):
        value = 0
        for item in (i.strip() for i in body.split(',')):
            if not item:
                continue
            name, _, expr = item.partition('=')
            try:
                value = c_int(expr, out) if expr else value
            except (ValueError, SyntaxError):
                break
            out[name.strip()] = value
            value += 1
    return out


def choice_list(body, names):
    """A choices array: plain ("split", "packed") or designated
    ([RING_SPLIT] = "split", ...), as the list `config` indexes."""
    designated = DESIGNATED_RE.findall(body)
    if not designated:
        return STRING_RE.findall(body)
    by_index = {c_int(index, names): value for index, value in designated}
    return [by_index[i] for i in range(len(by_index))]


def source_files(root=REPO):
    files = []
    for d in SOURCE_DIRS:
        files += glob.glob(os.path.join(root, d, '**', '*.c'), recursive=True)
    return sorted(os.path.relpath(f, root) for f in files)


def type_notes(root=REPO):
    """{CONFIG_UINT: 'decimal or 0x hex, within [min, max]', ...} from
    the comments of enum config_type."""
    with open(os.path.join(root, CONFIG_H)) as f:
        text = f.read()
    enum = re.search(r'enum config_type\s*\{(.*?)\};', text, re.S)
    return dict(TYPE_RE.findall(enum.group(1))) if enum else {}


def read_keys(root=REPO):
    """Every declared key as a dict: name, help, type, min, max, default
    (as `config` prints it), choices, file, reprobe (a virtio driver
    watches it: a change resets and re-probes the devices)."""
    keys, watched = [], set()
    for rel in source_files(root):
        with open(os.path.join(root, rel)) as f:
            text = f.read()
        if rel.startswith('drivers/virtio/'):
            watched.update(HOOK_RE.findall(text))
        names = enum_constants(text)
        # read only when a key names them: other string tables look alike
        choices = {name: COMMENT_RE.sub(' ', body) for name, body in CHOICES_RE.findall(text)}
        for var, body in KEY_RE.findall(text):
            try:
                keys.append(dict(parse_key(fields(body), choices, names), var=var,
                                 file=rel))
            except (KeyError, ValueError, IndexError) as e:
                raise DeclarationError('%s: CONFIG_KEY(%s): %s' % (rel, var, e)) from None
    for k in keys:
        k['reprobe'] = k.pop('var') in watched
    names = [k['name'] for k in keys]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DeclarationError('keys declared twice: %s' % ', '.join(dup))
    return sorted(keys, key=lambda k: k['name'])


def key_range(name, root=REPO):
    """(min, max) of one of ringside's configuration keys, from the
    declaration in the sources the guest was built from."""
    key = next(k for k in read_keys(root) if k['name'] == name)
    return key['min'], key['max']


def parse_key(f, choices, names=None):
    kind = f['type']
    key = {'name': c_string(f['name']), 'help': c_string(f['help']), 'type': kind,
           'choices': None}
    lo = c_int(f['min'], names) if 'min' in f else 0
    hi = c_int(f['max'], names) if 'max' in f else 0
    key['min'], key['max'] = lo, hi
    default = c_int(f['def'], names) if 'def' in f else 0
    if kind == 'CONFIG_ENUM':
        key['choices'] = choice_list(choices[f['choices']], names)
        key['values'] = ' \\| '.join('`%s`' % c for c in key['choices'])
        key['default'] = key['choices'][default]
    elif kind == 'CONFIG_BOOL':
        key['values'] = '`0` \\| `1`'
        key['default'] = str(default)
    elif kind == 'CONFIG_IPV4':
        key['values'] = 'a.b.c.d'
        key['default'] = '.'.join(str(default >> s & 255) for s in (24, 16, 8, 0))
    elif kind == 'CONFIG_UINT':
        key['values'] = '%d .. %d' % (lo, hi) if hi < 1 << 20 else '%d .. %#x' % (lo, hi)
        key['default'] = str(default)
    else:
        raise ValueError('unknown type %s' % kind)
    return key


def render(root=REPO):
    keys = read_keys(root)
    notes = type_notes(root)
    out = [
        '# Configuration keys',
        '',
        '<!-- Generated by `make docs` (ringside config-doc) from the CONFIG_KEY',
        '     declarations in the sources; edit the .help strings there, not this file. -->',
        '',
        'Every switch a benchmark compares is a key. Set keys on the kernel',
        'command line (`key=value` words: GRUB\'s line is in `iso/grub.cfg`, the',
        'launcher\'s `--cmdline` sets it for `--boot elf`) or on the console with',
        '`set KEY=VALUE ...` (all checked before any is applied); `get KEY` reads',
        'one and `config` lists them all with their values.',
        '',
        'Keys marked *re-probe* are watched by the virtio transport or a virtio',
        'driver: a change at run time resets and re-probes the virtio devices.',
        '',
        '| key | values | default | meaning | declared in |',
        '|---|---|---|---|---|',
    ]
    for k in keys:
        meaning = k['help'].replace('|', '\\|')
        if k['reprobe']:
            meaning += ' *(re-probe)*'
        out.append('| `%s` | %s | `%s` | %s | `%s` |' % (
            k['name'], k['values'], k['default'], meaning, k['file']))
    out += ['', 'How values are written (`enum config_type` in `kernel/config.h`):', '']
    for kind, label in (('CONFIG_UINT', 'numbers'), ('CONFIG_BOOL', '`0` \\| `1` keys')):
        if kind in notes:
            out.append('- %s: %s' % (label, notes[kind].replace('|', '\\|')))
    return '\n'.join(out) + '\n'
