#!/bin/sh
# Build a Linux guest for the vsock and virtio-net tests from Debian's kernel:
#   build/linux-guest/bzImage   the kernel of package linux-image-amd64
#   build/linux-guest/initrd    busybox-static + virtio/vsock/virtio_net/pktgen
#                               modules + ringside-guest-server (echo 1234,
#                               sink 1235, source 1236; "connect PORT BYTES",
#                               "pktgen DSTIP DSTMAC COUNT SIZE BURST" on the
#                               console)
#   build/linux-guest-6.12/...  the same from linux-image-6.12-amd64
#                               (make linux-guest-6.12, --kernel 6.12)
# Usage: host/linux-guest/build.sh [--kernel SERIES] [--vsock-test FILE] [OUTDIR]
#   (default: this machine's kernel, build/linux-guest)
# --kernel SERIES (e.g. 6.12) takes the kernel and modules from the image
# package that Debian's linux-image-SERIES-amd64 depends on, downloaded and
# unpacked into OUTDIR (apt-get download, dpkg-deb -x), not installed.
# --vsock-test FILE puts the kernel's vsock_test (make vsock-test, static)
# in /bin for the `vsocktest` command.
# Needs: linux-image-amd64 busybox-static cpio gzip xz-utils kmod (modinfo)
# gcc (libc static).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
series=
vsock_test=
while [ $# -ge 2 ]; do
	case "$1" in
	--kernel) series=$2 ;;
	--vsock-test) vsock_test=$2 ;;
	*) break ;;
	esac
	shift 2
done
case "${1:-}" in
--*) echo "build.sh: $1 needs a value" >&2; exit 2 ;;
esac
out=${1:-build/linux-guest}
mkdir -p "$out"
out=$(cd "$out" && pwd)

. "$here/initrd.sh"
if [ -n "$series" ]; then
	debian_kernel_package "$series" "$out"
else
	debian_kernel
fi

root=$out/root
busybox_root "$root" sh mount insmod cat echo sleep poweroff mkdir
mkdir -p "$root/lib/modules"

# What the guest needs, each after what it depends on. A module the kernel
# has built in (6.12 builds the virtio core and virtio_pci in) is skipped;
# a dependency this list lacks is added before its user (modinfo -F depends
# of the module file: an unpacked package has no modules.dep to look up).
wanted="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport
failover net_failover virtio_net pktgen"
mods=""
add() {
	case " $mods " in *" $1 "*) return ;; esac
	grep -q "/$1\.ko\$" "$moddir/modules.builtin" && return
	[ -n "$(module_file "$1")" ] || {
		echo "build.sh: module $1 missing in $moddir" >&2
		exit 1
	}
	for d in $(modinfo -F depends "$(module_file "$1")" | tr ',' ' '); do
		add "$d"
	done
	mods="$mods $1"
}
module_file() {
	find "$moddir" -name "$1.ko*" | head -1
}
for m in $wanted; do
	add "$m"
done
for m in $mods; do
	copy_module "$(module_file "$m")" "$root/lib/modules/$m.ko"
done

gcc -static -O2 -Wall -Wextra -Werror -o "$root/bin/ringside-guest-server" \
	"$here/guest-server.c" "$here/vsock_test_bridge.c"
if [ -n "$vsock_test" ]; then
	cp "$vsock_test" "$root/bin/vsock_test"
fi

cat >"$root/init" <<INIT
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# no IPv6 on new interfaces: eth0 must send only what pktgen sends
echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
for m in $(echo $mods); do
	insmod /lib/modules/\$m.ko || echo "ringside-linux-guest: insmod \$m failed"
done
exec /bin/ringside-guest-server </dev/console >/dev/console 2>&1
INIT
chmod +x "$root/init"

pack_initrd "$root" "$out"
[ -z "$series" ] || rm -rf "$out/pkg"
echo "build.sh: $out/bzImage $out/initrd ($kver:$mods)"
