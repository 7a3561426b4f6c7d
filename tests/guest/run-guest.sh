#!/bin/sh
# run-guest.sh: run one command as root inside a throwaway qemu guest that
# boots Debian 12's stock kernel (linux-image-amd64) with BPF LSM enabled,
# and exit with that command's status.
#
# Why a guest: the kernel engine (--engine lsm) needs BPF LSM programs, and
# a machine whose own kernel refuses them (no "bpf" in its LSM list, or no
# BPF trampolines, as some microVM kernels) can still build and test the
# engine against the kernel Debian users run.
#
# The guest's root is a small initramfs (busybox, the 9p and virtio
# modules, the shared libraries of the binaries it will run, an /init); the
# source tree is shared read-only through 9p at the same path as on the
# host, so the command runs the tree's binaries as built.  The command's
# exit status comes back on the serial console as a marker line.
#
# usage: tests/guest/run-guest.sh [options] [--] COMMAND [ARG...]
#        tests/guest/run-guest.sh --kernel      (fetch the kernel; print the paths)
# COMMAND runs in the tree's root; a path to a host binary outside the tree
# is copied into the guest with its libraries.  Options:
#   --timeout SECONDS   kill the guest after this long (default 600)
#   --accel kvm|tcg     default: kvm where /dev/kvm exists and the CPU shows
#                       vmx or svm, else tcg (qemu's emulator: slow, correct)
#   --mem MIB           guest memory (default 1024)
#   --with FILE         also copy this host binary and its libraries in
#   --rw                share the tree writable (default read-only)
#   --quiet             show only the command's output, not the boot's
# Environment: VIGIL_GUEST_CACHE (default build/guest under the tree) holds
# the kernel; VIGIL_GUEST_LSM the kernel's lsm= list.
# Exit: the command's status; 124 the guest timed out; 125 this script or
# the guest failed before the command ran.
set -eu

# Exit statuses, as vigil's own: 124 time limit, 125 the harness failed.
EXIT_TIMEOUT=124
EXIT_HARNESS=125
# Seconds qemu gets after SIGTERM before SIGKILL.
KILL_GRACE=10
MARK=VIGIL-GUEST

die() {
    echo "run-guest: $*" >&2
    exit "$EXIT_HARNESS"
}

TREE=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${VIGIL_GUEST_CACHE:-$TREE/build/guest}
LSM_LIST=${VIGIL_GUEST_LSM:-landlock,lockdown,yama,integrity,apparmor,bpf}
TIMEOUT=600
MEM=1024
ACCEL=
RW=0
QUIET=0
KERNEL_ONLY=0
WITH=

while [ $# -gt 0 ]; do
    case $1 in
    --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
    --accel) ACCEL=${2:?--accel needs kvm or tcg}; shift 2 ;;
    --mem) MEM=${2:?--mem needs MiB}; shift 2 ;;
    --with) WITH="$WITH ${2:?--with needs a file}"; shift 2 ;;
    --rw) RW=1; shift ;;
    --quiet) QUIET=1; shift ;;
    --kernel) KERNEL_ONLY=1; shift ;;
    --help | -h) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option $1 (--help)" ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || [ "$KERNEL_ONLY" = 1 ] || die "no command given (--help)"

case $ACCEL in
'')
    # A nested hypervisor that is not VT-x/AMD-V (PVM, for one) still has
    # /dev/kvm but cannot run a stock kernel: it hangs after decompression.
    if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then ACCEL=kvm; else ACCEL=tcg; fi ;;
kvm | tcg) ;;
*) die "--accel takes kvm or tcg, not $ACCEL" ;;
esac

# Debian packages, installed only when missing (no network otherwise).
need_pkgs() {
    missing=
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    [ "$(id -u)" = 0 ] || die "missing packages:$missing (run as root to install them)"
    echo "run-guest: installing$missing" >&2
    # shellcheck disable=SC2086 # one word per package
    apt-get install -y -q --no-install-recommends $missing >&2 ||
        { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends $missing >&2; } ||
        die "could not install$missing"
}

