#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh - run one command inside a throwaway QEMU (TCG) guest.
#
# The host cannot load kernel modules, so every kernel test runs in a guest.
#
# Usage:
#   scripts/vm.sh [--kernel VER|BZIMAGE] [--moddir DIR] [--timeout SECS]
#                 [--out DIR] [--mem MB] [--smp N] [--append ARGS]
#                 [--fail-on-splat] [--share DIR] [--sync DIR]
#                 [--link listen|connect:PATH|PORT:MAC]... [--monitor PATH]
#                 -- COMMAND [ARGS...]
#
#   --kernel VER      boot /boot/vmlinuz-VER (default: newest 6.1 installed);
#                     or a path to a bzImage or an ELF vmlinux (the version
#                     is read from the image).
#   --moddir DIR      module tree for the kernel is DIR/lib/modules/VER
#                     (e.g. INSTALL_MOD_PATH of a custom build); default /.
#                     In the guest it is bind-mounted on /lib/modules/VER.
#   --timeout SECS    kill the guest after SECS (default 900) -> exit 124.
#   --out DIR         results dir (default: new dir under
#                     ${SRNIC_OUT:-/var/tmp/srnic-out}).  Shared read-write
#                     with the guest at the SAME absolute path.
#   --mem MB/--smp N  guest size (default 3072 MB, 2 vCPUs).
#   --append ARGS     extra kernel command line.
#   --fail-on-splat   exit 126 if the guest kernel log has a BUG/WARNING/
#                     Oops/KASAN/lockdep/... report, even if COMMAND passed
#                     (the expression: selftests/kernel_log.sh).
#   --share DIR       show the host's DIR at the same path in the guest
#                     (read-only, under a tmpfs overlay like the root).
#                     Automatic for the checkout the command runs in when
#                     the host root does not show it (under /tmp or /run).
#   --sync DIR        share DIR read-write at the same path (no caching)
#                     and export SRNIC_SYNC=DIR: a rendezvous folder for
#                     two guests (scripts/vm-pair.sh).
#   --link listen:PATH:MAC, --link connect:PATH:MAC
#                     a virtio-net NIC with address MAC whose frames go
#                     over a Unix stream socket at PATH (an absolute path;
#                     QEMU's stream netdev) to a second guest's NIC: one
#                     guest listens, the other connects (start it once
#                     PATH exists). A lossless link, as a RoCE fabric with
#                     flow control is (QEMU's UDP mode drops frames in
#                     bursts when the receiving guest falls behind), and
#                     one without Nagle's algorithm: over TCP each frame
#                     sent behind an unacknowledged one waits for the
#                     peer's delayed ACK (ib_write_lat between two guests:
#                     22 ms typical over TCP, 0.42 ms over a Unix socket).
#   --link listen:PORT:MAC, --link connect:PORT:MAC
#                     the same over TCP on 127.0.0.1:PORT (QEMU's socket
#                     netdev), for a peer that is not on this host's
#                     filesystem. netem in a guest adds loss where a test
#                     wants it. Repeat --link for several links. The guest
#                     loads virtio_net itself (modprobe virtio_net).
#   --monitor PATH    QEMU's human monitor on a Unix socket at PATH (at most
#                     107 bytes), for looking at the devices from the host
#                     while the guest runs (vm-pair.sh: the links' virtio
#                     queues when a step fails).
#
# Guest view: the host's / read-only (9p) under a tmpfs-backed overlay, so
# the guest may write anywhere and every write vanishes at poweroff; fresh
# /proc /sys /dev /tmp /run.  The host's /tmp is NOT visible (the guest's
# /tmp is its own tmpfs): write results to "$SRNIC_OUT" (the out dir).
# COMMAND runs as root in the host's current directory with a clean
# environment: PATH HOME=/root TERM=dumb LANG=C.UTF-8 SRNIC_OUT SRNIC_KVER
# SRNIC_GUEST=1, plus every SRNIC_* variable exported on the host.
# Its stdin is /dev/null.
#
# Caveats: the host root is mounted with 9p cache=loose, so host files
# changed during a run may look stale in the guest (change them before the
# run).  Files the guest writes to the out dir belong to the qemu user
# (root).  The kernel runs with "quiet loglevel=5 mitigations=off
# tsc=reliable" (--append can override: the last setting wins).
#
# Results in the out dir: output.log (COMMAND's stdout+stderr), exit-status,
# dmesg.log (guest kernel log after COMMAND), console.log (whole serial
# console), guest-cmd.sh (what the guest ran).
#
# Exit status: COMMAND's; 124 timeout; 125 the guest never reported a status
# (kernel panic, broken boot, bad cwd...); 126 splat with --fail-on-splat;
# 130 interrupted (SIGINT/TERM/HUP: the guest is stopped too); 2 usage error.
#
# The initramfs (busybox + virtio/9p/overlay modules of that kernel) and the
# uncompressed vmlinux cut out of a bzImage (booted through its PVH entry:
# no decompression under TCG, but no KASLR either; SRNIC_VM_PVH=0 boots the
# bzImage) are cached in ${SRNIC_CACHE:-/var/cache/srnic}; only the first
# boot of a kernel builds them.
#
# Examples:
#   scripts/vm.sh -- uname -r
#   scripts/vm.sh --kernel 6.12.117+deb12-amd64 -- selftests/vm_smoke.sh
#   scripts/vm.sh --kernel ../linux/arch/x86/boot/bzImage \
#                 --moddir /var/tmp/kmods -- sh -c 'modprobe srnic'
set -eu

