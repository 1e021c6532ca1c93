#!/bin/sh
# Build the nested host's L1 (host/nested): Debian's kernel and a busybox
# initrd that loads KVM, the kernel's vhost back ends and 9p, mounts this
# machine's /usr and /etc read-only and the repository read-write, and runs
# one command (see init).
#   OUTDIR/bzImage   the kernel of package linux-image-amd64
#   OUTDIR/initrd    busybox-static, the modules below and their
#                    dependencies (in load order), init
# Usage: host/nested-host/build.sh [--kernel SERIES] [OUTDIR]
#   (default: this machine's kernel, build/nested-host)
# --kernel SERIES (e.g. 6.12) takes the kernel and modules from the image
# package Debian's linux-image-SERIES-amd64 depends on, downloaded and
# unpacked into OUTDIR, not installed (as host/linux-guest/build.sh does).
# Needs: linux-image-amd64 busybox-static cpio gzip kmod (modinfo).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
series=
if [ "${1:-}" = --kernel ]; then
	[ $# -ge 2 ] || { echo "build.sh: --kernel needs a series, e.g. 6.12" >&2; exit 2; }
	series=$2
	shift 2
fi
out=${1:-build/nested-host}
mkdir -p "$out"
out=$(cd "$out" && pwd)

. "$here/../linux-guest/initrd.sh"
if [ -n "$series" ]; then
	debian_kernel_package "$series" "$out"
else
	debian_kernel
fi

# What L1 needs: its own devices (virtio-pci, 9p, the console ports), KVM,
# and the back ends under test. kvm_amd is last: it fails without SVM and
# nothing depends on it.
wanted="virtio_pci virtio_console 9pnet_virtio 9p vhost_vsock vhost_net tun kvm kvm_amd"

root=$out/root
busybox_root "$root" sh mount insmod cat echo mkdir ln ip poweroff sync sleep hostname grep \
	dmesg tail
mkdir -p "$root/modules" "$root/tmp" "$root/usr" "$root/etc" "$root/job" "$root/root"
# Debian is merged-/usr: programs from /usr find their loader and
# libraries through these once /usr is mounted.
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
ln -s usr/sbin "$root/sbin"

# Each module after the modules it depends on (modinfo -F depends of the
# module's file: an unpacked package has no modules.dep to look names up
# in); one the kernel has built in is skipped. A module's name has _ where
# its file may have - (kvm_amd is kvm-amd.ko).
order=""
name_glob() {
	echo "$1" | sed 's/[-_]/[-_]/g'
}
module_file() {
	find "$moddir" -name "$(name_glob "$1").ko*" | head -1
}
add() {
	case " $order " in *" $1 "*) return ;; esac
	grep -q "/$(name_glob "$1")\.ko\$" "$moddir/modules.builtin" && return
	[ -n "$(module_file "$1")" ] || {
		echo "build.sh: module $1 missing in $moddir" >&2
		exit 1
	}
	for d in $(modinfo -F depends "$(module_file "$1")" | tr ',' ' '); do
		add "$d"
	done
	order="$order $1"
}
for m in $wanted; do
	add "$m"
done
for m in $order; do
	copy_module "$(module_file "$m")" "$root/modules/$m.ko"
done
echo $order >"$root/modules/order"

cp "$here/init" "$root/init"
chmod +x "$root/init"
pack_initrd "$root" "$out"
[ -z "$series" ] || rm -rf "$out/pkg"
echo "build.sh: $out/bzImage $out/initrd ($kver:$order)"