need_pkgs qemu-system-x86 busybox-static xz-utils coreutils
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || die "no $BUSYBOX after installing busybox-static"

# The modules the guest loads to mount the tree: virtio PCI and 9p; the
# directories that hold them and their dependencies.
MODULES="virtio_pci 9pnet_virtio 9p"
MODDIRS="drivers/virtio net/9p fs/9p fs/netfs fs/fscache"

# Fetch the kernel once: the newest linux-image-6.1.0-*-amd64 that
# linux-image-amd64 points to, unpacked into the cache (never installed:
# the host's boot loader is not touched).  The cache is reused as it is,
# so runs are repeatable and need no network.  Sets KVER and KDIR.
fetch_kernel() {
    KDIR=
    for d in "$CACHE"/linux-*; do
        if [ -f "$d/.done" ]; then KDIR=$d; fi
    done
    if [ -z "$KDIR" ]; then
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1)
        if [ -z "$pkg" ]; then
            apt-get update -q >&2 || die "apt-get update failed"
            pkg=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1)
        fi
        [ -n "$pkg" ] || die "apt knows no linux-image-amd64"
        KDIR=$CACHE/linux-${pkg#linux-image-}
        rm -rf "$KDIR"
        mkdir -p "$KDIR/dl"
        echo "run-guest: fetching $pkg into $KDIR" >&2
        # apt downloads as its sandbox user _apt, who must own the folder.
        if id _apt >/dev/null 2>&1; then chown _apt "$KDIR/dl"; fi
        (cd "$KDIR/dl" && apt-get download -q "$pkg" >&2) || die "apt-get download $pkg failed"
        deb=$(ls "$KDIR"/dl/*.deb)
        ver=${pkg#linux-image-}
        members="./boot/vmlinuz-$ver"
        for m in $MODDIRS; do members="$members ./lib/modules/$ver/kernel/$m"; done
        # shellcheck disable=SC2086 # one word per member
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$KDIR" $members || die "unpacking $deb failed"
        "$BUSYBOX" depmod -b "$KDIR" "$ver" || die "depmod failed"
        # The uncompressed kernel, for its BTF (vmlinux.h for lsm/): the
        # bzImage holds one xz stream, found by its magic.
        vmlinuz=$KDIR/boot/vmlinuz-$ver
        off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n 1 | cut -d: -f1)
        [ -n "$off" ] || die "no xz stream in $vmlinuz"
        tail -c +"$((off + 1))" "$vmlinuz" | xz -dcq --single-stream >"$KDIR/vmlinux" ||
            die "could not unpack $vmlinuz"
        rm -rf "$KDIR/dl"
        : >"$KDIR/.done"
    fi
    KVER=${KDIR##*/}
    KVER=${KVER#linux-}
    [ -f "$KDIR/boot/vmlinuz-$KVER" ] || die "cache $KDIR has no vmlinuz-$KVER (remove it)"
}

fetch_kernel
if [ "$KERNEL_ONLY" = 1 ]; then
    echo "kernel $KDIR/boot/vmlinuz-$KVER"
    echo "btf $KDIR/vmlinux"
    exit 0
fi

# Everything made for this run lives here and is removed at exit: the
# initramfs tree and archive, the console log.  Nothing goes to /tmp.
mkdir -p "$CACHE"
STAGE=$(mktemp -d "$CACHE/run.XXXXXX")
QPID=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
    # timeout passes the TERM on to qemu.
    if [ -n "$QPID" ]; then kill "$QPID" 2>/dev/null || :; fi
    rm -rf "$STAGE"
}
trap cleanup EXIT
trap 'exit "$EXIT_HARNESS"' INT TERM HUP
ROOT=$STAGE/root
mkdir -p "$ROOT"/bin "$ROOT"/sbin "$ROOT"/usr/bin "$ROOT"/usr/sbin "$ROOT"/etc \
    "$ROOT"/proc "$ROOT"/sys "$ROOT"/dev "$ROOT"/tmp "$ROOT"/run "$ROOT"/root "$ROOT$TREE"