me=vm.sh
die() { echo "$me: error: $*" >&2; exit 2; }
msg() { echo "$me: $*" >&2; }

usage() {
	sed -n '/^# Usage:/,/^# Guest view:/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

kernel='' moddir='' timeout_s=900 out='' mem=3072 smp=2 append='' fail_on_splat=0
share='' sync='' links=() monitor=''
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || usage; kernel=$2; shift 2 ;;
	--moddir) [ $# -ge 2 ] || usage; moddir=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
	--mem) [ $# -ge 2 ] || usage; mem=$2; shift 2 ;;
	--smp) [ $# -ge 2 ] || usage; smp=$2; shift 2 ;;
	--append) [ $# -ge 2 ] || usage; append="$append $2"; shift 2 ;;
	--fail-on-splat) fail_on_splat=1; shift ;;
	--share) [ $# -ge 2 ] || usage; share=$2; shift 2 ;;
	--sync) [ $# -ge 2 ] || usage; sync=$2; shift 2 ;;
	--link) [ $# -ge 2 ] || usage; links+=("$2"); shift 2 ;;
	--monitor) [ $# -ge 2 ] || usage; monitor=$2; shift 2 ;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) die "unknown option '$1' (the command goes after --)" ;;
	esac
done
[ $# -gt 0 ] || usage
case $timeout_s$mem$smp in *[!0-9]*) die "--timeout/--mem/--smp need integers" ;; esac

for t in qemu-system-x86_64 cpio gzip modprobe timeout sha256sum; do
	command -v "$t" >/dev/null || die "'$t' not found (run scripts/deps.sh)"
done
busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"

# --- kernel image and version ------------------------------------------------

# The version string of a bzImage (or ELF vmlinux): the setup header ("HdrS" at 0x202) holds at
# 0x20e a pointer (minus 0x200) to "VERSION (builder) #1 ...".
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = 177ELF ]; }
kver_of_image() {
	local off
	if is_elf "$1"; then	# a vmlinux: take its banner
		grep -aom1 'Linux version [^ ]*' "$1" | cut -d' ' -f3
		return
	fi
	[ "$(dd if="$1" bs=1 skip=514 count=4 2>/dev/null)" = HdrS ] || return 1
	off=$(od -An -tu2 -j 526 -N 2 "$1" | tr -d ' ')
	dd if="$1" bs=1 skip=$((off + 512)) count=256 2>/dev/null |
		tr '\0' '\n' | head -n1 | cut -d' ' -f1
}

if [ -z "$kernel" ]; then
	kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-6.1.*' -printf '%f\n' |
		 sed 's/^vmlinuz-//' | sort -V | tail -n1)
	[ -n "$kernel" ] || die "no /boot/vmlinuz-6.1.* installed (run scripts/deps.sh)"
