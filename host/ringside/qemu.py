# SPDX-License-Identifier: MIT
"""QEMU's command line for a set of launcher options."""

import os

from .images import OVMF

DEBUG_EXIT = 'isa-debug-exit,iobase=0x501,iosize=2'


# --------------------------------------------------------- QEMU command line

def qemu_opt(value):
    """Escape a value for a QEMU key=value option list (',' doubles)."""
    return str(value).replace(',', ',,')


def size_bytes(size):
    """QEMU's -m size ('512M', '3G', or bytes) in bytes."""
    scale = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30, 'T': 1 << 40}
    if size[-1] in scale:
        return int(size[:-1]) * scale[size[-1]]
    return int(size)


def vsock_kernel(opts, accel):
    """True when the guest's vsock device is the host kernel's vhost-vsock:
    asked for, or (auto) KVM runs the guest and /dev/vhost-vsock exists.
    Host programs then use AF_VSOCK to the guest's CID instead of the
    hybrid Unix socket."""
    if not opts.vsock or opts.vsock_transport == 'vhost-user':
        return False
    return opts.vsock_transport == 'kernel' or (
            accel == 'kvm' and os.path.exists('/dev/vhost-vsock'))


# The kernel's vsock device and the types a -global for it may name.
KERNEL_VSOCK_TYPES = ('vhost-vsock-pci', 'vhost-vsock-pci-non-transitional',
                      'vhost-vsock-device', 'virtio-pci', 'virtio-device')
_TRUE = ('on', 'yes', 'true', 'y')


def _global_setting(value):
    """A -global value as (driver, property, value): both of QEMU's forms,
    DRIVER.PROP=VALUE and driver=D,property=P,value=V."""
    if value.startswith('driver='):
        kv = dict(part.partition('=')[::2] for part in value.split(','))
        return kv.get('driver', ''), kv.get('property', ''), kv.get('value', '')
    name, _, val = value.partition('=')
    driver, _, prop = name.rpartition('.')
    return driver, prop, val


def packed_requested(qemu_args, types=KERNEL_VSOCK_TYPES):
    """True if the extra QEMU arguments ask a device of one of `types` for
    packed=on: `-global TYPE.packed=on` (how the scripts ask today) or a
    `-device TYPE,...,packed=on` of their own."""
    args = list(qemu_args)
    for opt, value in zip(args, args[1:]):
        if opt in ('-global', '--global'):
            driver, prop, val = _global_setting(value)
            if driver in types and prop == 'packed' and val.lower() in _TRUE:
                return True
        elif opt in ('-device', '--device'):
            parts = value.split(',')
            if parts[0] in types and any(p.lower() in ['packed=' + t for t in _TRUE]
                                         for p in parts[1:]):
                return True
    return False


def qemu_argv(opts, accel, serial_path=None):
    """QEMU's argv for `opts` under accelerator `accel` ('kvm' or 'tcg').

    The serial line goes to QEMU's stdio unless `serial_path` (a Unix socket
    QEMU listens on, and waits for one client before starting the guest).
    """
    machine = opts.machine
    argv = [opts.qemu, '-accel', accel]
    if opts.vsock and not vsock_kernel(opts, accel):
        # vhost-user back ends map guest RAM: it has to be shared memory.
        argv += ['-object', 'memory-backend-memfd,id=mem,size=%d,share=on'
                 % size_bytes(opts.memory)]
        machine += ',memory-backend=mem'
    argv += ['-machine', machine, '-m', opts.memory]
    argv += ['-display', 'none', '-monitor', 'none']
    if not any(a in ('-nic', '-net') for a in opts.qemu_arg):
        argv += ['-nic', 'none']
    if serial_path:
        argv += ['-chardev', 'socket,id=s0,path=%s,server=on,wait=on' % qemu_opt(serial_path)]
    else:
        argv += ['-chardev', 'stdio,id=s0,signal=off']
    argv += ['-serial', 'chardev:s0']
    argv += ['-device', DEBUG_EXIT]
    if opts.no_reboot:
        argv += ['-no-reboot']

    if opts.firmware in ('uefi', 'uefi-direct'):
        argv += ['-bios', OVMF]
    if opts.boot == 'iso':
        argv += ['-cdrom', opts.image]
    elif opts.boot == 'elf':
        argv += ['-kernel', opts.image]
        if opts.cmdline:
            argv += ['-append', opts.cmdline]
    else:
        argv += ['-drive', 'format=raw,file=%s' % qemu_opt(opts.image)]

    if vsock_kernel(opts, accel):
        argv += ['-device', 'vhost-vsock-pci,guest-cid=%d' % opts.vsock_cid]
    elif opts.vsock:
        argv += ['-chardev', 'socket,id=vsock0,path=%s' % qemu_opt(opts.vsock_socket),
                 '-device', 'vhost-user-vsock-pci,chardev=vsock0']
    return argv + list(opts.qemu_arg)
