#!/bin/sh
# Install the Debian 12 packages vigil needs to build and test, but only the
# ones that are missing: a machine that already has them is not touched, and
# no network access is attempted.  Run as root (make demo / make test do).
set -eu

BUILD="gcc libc6-dev make pkg-config libseccomp-dev libunwind-dev libmsgpack-dev libncurses-dev libarchive-dev libzstd-dev zlib1g-dev"
# the log's chain (SHA-256: libcrypto) and its seal's signature (ed25519: libsodium)
BUILD="$BUILD libssl-dev libsodium-dev"
# vigil serve: the HTTP/JSON API (GNU libmicrohttpd)
BUILD="$BUILD libmicrohttpd-dev"
# pytest-xdist: make test runs in two workers (tests/run.sh)
TEST="python3 python3-msgpack python3-pytest python3-pytest-xdist tmux strace nodejs"
# sealed logs: keys made and signatures checked without vigil (tests/test_seal.py)
TEST="$TEST openssl python3-cryptography"
# installing like a system tool: man pages, the Debian package (tests/test_install.py)
TEST="$TEST man-db groff-base binutils dpkg-dev debhelper lintian"
# vigil batch on a real single-node Slurm cluster (tests/test_slurm.py)
TEST="$TEST slurm-wlm munge"
# egress for policies that allow addresses beyond the sandbox (pasta), and
# ip netns for the tests' outside network (tests/outside.py)
TEST="$TEST passt iproute2"
# vigil image build makes its trees with mmdebstrap (tests/test_image_build.py)
TEST="$TEST mmdebstrap"
# the Python package: installed into venvs offline with Debian's setuptools
# and wheel, and type-checked (tests/test_python_pkg.py)
TEST="$TEST python3-venv python3-pip python3-setuptools python3-wheel mypy"
# vigil report's HTML page opened in a real headless browser (tests/test_report.py)
TEST="$TEST chromium"
case "${1:-build}" in
  build) want="$BUILD python3" ;;
  test)  want="$BUILD $TEST" ;;
  bench) want="$BUILD $TEST bubblewrap firejail hyperfine slirp4netns" ;;
  fuzz)  want="$BUILD clang libclang-rt-14-dev" ;;
  # the kernel engine's BPF programs (libbpf CO-RE, a skeleton) and the
  # qemu guest that runs them on Debian's own kernel (make test-lsm)
  lsm)   want="$BUILD clang bpftool libbpf-dev qemu-system-x86 busybox-static xz-utils" ;;
  *) echo "usage: $0 build|test|bench|fuzz|lsm" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "vigil: missing Debian packages:$missing (run 'sudo $0 ${1:-build}')" >&2
  exit 1
fi
echo "vigil: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
