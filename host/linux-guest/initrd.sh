# Sourced by the scripts that pack a Debian kernel with a busybox initrd
# (host/linux-guest/build.sh, host/nested-host/build.sh): the pieces both do.

# kver: the newest kernel in /lib/modules that /boot has an image of;
# kimage its image, moddir its modules.
debian_kernel() {
	kver=$(ls /lib/modules | sort -V | tail -1)
	[ -n "$kver" ] && [ -f "/boot/vmlinuz-$kver" ] || {
		echo "$0: no Debian kernel: apt-get install linux-image-amd64" >&2
		exit 1
	}
	kimage=/boot/vmlinuz-$kver
	moddir=/lib/modules/$kver
	need_busybox
}

# debian_kernel_package SERIES DIR: kver, kimage and moddir as above, from
# the image package that Debian's meta-package linux-image-SERIES-amd64
# depends on now (apt-cache depends), downloaded into DIR/deb and unpacked
# into DIR/pkg, never installed (no initramfs or boot loader hooks run).
debian_kernel_package() {
	meta=linux-image-$1-amd64
	pkg=$(apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -1)
	[ -n "$pkg" ] || {
		echo "$0: apt knows no $meta (apt-get update?)" >&2
		exit 1
	}
	mkdir -p "$2/deb"
	deb=$(ls "$2/deb/${pkg}_"*.deb 2>/dev/null | head -1) || true
	if [ -z "$deb" ]; then
		rm -f "$2/deb/"*.deb
		# as root apt would warn that its _apt user cannot write here
		(cd "$2/deb" && apt-get -q download -o APT::Sandbox::User=root "$pkg") || {
			echo "$0: apt-get download $pkg failed" >&2
			exit 1
		}
		deb=$(ls "$2/deb/${pkg}_"*.deb | head -1)
	fi
	rm -rf "$2/pkg"
	dpkg-deb -x "$deb" "$2/pkg"
	kver=${pkg#linux-image-}
	kimage=$2/pkg/boot/vmlinuz-$kver
	moddir=$2/pkg/lib/modules/$kver
	[ -f "$kimage" ] && [ -d "$moddir" ] || {
		echo "$0: $deb has no vmlinuz-$kver or modules" >&2
		exit 1
	}
	need_busybox
}

need_busybox() {
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
	cp "$kimage" "$2/bzImage"
	rm -rf "$1"
}
