# Sourced by the scripts that pack a Debian kernel with a busybox initrd
# (host/linux-guest/build.sh, host/nested-host/build.sh): the pieces both do.

# kver: the newest kernel in /lib/modules that /boot has an image of.
debian_kernel() {
	kver=$(ls /lib/modules | sort -V | tail -1)
	[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] || {
		echo "$0: no Debian kernel: apt-get install linux-image-amd64" >&2
		exit 1
	}
	[ -x /bin/busybox ] || {
		echo "$0: no /bin/busybox: apt-get install busybox-static" >&2
		exit 1
	}
}

# busybox_root ROOT APPLET...: a fresh ROOT with /bin/busybox and its applets.
busybox_root() {
	root=$1
	shift
	rm -rf "$root"
	mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev"
	cp /bin/busybox "$root/bin/busybox"
	for a in "$@"; do
		ln -sf busybox "$root/bin/$a"
	done
}

# copy_module FILE DEST: a module as insmod takes it, uncompressed.
copy_module() {
	case "$1" in
	*.ko.xz) xz -dc "$1" >"$2" ;;
	*.ko.zst) zstd -qdc "$1" >"$2" ;;
	*.ko.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# pack_initrd ROOT OUT: OUT/initrd from ROOT, OUT/bzImage beside it; ROOT goes.
pack_initrd() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2/initrd"
	cp "/boot/vmlinuz-$kver" "$2/bzImage"
	rm -rf "$1"
}
