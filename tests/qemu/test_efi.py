# SPDX-License-Identifier: MIT
"""Direct UEFI boot: build/ringside.efi (GNU-EFI) started by OVMF from the
ESP image build/ringside-esp.img, by GRUB's chainloader from the ISO, and by
the UEFI shell with arguments. Everything that works after a GRUB boot has
to work after a direct boot: the shell, PCI and virtio (virtio-rng), vsock
through the vhost-user back end, poweroff.
"""

import hashlib
import os
import re
import shutil
import struct
import subprocess

import pytest

from ringside import guest_stats
from conftest import ESP, ISO, require_image
from vsockhost import hybrid_connect
from ringside_qemu import COMMAND_TIMEOUT, REPO, Guest, info_fields

EFI = os.path.join(REPO, 'build', 'ringside.efi')
ISO_TREE = os.path.join(REPO, 'build', 'iso')
ECHO = 1234
IO_TIMEOUT = 120


def mtools(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def loader_map(mem_out):
    """`mem`'s loader memory map as [(start, end, type)]."""
    return [(int(a, 16), int(b, 16), t) for a, b, t in
            re.findall(r'(?m)^\s+([0-9a-f]{16})-([0-9a-f]{16}) (\S+)$',
                       mem_out.split('usable RAM:')[0])]


# ----------------------------------------------------------------- images

def test_efi_image_is_pe32plus_efi_application():
    require_image(EFI)
    with open(EFI, 'rb') as f:
        data = f.read(4096)
    assert data[:2] == b'MZ'
    pe = struct.unpack_from('<I', data, 0x3c)[0]
    assert data[pe:pe + 4] == b'PE\0\0'
    machine = struct.unpack_from('<H', data, pe + 4)[0]
    magic, = struct.unpack_from('<H', data, pe + 24)
    subsystem, = struct.unpack_from('<H', data, pe + 24 + 68)
    assert machine == 0x8664, hex(machine)
    assert magic == 0x20b, 'not PE32+: %#x' % magic
    assert subsystem == 10, 'not an EFI application: subsystem %d' % subsystem


def test_esp_image_layout():
    require_image(ESP)
    listing = mtools('mdir', '-i', ESP, '-b', '-/', '::/')
    assert '::/EFI/BOOT/BOOTX64.EFI' in listing, listing
    got = subprocess.run(['mtype', '-i', ESP, '::/EFI/BOOT/BOOTX64.EFI'], check=True,
                         capture_output=True).stdout
    with open(EFI, 'rb') as f:
        assert got == f.read(), 'BOOTX64.EFI is not build/ringside.efi'


def test_iso_carries_the_efi_image():
    require_image(ISO)
    r = subprocess.run(['xorriso', '-indev', ISO, '-find', '/EFI/ringside', '-name',
                        'ringside.efi'], capture_output=True, text=True)
    assert '/EFI/ringside/ringside.efi' in r.stdout, r.stdout + r.stderr


# ------------------------------------------------- the direct boot, in full

@pytest.fixture(scope='module')
def esp_guest():
    require_image(ESP)
    g = Guest('--firmware', 'uefi-direct', '--vsock', '--qemu-arg=-device',
              '--qemu-arg=virtio-rng-pci', name='efi-direct-q35')
    g.start()
    yield g
    g.stop()


# Order matters: these share one guest and test_direct_poweroff is last.

def test_direct_ready_and_help(esp_guest):
    assert re.search(r'(?m)^ringside: ready\r?$', esp_guest.output)
    assert 'ringside: booted via uefi-direct' in esp_guest.output
    out = esp_guest.command('help')
    for cmd in ('help', 'info', 'set', 'get', 'lspci', 'rng', 'vsock', 'stats', 'poweroff'):
        assert re.search(r'(?m)^\s*%s\b' % cmd, out), 'help lacks %s:\n%s' % (cmd, out)


def test_direct_info(esp_guest):
    out = esp_guest.command('info')
    fields = info_fields(out)
    assert fields.get('boot') == 'uefi-direct', out
    # the boot manager's LoadOptions (OVMF: a GUID) are no command line
    assert fields.get('cmdline', None) == '', out
    assert re.search(r'(?m)^acpi: \S+ +rev \d+, [1-9]\d* tables', out), \
        'RSDP not handed over:\n' + out


def test_direct_memory_map(esp_guest):
    out = esp_guest.command('mem')
    ranges = loader_map(out)
    assert ranges, out
    assert any(t == 'usable' and e - s >= 256 << 20 for s, e, t in ranges), out
    assert any(t.startswith('acpi') for s, e, t in ranges), out
    for (s0, e0, t0), (s1, e1, t1) in zip(ranges, ranges[1:]):
        assert e0 <= s1, 'overlap or not sorted: %x-%x, %x-%x' % (s0, e0, s1, e1)
        assert not (e0 == s1 and t0 == t1), 'adjacent %s ranges not merged at %x' % (t0, s1)
    # the kernel image (1 MiB...) lies in what the map calls usable
    assert any(s <= 0x100000 < e and t == 'usable' for s, e, t in ranges), out


def test_direct_set_get(esp_guest):
    assert esp_guest.command('get loglevel') == 'loglevel=4'
    assert esp_guest.command('set loglevel=6') == 'loglevel=6'
    assert esp_guest.command('get loglevel') == 'loglevel=6'
    assert esp_guest.command('set loglevel=9').startswith('error: ')


def test_direct_lspci_and_rng(esp_guest):
    out = esp_guest.command('lspci')
    assert 'config access ecam' in out, out
    assert re.search(r'1af4:(1005|1044) class', out), 'no virtio-rng:\n' + out
    assert re.search(r'1af4:1053 class', out), 'no virtio-vsock:\n' + out
    out = esp_guest.command('rng 4096')
    m = re.search(r'rng: 4096 bytes, (\d+) one bits', out)
    assert m, out
    assert 4096 * 8 * 0.4 < int(m.group(1)) < 4096 * 8 * 0.6, out


def test_direct_vsock(esp_guest):
    out = esp_guest.command('vsock')
    assert 'local cid 3' in out, out
    for port in (1234, 1235, 1236):
        assert re.search(r'stream listen\s+%d' % port, out), out
    assert guest_stats(esp_guest, COMMAND_TIMEOUT, 'virtio-vsock')['virtio-vsock']['guest_cid'] == 3
    data = hashlib.sha256(b'uefi-direct').digest() * 2048  # 64 KiB
    with hybrid_connect(esp_guest.vsock_uds, ECHO) as s:
        s.settimeout(IO_TIMEOUT)
        s.sendall(data)
        got = b''
        while len(got) < len(data):
            chunk = s.recv(65536)
            assert chunk, 'echo closed after %d bytes' % len(got)
            got += chunk
    assert got == data


def test_direct_poweroff(esp_guest):
    assert esp_guest.poweroff() == 0


# ---------------------------------------------------------- other starters

def test_direct_pc_machine(guest_factory):
    """i440fx: no ECAM, the kernel falls back to port I/O."""
    require_image(ESP)
    g = guest_factory('--firmware', 'uefi-direct', '--machine', 'pc', name='efi-direct-pc')
    assert info_fields(g.command('info')).get('boot') == 'uefi-direct'
    assert 'config access port-io' in g.command('lspci')
    assert g.poweroff() == 0


def test_direct_ram_above_4g(guest_factory):
    """RAM above 4 GiB comes from the EFI map too and the kernel maps it."""
    require_image(ESP)
    g = guest_factory('--firmware', 'uefi-direct', '--memory', '5G', name='efi-direct-5g')
    out = g.command('mem')
    assert any(t == 'usable' and e > 1 << 32 for s, e, t in loader_map(out)), out
    m = re.search(r'(?m)^memory: (\d+) MiB usable', g.command('info'))
    assert m and int(m.group(1)) > 4600, m and m.group(0)
    assert g.poweroff() == 0


def test_grub_chainload_entry(guest_factory, tmp_path):
    """The ISO's second GRUB entry chainloads ringside.efi with arguments.
    Same ISO tree, only the default entry switched."""
    require_image(ISO)
    if not os.path.isdir(ISO_TREE):
        pytest.fail('build/iso missing: run make', pytrace=False)
    tree = tmp_path / 'iso'
    shutil.copytree(ISO_TREE, tree)
    cfg = tree / 'boot' / 'grub' / 'grub.cfg'
    text = cfg.read_text()
    assert 'chainloader /EFI/ringside/ringside.efi' in text
    assert re.search(r'(?m)^set default=0$', text), 'the multiboot2 entry must stay the default'
    cfg.write_text(re.sub(r'(?m)^set default=0$', 'set default=1', text))
    iso = str(tmp_path / 'chainload.iso')
    r = subprocess.run(['grub-mkrescue', '--compress=xz', '-o', iso, str(tree)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    g = guest_factory('--firmware', 'uefi', '--iso', iso, name='efi-grub-chainload')
    fields = info_fields(g.command('info'))
    assert fields.get('boot') == 'uefi-direct', fields
    assert 'loglevel=4' in fields.get('cmdline', ''), fields
    assert g.poweroff() == 0


def test_uefi_shell_passes_arguments(guest_factory, tmp_path):
    """From the UEFI shell LoadOptions hold the program path, then the
    arguments: the path is not part of the kernel command line."""
    require_image(EFI)
    img = str(tmp_path / 'shell-esp.img')
    with open(img, 'wb') as f:
        f.truncate(16 << 20)
    script = tmp_path / 'startup.nsh'
    script.write_bytes(b'fs0:\r\n\\EFI\\ringside\\ringside.efi  loglevel=6 \r\n')
    mtools('mformat', '-i', img, '::')
    mtools('mmd', '-i', img, '::/EFI', '::/EFI/ringside')
    mtools('mcopy', '-i', img, EFI, '::/EFI/ringside/ringside.efi')
    mtools('mcopy', '-i', img, str(script), '::/startup.nsh')
    g = guest_factory('--firmware', 'uefi-direct', '--esp', img, name='efi-shell')
    fields = info_fields(g.command('info'))
    assert fields.get('boot') == 'uefi-direct', fields
    assert fields.get('cmdline') == 'loglevel=6', fields
    assert g.command('get loglevel', COMMAND_TIMEOUT) == 'loglevel=6'
    assert g.poweroff() == 0


def test_stale_map_key_is_retried(guest_factory, tmp_path):
    """A test build of the loader changes the memory map between
    GetMemoryMap and the first ExitBootServices: the loader has to take the
    map again and exit on the second call."""
    require_image(EFI)
    r = subprocess.run(['make', '-s', '-C', REPO, 'build/efi-stale-key.efi'],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    img = str(tmp_path / 'stale-key-esp.img')
    with open(img, 'wb') as f:
        f.truncate(16 << 20)
    mtools('mformat', '-i', img, '::')
    mtools('mmd', '-i', img, '::/EFI', '::/EFI/BOOT')
    mtools('mcopy', '-i', img, os.path.join(REPO, 'build', 'efi-stale-key.efi'),
           '::/EFI/BOOT/BOOTX64.EFI')
    g = guest_factory('--firmware', 'uefi-direct', '--esp', img, name='efi-stale-key')
    assert 'ringside.efi: ExitBootServices calls: 2' in g.output, g.output[-2000:]
    assert info_fields(g.command('info')).get('boot') == 'uefi-direct'
    assert g.poweroff() == 0