fi
case $kernel in
*/*) image=$(realpath "$kernel"); [ -f "$image" ] || die "no such kernel image: $kernel"
     kver=$(kver_of_image "$image" || true)
     [ -n "$kver" ] || die "$image: neither a bzImage nor a vmlinux" ;;
*)   image=/boot/vmlinuz-$kernel; kver=$kernel
     [ -f "$image" ] || die "$image not found; installed: $(cd /boot && echo vmlinuz-*)" ;;
esac
[ -r "$image" ] || die "$image not readable"

modroot=/
if [ -n "$moddir" ]; then
	modroot=$(realpath "$moddir")
	[ -d "$modroot/lib/modules/$kver" ] || die "no $modroot/lib/modules/$kver"
fi
modtree=${modroot%/}/lib/modules/$kver

# --- out dir -----------------------------------------------------------------

if [ -n "$out" ]; then
	mkdir -p "$out"
	out=$(realpath "$out")
else
	base=${SRNIC_OUT:-/var/tmp/srnic-out}
	mkdir -p "$base"
	out=$(mktemp -d "$(realpath "$base")/$(date +%Y%m%d-%H%M%S)-XXXX")
fi
# The path goes on the kernel command line and is re-created in the guest.
case $out in *[!A-Za-z0-9._/+:@-]*) die "out dir '$out' has characters the guest cannot take" ;; esac
case $out in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|/run|/run/*|/) die "out dir cannot be $out" ;; esac
rm -f "$out"/exit-status "$out"/output.log "$out"/dmesg.log "$out"/console.log

cwd=$(pwd -P)
case $cwd in
/tmp|/tmp/*|/run|/run/*)
	# The guest has its own /tmp and /run: share the checkout (or the
	# cwd) the command runs in, unless --share names a folder holding it.
	case $cwd/ in "${share:-/nonexistent}"/*) ;; *)
		share=$(git -C "$cwd" rev-parse --show-toplevel 2>/dev/null || echo "$cwd")
		share=$(realpath "$share") ;;
	esac ;;
/proc*|/sys*|/dev*)
	msg "warning: cwd $cwd is not visible in the guest" ;;
esac
for d in share sync; do
	[ -n "${!d}" ] || continue
	[ -d "${!d}" ] || die "--$d ${!d}: no such directory"
	printf -v "$d" '%s' "$(realpath "${!d}")"
	case ${!d} in *[!A-Za-z0-9._/+:@-]*) die "--$d '${!d}' has characters the guest cannot take" ;; esac
	case ${!d} in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|/) die "--$d cannot be ${!d}" ;; esac
done
for l in "${links[@]}"; do
	[[ $l =~ ^(listen|connect):([0-9]+|/[A-Za-z0-9._/+-]+):([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] ||
		die "--link '$l': want listen|connect:PATH|PORT:MAC (e.g. listen:/tmp/l0.sock:52:54:00:5a:01:00)"
	p=${l#*:}
	p=${p%:*:*:*:*:*:*}
	[ ${#p} -lt 100 ] || die "--link '$l': a Unix socket path has at most 99 characters"
done

# --- initramfs ---------------------------------------------------------------

# Stage 1: /init in the initramfs.  Loads the modules, builds the overlay root,
# mounts the results share, then switch_root into stage 2.
read -r -d '' INIT_SH <<'EOF' || true
#!/bin/busybox sh
# srnic guest init, stage 1 (initramfs)
/bin/busybox mkdir -p /proc /sys /dev /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# Any failure: say why and power off.  No exit-status is written, so the host
# reports 125 and points at console.log.
fatal() {
	echo "srnic-init: FATAL: $*"
	echo o >/proc/sysrq-trigger
	poweroff -f
}

while read -r m; do
	insmod "/modules/$m" || fatal "insmod $m failed"
done </modules/list

out= share= sync=
for arg in $(cat /proc/cmdline); do
	case $arg in
	srnic_out=*) out=${arg#srnic_out=} ;;
	srnic_share=*) share=${arg#srnic_share=} ;;
	srnic_sync=*) sync=${arg#srnic_sync=} ;;
	esac
done
[ -n "$out" ] || fatal "no srnic_out= on the kernel command line"

# The 9p channels appear when the virtio devices have probed; give them time.
mount9p() {
	i=0
	while ! mount -t 9p -o "trans=virtio,version=9p2000.L,msize=512000,$1" "$2" "$3"; do
		i=$((i + 1))
		[ $i -lt 20 ] || return 1
		sleep 0.1
	done
}

mkdir -p /lower /rw /newroot
# cache=loose: the host root does not change under a test run, and caching
# makes exec/stat of the host's binaries much cheaper under TCG.
mount9p ro,cache=loose hostroot /lower || fatal "cannot mount host root (9p)"
mount -t tmpfs -o mode=0755 rw /rw
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work \
	overlay /newroot || fatal "cannot mount overlay root"

mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
mount --move /dev /newroot/dev
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /newroot/tmp
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run
# A checkout the host root does not show (under /tmp): like the root,
# read-only and cached, under an overlay of its own.
if [ -n "$share" ]; then
	mkdir -p /share /rw/share-upper /rw/share-work "/newroot$share"
	mount9p ro,cache=loose srnicshare /share || fatal "cannot mount $share (9p)"
	mount -t overlay -o lowerdir=/share,upperdir=/rw/share-upper,workdir=/rw/share-work \
		overlay "/newroot$share" || fatal "cannot mount the overlay on $share"
fi
# Last, so that even an out dir under /tmp or /run is reachable.
# cache=none (default): every write reaches the host at once.
mkdir -p "/newroot$out"
mount9p rw srnicout "/newroot$out" || fatal "cannot mount results dir (9p)"
if [ -n "$sync" ]; then
	mkdir -p "/newroot$sync"
	mount9p rw srnicsync "/newroot$sync" || fatal "cannot mount $sync (9p)"
fi

mkdir -p /newroot/run/srnic
cp /bin/busybox /stage2.sh /newroot/run/srnic/
exec switch_root /newroot /run/srnic/busybox sh /run/srnic/stage2.sh "$out"
EOF

# Stage 2: PID 1 in the overlay root.  Runs the command, records its status
# and the kernel log, powers off.
read -r -d '' STAGE2_SH <<'EOF' || true
# srnic guest init, stage 2 (PID 1 in the overlay root), busybox sh
bb=/run/srnic/busybox
out=$1
$bb mkdir -p /dev/pts /dev/shm
$bb mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts
$bb mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
$bb ln -sf /proc/self/fd /dev/fd
$bb ln -sf /proc/self/fd/0 /dev/stdin
$bb ln -sf /proc/self/fd/1 /dev/stdout
$bb ln -sf /proc/self/fd/2 /dev/stderr
$bb mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
$bb mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
$bb mount -t configfs configfs /sys/kernel/config 2>/dev/null
$bb mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
$bb hostname srnic-vm
$bb ip link set lo up

finish() {
	echo "$1" >"$out/exit-status"
	echo "<<<srnic:end rc=$1>>>"
	$bb sync
	$bb umount "$out" 2>/dev/null
	$bb poweroff -f
	echo o >/proc/sysrq-trigger
}

# Sets SRNIC_CWD, SRNIC_MODDIR and the positional parameters (env -i ...).
. "$out/guest-cmd.sh"
if [ -n "$SRNIC_MODDIR" ]; then
	kver=$($bb uname -r)
	$bb mkdir -p "/lib/modules/$kver"
	$bb mount --bind "$SRNIC_MODDIR/lib/modules/$kver" "/lib/modules/$kver"
fi
if ! cd "$SRNIC_CWD"; then
	echo "srnic-init: cannot cd to $SRNIC_CWD in the guest (host /tmp and /run are not shared)"
	finish 125
fi

echo "<<<srnic:begin>>>"
{ "$@" </dev/null 2>&1; echo $? >/run/srnic/rc; } | $bb tee "$out/output.log"
rc=$($bb cat /run/srnic/rc 2>/dev/null || echo 125)
if command -v dmesg >/dev/null; then dmesg; else $bb dmesg; fi >"$out/dmesg.log" 2>&1
finish "$rc"
EOF

# Modules the init needs, in load order, from THIS kernel's tree.  Built-in
# ones (or a tree without them) are skipped: the mount then tells.
modules=
for m in virtio_pci 9pnet_virtio 9p overlay; do
	if deps=$(modprobe -d "$modroot" -S "$kver" --show-depends "$m" 2>/dev/null); then
		modules="$modules $(echo "$deps" | awk '$1 == "insmod" { print $2 }')"
	elif ! grep -qs "/$m.ko" "$modtree/modules.builtin"; then
		msg "warning: module $m not found for $kver; assuming it is built in"
	fi
done
# Drop duplicates, keep the first (dependency) order.
# shellcheck disable=SC2086 # split the list into one path per line
modules=$(printf '%s\n' $modules | awk 'NF && !seen[$0]++')

key=$( {
	printf '%s\n' "$INIT_SH" "$STAGE2_SH"
	sha256sum "$busybox"
	for f in $modules; do sha256sum "$f"; done
} | sha256sum | cut -c1-16)
cache=${SRNIC_CACHE:-/var/cache/srnic}
initrd=$cache/initramfs-$kver-$key.cpio.gz

if [ ! -s "$initrd" ]; then
	msg "building $initrd"
	mkdir -p "$cache"
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage/bin" "$stage/modules"
	cp "$busybox" "$stage/bin/busybox"
	printf '%s\n' "$INIT_SH" >"$stage/init"
	printf '%s\n' "$STAGE2_SH" >"$stage/stage2.sh"
	chmod 755 "$stage/init"
	n=0
	: >"$stage/modules/list"
	for f in $modules; do
		# busybox insmod wants plain ELF: decompress here.
		n=$((n + 1))
		b=$(printf '%02d-%s' "$n" "$(basename "$f")")
		b=${b%.xz}; b=${b%.zst}; b=${b%.gz}
		case $f in
		*.xz) xz -dc "$f" >"$stage/modules/$b" ;;
		*.zst) zstd -qdc "$f" >"$stage/modules/$b" ;;
		*.gz) gzip -dc "$f" >"$stage/modules/$b" ;;
		*) cp "$f" "$stage/modules/$b" ;;
		esac
		echo "$b" >>"$stage/modules/list"
	done
	tmp=$(mktemp "$initrd.XXXXXX")
	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
		gzip -1 >"$tmp"
	chmod 644 "$tmp"
	mv -f "$tmp" "$initrd"	# atomic: parallel runs may race here
	rm -rf "$stage"
	trap - EXIT
fi

# --- the command, as the guest will run it -----------------------------------

shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

envargs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	 HOME=/root TERM=dumb LANG=C.UTF-8 SRNIC_GUEST=1
	 "SRNIC_OUT=$out" "SRNIC_KVER=$kver")
[ -z "$sync" ] || envargs+=("SRNIC_SYNC=$sync")
while IFS= read -r v; do
	case $v in SRNIC_OUT|SRNIC_CACHE|SRNIC_GUEST|SRNIC_KVER|SRNIC_SYNC) continue ;; esac
	envargs+=("$v=${!v}")
done < <(compgen -e | grep '^SRNIC_' || true)

{
	echo "# generated by vm.sh; sourced by the guest init (busybox sh)"
	echo "SRNIC_CWD=$(shq "$cwd")"
	echo "SRNIC_MODDIR=$(shq "$([ "$modroot" = / ] || echo "$modroot")")"
	printf 'set -- env -i'
	for a in "${envargs[@]}" "$@"; do printf ' %s' "$(shq "$a")"; done
	echo
} >"$out/guest-cmd.sh"

# --- boot --------------------------------------------------------------------

# Under TCG, decompressing a bzImage takes seconds (XZ in Debian 6.1), so boot
# the uncompressed ELF vmlinux through its PVH entry instead (qemu -kernel
# takes an ELF with the PVH note).  It is cut out of the bzImage once and
# cached.  SRNIC_VM_PVH=0 boots the bzImage as is.  A side effect: no KASLR
# (the decompressor does that), so addresses repeat from boot to boot.
has_pvh_note() { readelf -n "$1" 2>/dev/null | grep -Eq 'Xen .*(0x00000012|PHYS32)'; }
boot_image=$image
if is_elf "$image"; then
	has_pvh_note "$image" || die "$image is an ELF vmlinux without a PVH note (CONFIG_PVH=n): pass a bzImage"
elif [ "${SRNIC_VM_PVH:-1}" != 0 ]; then
	sum=$(sha256sum "$image" | cut -c1-16)
	vmlinux=$cache/vmlinux-$kver-$sum
	if [ ! -s "$vmlinux" ]; then
		# The payload (setup header fields payload_offset/length) is the
		# compressed ELF vmlinux plus, for xz and zstd, a 4-byte size
		# trailer (gzip has the size in its own trailer).  A payload that
		# does not decompress is booted as a bzImage (note below).
		setup=$(od -An -tu1 -j $((0x1f1)) -N1 "$image" | tr -d ' ')
		poff=$(od -An -tu4 -j $((0x248)) -N4 "$image" | tr -d ' ')
		plen=$(od -An -tu4 -j $((0x24c)) -N4 "$image" | tr -d ' ')
		tmp=$(mktemp "$vmlinux.XXXXXX")
		tail -c +$(((setup + 1) * 512 + poff + 1)) "$image" | head -c "$plen" >"$tmp.z"
		case $(od -An -tx1 -N4 "$tmp.z" | tr -d ' ') in
		fd377a58) head -c $((plen - 4)) "$tmp.z" | xz -dc >"$tmp" 2>/dev/null || : >"$tmp" ;;
		28b52ffd) head -c $((plen - 4)) "$tmp.z" | zstd -qdc >"$tmp" 2>/dev/null || : >"$tmp" ;;
		1f8b*) gzip -dc <"$tmp.z" >"$tmp" 2>/dev/null || : >"$tmp" ;;
		*) : >"$tmp" ;;
		esac
		rm -f "$tmp.z"
		if [ -s "$tmp" ] && has_pvh_note "$tmp"; then
			# One cached vmlinux per kernel version is enough.
			for f in "$cache/vmlinux-$kver-"????????????????; do
				[ "$f" = "$vmlinux" ] || rm -f "$f"
			done
			chmod 644 "$tmp"
			mv -f "$tmp" "$vmlinux"
		else
			rm -f "$tmp"
			msg "note: cannot extract a PVH vmlinux from $image; booting the bzImage (slower)"
		fi
	fi
	[ -s "$vmlinux" ] && boot_image=$vmlinux
fi

# quiet + loglevel=5: no boot chatter on the console, but warnings and worse
# (WARN, BUG, Oops, lockdep...) still show up live.  mitigations=off: KPTI &
# co. are costly under TCG and irrelevant to what the tests look at.
# tsc=reliable: TCG's TSC is one host clock for every vCPU, but a loaded
# host delays a vCPU between reading it and the HPET, the clocksource
# watchdog then marks the TSC unstable and the static-key text patching that
# follows can oops on int3 under TCG (seen: a 6.12 guest panicked in
# sched_clock_cpu during srnic_vfuzz.sh, "TSC found unstable after boot").
cmdline="console=ttyS0 panic=-1 quiet loglevel=5 mitigations=off tsc=reliable srnic_out=$out"
[ -z "$share" ] || cmdline="$cmdline srnic_share=$share"
[ -z "$sync" ] || cmdline="$cmdline srnic_sync=$sync"
cmdline="$cmdline$append"

# shellcheck disable=SC2054 # the commas belong to qemu's option syntax
qemu=(qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m "$mem" -smp "$smp"
      -nographic -no-reboot -nic none
      -kernel "$boot_image" -initrd "$initrd" -append "$cmdline"
      -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
      -virtfs "local,path=$out,mount_tag=srnicout,security_model=none,multidevs=remap")
[ -z "$share" ] ||
	qemu+=(-virtfs "local,path=$share,mount_tag=srnicshare,security_model=none,readonly=on,multidevs=remap")
[ -z "$sync" ] ||
	qemu+=(-virtfs "local,path=$sync,mount_tag=srnicsync,security_model=none,multidevs=remap")
n=0
for l in "${links[@]}"; do
	IFS=: read -r mode port mac <<<"$l"
	case $port in
	/*)
		[ "$mode" = listen ] && sv=on || sv=off
		[ "$mode" = connect ] || rm -f "$port"
		qemu+=(-netdev "stream,id=link$n,server=$sv,addr.type=unix,addr.path=$port") ;;
	*)
		qemu+=(-netdev "socket,id=link$n,$mode=127.0.0.1:$port") ;;
	esac
	qemu+=(-device "virtio-net-pci,netdev=link$n,mac=$mac")
	n=$((n + 1))
done

[ -z "$monitor" ] || qemu+=(-monitor "unix:$monitor,server=on,wait=off")
msg "kernel $kver, out dir $out${share:+, sharing $share}${links[0]:+, ${#links[@]} link(s)}"
fifo=$(mktemp -u "${TMPDIR:-/tmp}/srnic-vm.XXXXXX")
mkfifo -m 600 "$fifo"
trap 'rm -f "$fifo"' EXIT
start=$(date +%s.%N)

# qemu's stdin is /dev/null: a terminal's Ctrl-C then kills it as usual, and
# nothing typed is forwarded to the guest.
timeout -k 5 "$timeout_s" "${qemu[@]}" </dev/null >"$fifo" 2>&1 &
qpid=$!
# The console filter below runs in the background so that these signals are
# handled at once (bash defers traps while a foreground child runs): stop
# qemu, which ends the filter too.
interrupted=0
trap 'interrupted=1; kill -TERM $qpid 2>/dev/null' INT TERM HUP

# Save the raw console; print live what the command prints (and any kernel
# message in between), i.e. the lines between the begin/end markers.
# mawk reads its input in big blocks unless told otherwise: no live output.
awk_live=()
awk -W version 2>&1 | grep -q mawk && awk_live=(-W interactive)
awk "${awk_live[@]}" -v clog="$out/console.log" -v start="$start" '
	{ print >clog; fflush(clog); sub(/\r$/, "") }
	/<<<srnic:end rc=/ { on = 0; next }
	on { print; fflush(); next }
	/<<<srnic:begin>>>/ {
		on = 1
		"date +%s.%N" | getline now
		printf "vm.sh: guest command started %.1fs after qemu launch\n", now - start >"/dev/stderr"
		next
	}
	/srnic-init: |Kernel panic|BUG:|Oops/ { print >"/dev/stderr"; fflush("/dev/stderr") }
' <"$fifo" &
apid=$!
wait "$apid" || wait "$apid" || true	# a trapped signal cuts the first wait short
qrc=0
wait "$qpid" || qrc=$?
trap - INT TERM HUP
msg "guest ran for $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')s"
if [ $interrupted -eq 1 ]; then
	msg "INTERRUPTED: guest stopped; console in $out/console.log"
	exit 130
fi

if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	msg "TIMEOUT: guest killed after ${timeout_s}s; console in $out/console.log"
	exit 124
fi
if [ ! -s "$out/exit-status" ]; then
	msg "FAILED: the guest never reported an exit status (qemu rc=$qrc)." \
	    "Last console lines ($out/console.log):"
	tail -n 25 "$out/console.log" | tr -d '\r' | sed 's/^/    /' >&2
	exit 125
fi
rc=$(cat "$out/exit-status")

# Kernel splats: always mention them, fail on them when asked. The
# expression is the selftests' own (selftests/kernel_log.sh).
# shellcheck source=selftests/kernel_log.sh
. "$(dirname "$0")/../selftests/kernel_log.sh"
klog=$out/dmesg.log
[ -s "$klog" ] || klog=$out/console.log
lines=$(kernel_splats "$klog" || true)
if [ -n "$lines" ]; then
	if [ $fail_on_splat -eq 1 ]; then
		msg "FAILED: kernel splat in $klog (command exit status $rc):"
		printf '    %s\n' "${lines//$'\n'/$'\n'    }" >&2
		exit 126
	fi
	msg "warning: kernel log has $(echo "$lines" | wc -l) splat line(s), see $klog"
fi
msg "exit status $rc (results in $out)"
exit "$rc"
