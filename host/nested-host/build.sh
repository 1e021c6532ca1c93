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

kver=$(ls /lib/modules | sort -V | tail -1)
[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] || {
	echo "build.sh: no Debian kernel: apt-get install linux-image-amd64" >&2
	exit 1
}
[ -x /bin/busybox ] || {
	echo "build.sh: no /bin/busybox: apt-get install busybox-static" >&2
	exit 1
}

# What L1 needs: its own devices (virtio-pci, 9p, the console ports), KVM,
# and the back ends under test. kvm_amd is last: it fails without SVM and
# nothing depends on it.
wanted="virtio_pci virtio_console 9pnet_virtio 9p vhost_vsock vhost_net tun kvm kvm_amd"

root=$out/root
rm -rf "$root"
mkdir -p "$root/bin" "$root/modules" "$root/proc" "$root/sys" "$root/dev" \
	"$root/tmp" "$root/usr" "$root/etc" "$root/job" "$root/root"
cp /bin/busybox "$root/bin/busybox"
for a in sh mount insmod cat echo mkdir ln ip poweroff sync sleep hostname grep dmesg tail; do
	ln -sf busybox "$root/bin/$a"
done
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
	f=$(modinfo -k "$kver" -n "$m")
	case "$f" in
	*.ko.xz) xz -dc "$f" >"$root/modules/$m.ko" ;;
	*.ko.zst) zstd -qdc "$f" >"$root/modules/$m.ko" ;;
	*.ko.gz) gzip -dc "$f" >"$root/modules/$m.ko" ;;
	*) cp "$f" "$root/modules/$m.ko" ;;
	esac
done
echo $order >"$root/modules/order"

cp "$here/init" "$root/init"
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd"
cp "/boot/vmlinuz-$kver" "$out/bzImage"
rm -rf "$root"
echo "build.sh: $out/bzImage $out/initrd ($kver:$order)"
