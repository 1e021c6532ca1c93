#!/bin/sh
# Build the nested host's L1 (host/nested): Debian's kernel and a busybox
# initrd that loads KVM, the kernel's vhost back ends and 9p, mounts this
# machine's /usr and /etc read-only and the repository read-write, and runs
# one command (see init).
#   OUTDIR/bzImage   the kernel of package linux-image-amd64
#   OUTDIR/initrd    busybox-static, the modules below and their
#                    dependencies (in load order), init
# Usage: host/nested-host/build.sh [OUTDIR]   (default build/nested-host)
# Needs: linux-image-amd64 busybox-static cpio gzip kmod (modinfo).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/nested-host}
mkdir -p "$out"
out=$(cd "$out" && pwd)

. "$here/../linux-guest/initrd.sh"
debian_kernel

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

# Each module after the modules it depends on (modinfo -F depends).
order=""
add() {
	case " $order " in *" $1 "*) return ;; esac
	for d in $(modinfo -k "$kver" -F depends "$1" | tr ',' ' '); do
		add "$d"
	done
	order="$order $1"
}
for m in $wanted; do
	add "$m"
done
for m in $order; do
	copy_module "$(modinfo -k "$kver" -n "$m")" "$root/modules/$m.ko"
done
echo $order >"$root/modules/order"

cp "$here/init" "$root/init"
chmod +x "$root/init"
pack_initrd "$root" "$out"
echo "build.sh: $out/bzImage $out/initrd ($kver:$order)"
