# SPDX-License-Identifier: MIT
"""docs/config.md is what the configuration keys' declarations say: make
docs regenerates it, and this fails until it has been after a key's help
string, default, range or choices changed."""

import os
import shutil
import subprocess
import sys

from conftest import REPO
from ringside import config_doc

KEY = 'loglevel'


def test_config_md_is_current():
    with open(config_doc.DOC) as f:
        current = f.read()
    assert current == config_doc.render(), \
        'docs/config.md is stale: run make docs (host/config-doc -o docs/config.md)'


def test_every_key_documented_once():
    keys = config_doc.read_keys()
    names = [k['name'] for k in keys]
    assert len(names) == len(set(names)) >= 20
    page = config_doc.render()
    for k in keys:
        assert page.count('| `%s` |' % k['name']) == 1, k['name']
        assert k['help'] and k['default'] != ''


def test_a_changed_help_string_is_seen(tmp_path):
    """A copy of the sources with one help string edited renders another page."""
    for d in config_doc.SOURCE_DIRS:
        if os.path.isdir(os.path.join(REPO, d)):
            shutil.copytree(os.path.join(REPO, d), tmp_path / d)
    before = config_doc.render(str(tmp_path))
    src = next(k['file'] for k in config_doc.read_keys(str(tmp_path)) if k['name'] == KEY)
    path = tmp_path / src
    text = path.read_text()
    start = text.index('.name = "%s"' % KEY)
    help_at = text.index('.help = "', start) + len('.help = "')
    path.write_text(text[:help_at] + 'EDITED ' + text[help_at:])
    after = config_doc.render(str(tmp_path))
    assert after != before and 'EDITED' in after


def test_check_option_exit_status():
    out = subprocess.run([sys.executable, os.path.join(REPO, 'host', 'config-doc'), '--check'],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_constant_expressions():
    assert config_doc.c_int('65536 + 44') == 65580
    assert config_doc.c_int('256 << 10') == 262144
    assert config_doc.c_int('0xffffffff') == 0xffffffff
    assert config_doc.c_int('10ULL') == 10
    assert config_doc.c_string('"a \\"b\\" " \n\t\t"c"') == 'a "b" c'


def test_enum_choices_with_designated_initialisers():
    """Choices as the guest declares them: an enum, the names by index, the
    default an enumeration constant."""
    text = ('enum ring_choice { RING_SPLIT, RING_PACKED, RING_CHOICES };\n'
            'enum other { A = -1, B, C = 1 << 4, D };\n')
    names = config_doc.enum_constants(text)
    assert names == {'RING_SPLIT': 0, 'RING_PACKED': 1, 'RING_CHOICES': 2,
                     'A': -1, 'B': 0, 'C': 16, 'D': 17}
    body = '[RING_PACKED] = "packed", [RING_SPLIT] = "split",'
    assert config_doc.choice_list(body, names) == ['split', 'packed']
    assert config_doc.choice_list('"poll", "halt", NULL', names) == ['poll', 'halt']
    key = config_doc.parse_key({'name': '"ring"', 'help': '"h"', 'type': 'CONFIG_ENUM',
                                'choices': 'ring_choices', 'def': 'RING_PACKED'},
                               {'ring_choices': body}, names)
    assert key['default'] == 'packed' and key['values'] == '`split` \\| `packed`'