cp "$BUSYBOX" "$ROOT/bin/busybox"

# The modules and their modules.dep, for busybox modprobe.
mkdir -p "$ROOT/lib/modules/$KVER"
cp -R "$KDIR/lib/modules/$KVER/." "$ROOT/lib/modules/$KVER/"

# Copy a host file into the initramfs at the same path, once.
add_copy() {
    [ -e "$ROOT$1" ] && return 0
    if ! { mkdir -p "$ROOT${1%/*}" && cp -L "$1" "$ROOT$1"; }; then die "cannot copy $1"; fi
}
# The shared libraries ldd finds for a binary ("lib => /path (addr)" or
# "/path (addr)" for the loader): what a binary reached through the share needs.
add_libs_of() {
    ldd "$1" 2>/dev/null | while read -r first _ third _; do
        for lib in "$first" "$third"; do
            case $lib in /*) add_copy "$lib" ;; esac
        done
    done || die "cannot copy the libraries of $1"
}
# A host binary outside the tree: itself and its libraries.
add_host_file() {
    add_copy "$1"
    add_libs_of "$1"
}
is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# vigil itself, the command, and bpftool (to look at BPF state in the guest).
if [ -x "$TREE/vigil" ]; then add_libs_of "$TREE/vigil"; fi
for b in /usr/sbin/bpftool $WITH; do
    if [ -e "$b" ]; then add_host_file "$b"; fi
done
case $1 in
/*) cmd_path=$1 ;;
*/*) cmd_path=$TREE/$1 ;;
*) cmd_path= ;;
esac
if [ -n "$cmd_path" ] && is_elf "$cmd_path"; then
    case $cmd_path in
    "$TREE"/*) add_libs_of "$cmd_path" ;;
    *) add_host_file "$cmd_path" ;;
    esac
fi
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$ROOT/etc/group"

# The command, quoted for sh, word by word.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
    printf 'cd %s || exit %s\nexec' "$(quote "$TREE")" "$EXIT_HARNESS"
    for a in "$@"; do printf ' %s' "$(quote "$a")"; done
    printf '\n'
} >"$ROOT/cmd.sh"

SHARE_OPTS=trans=virtio,version=9p2000.L,msize=262144,cache=loose
[ "$RW" = 1 ] || SHARE_OPTS=$SHARE_OPTS,ro
cat >"$ROOT/init" <<INIT
#!/bin/busybox sh
# /init of run-guest.sh's initramfs: mount what BPF LSM work needs, mount
# the tree, run /cmd.sh, print its status as a marker line, power off.
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
# The initramfs is the kernel's rootfs, which pivot_root(2) refuses (EINVAL),
# and sandboxes such as vigil's pivot into a new root: move everything to a
# tmpfs and make that the root first.
if [ "\$1" != on-tmpfs ]; then
    mkdir /newroot
    mount -t tmpfs -o mode=755 tmpfs /newroot
    for d in /*; do [ "\$d" = /newroot ] || cp -a "\$d" /newroot/; done
    exec switch_root /newroot /init on-tmpfs
fi
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t securityfs securityfs /sys/kernel/security
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
# A line of its own: the firmware's last line has no newline.
echo
echo "$MARK-INIT uptime \$(cut -d' ' -f1 /proc/uptime) lsm \$(cat /sys/kernel/security/lsm)"
rc=$EXIT_HARNESS
# made again: a tree under /tmp (a CI clone) lies below the tmpfs above
if ! { modprobe -a $MODULES && mkdir -p $TREE && mount -t 9p -o $SHARE_OPTS vigiltree $TREE; }; then
    echo "$MARK: cannot mount the tree at $TREE"
else
    sh /cmd.sh </dev/null
    rc=\$?
    umount $TREE
fi
if [ "\$rc" = 0 ]; then echo "$MARK: PASS"; else echo "$MARK: FAIL (exit \$rc)"; fi
echo "$MARK-EXIT=\$rc uptime \$(cut -d' ' -f1 /proc/uptime)"
sync
reboot -f
INIT
chmod 755 "$ROOT/init"

(cd "$ROOT" && find . | "$BUSYBOX" cpio -o -H newc -R 0:0 2>/dev/null) >"$STAGE/initrd.cpio" ||
    die "cpio failed"
rm -rf "$ROOT"

if [ "$ACCEL" = kvm ]; then CPU=host; else CPU=max; fi
# The uncompressed kernel boots through its PVH entry: no firmware-run
# decompression, which under tcg takes longer than the boot itself.
KERNEL=$KDIR/vmlinux
[ -f "$KERNEL" ] || KERNEL=$KDIR/boot/vmlinuz-$KVER
if [ "$RW" = 1 ]; then RO=; else RO=,readonly=on; fi
LOG=$STAGE/console.log
START=$(date +%s%N)
# -no-reboot: the guest's reboot -f (and a panic, with panic=-1) ends qemu.
# -nic none: no network, and no PXE option ROM to wait for at boot.
# multidevs=remap: the tree may span several host file systems (mounts).
# qemu runs in the background, its console read through a FIFO, so that
# this script knows qemu's pid: timeout puts qemu in a process group of its
# own, where the terminal's ^C does not reach it, and the trap must.
mkfifo "$STAGE/console"
timeout -k "$KILL_GRACE" "$TIMEOUT" qemu-system-x86_64 -accel "$ACCEL" -cpu "$CPU" -m "$MEM" \
    -nographic -no-reboot -nic none -serial mon:stdio \
    -kernel "$KERNEL" -initrd "$STAGE/initrd.cpio" \
    -append "console=ttyS0 panic=-1 quiet loglevel=4 lsm=$LSM_LIST rdinit=/init" \
    -virtfs "local,path=$TREE,mount_tag=vigiltree,security_model=none,multidevs=remap$RO" \
    </dev/null >"$STAGE/console" 2>&1 &
QPID=$!
# Console lines without CRs and terminal escapes (SeaBIOS clears the screen).
esc=$(printf '\033')
shown=$((1 - QUIET))
while IFS= read -r line; do
    line=$(printf '%s' "$line" | sed "s/\r//g; s/${esc}c//g; s/${esc}\[[0-9;?]*[A-Za-z]//g")
    printf '%s\n' "$line" >>"$LOG"
    case $line in
    *"$MARK-INIT"*) date +%s%N >"$STAGE/init.t"; [ "$QUIET" = 0 ] || shown=1 ;;
    *"$MARK-EXIT="* | *"Kernel panic"*) [ "$QUIET" = 0 ] || printf '%s\n' "$line"; shown=$((1 - QUIET)) ;;
    esac
    [ "$shown" = 0 ] || printf '%s\n' "$line"
done <"$STAGE/console"
qrc=0
wait "$QPID" || qrc=$?
QPID=
END=$(date +%s%N)
ms() { echo "$(( ($2 - $1) / 1000000 ))"; }
total=$(ms "$START" "$END")
if [ -f "$STAGE/init.t" ]; then to_init="$(ms "$START" "$(cat "$STAGE/init.t")") ms"; else to_init=never; fi
rc=$(sed -n "s/^.*$MARK-EXIT=\([0-9]*\).*/\1/p" "$LOG" | tail -n 1)
if [ -z "$rc" ]; then
    if [ "$qrc" = "$EXIT_TIMEOUT" ] || [ "$qrc" = 137 ]; then
        echo "run-guest: FAIL: the guest did not finish in $TIMEOUT s (accel $ACCEL)" >&2
        exit "$EXIT_TIMEOUT"
    fi
    echo "run-guest: FAIL: the guest ended without an exit marker (qemu exit $qrc; accel $ACCEL)" >&2
    exit "$EXIT_HARNESS"
fi
if [ "$rc" = 0 ]; then verdict=PASS; else verdict=FAIL; fi
echo "run-guest: $verdict: $* exited $rc in the guest (kernel $KVER, accel $ACCEL, boot to /init $to_init, total $total ms)" >&2
exit "$rc"
