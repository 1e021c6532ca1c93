#!/bin/sh
# Build a Linux guest for the vsock and virtio-net tests from Debian's kernel:
#   build/linux-guest/bzImage   the kernel of package linux-image-amd64
#   build/linux-guest/initrd    busybox-static + virtio/vsock/virtio_net/pktgen
#                               modules + ringside-guest-server (echo 1234,
#                               sink 1235, source 1236; "connect PORT BYTES",
#                               "pktgen DSTIP DSTMAC COUNT SIZE BURST" on the
#                               console)
# Usage: host/linux-guest/build.sh [OUTDIR]   (default build/linux-guest)
# Needs: linux-image-amd64 busybox-static cpio gzip gcc (libc static).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-build/linux-guest}
mkdir -p "$out"
out=$(cd "$out" && pwd)

. "$here/initrd.sh"
debian_kernel

root=$out/root
busybox_root "$root" sh mount insmod cat echo sleep poweroff mkdir
mkdir -p "$root/lib/modules"

# load order follows the modules' dependencies (modinfo -F depends)
mods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport
failover net_failover virtio_net pktgen"
for m in $mods; do
	f=$(find "/lib/modules/$kver" -name "$m.ko*" | head -1)
	[ -n "$f" ] || { echo "build.sh: module $m missing" >&2; exit 1; }
	copy_module "$f" "$root/lib/modules/$m.ko"
done

gcc -static -O2 -Wall -Wextra -Werror -o "$root/bin/ringside-guest-server" \
	"$here/guest-server.c"

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
echo "build.sh: $out/bzImage $out/initrd ($kver)"
