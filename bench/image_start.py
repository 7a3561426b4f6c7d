#!/usr/bin/python3
"""image_start.py: start-up on a stored image against the host's trees and
bwrap, in one run (issue 24: "starting a run on an image costs no more
than on the host tree").

The image is tests/image_tree.py's (the host's own dash, python3 and their
libraries as one OCI layer), imported into a store of a temporary HOME so
that nothing of the caller's is touched.  Each workload (/bin/true, python3
-c pass) runs under bwrap on the host's trees, bwrap on the image's tree
(its top-level directories bound read-only in the same way), vigil on the
host's trees and vigil --image, with hyperfine -N, the four commands
interleaved round by round (medians of ROUNDS) so the VM's drift hits them
alike.  vigil runs with --no-cgroups, as bwrap makes none.  Run as root:
python3 bench/image_start.py [ROUNDS]."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from engines import median, one_round  # noqa: E402
from image_tree import layout_with, runnable_layer  # noqa: E402
from oci_layout import oci_of_blobs  # noqa: E402
from tools import bwrap_argv  # noqa: E402

VIGIL = os.path.join(ROOT, "vigil")
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 10
WORKLOADS = [("/bin/true", ["/bin/sh", "-c", ":"]), ("python3 -c pass", ["python3", "-c", "pass"])]


def bwrap_on(rootfs):
    """bwrap with the isolation of vigil's sandbox on the image's tree."""
    argv = ["/usr/bin/bwrap", "--unshare-all", "--die-with-parent"]
    for name in sorted(os.listdir(rootfs)):
        path = os.path.join(rootfs, name)
        if name in ("proc", "dev", "tmp", "sys"):
            continue
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), "/" + name]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, "/" + name]
    return argv + ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--new-session",
                   "--cap-drop", "ALL"]


def whiteouts():
    """A layer removing /etc/resolv.conf and /etc/hosts."""
    import io
    import tarfile
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w") as t:
        for name in ("etc/.wh.resolv.conf", "etc/.wh.hosts"):
            t.addfile(tarfile.TarInfo(name), io.BytesIO(b""))
    return b.getvalue()


def main():
    if not shutil.which("hyperfine") or not os.path.exists("/usr/bin/bwrap"):
        sys.exit("image_start.py: needs hyperfine and bubblewrap (apt install hyperfine bubblewrap)")
    tmp = tempfile.mkdtemp(prefix="vigil-image-start.")
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    env = dict(os.environ, HOME=home)
    os.environ["HOME"] = home  # hyperfine's children: the temporary store
    try:
        layer = runnable_layer(pycache=True)
        layout = layout_with(os.path.join(tmp, "oci"), layer)
        digest = subprocess.run([VIGIL, "image", "import", layout, "--name", "bench"], env=env,
                                check=True, capture_output=True, text=True).stdout.strip()
        # as a docker image is: no /etc/resolv.conf nor hosts, which the run
        # then makes on a skeleton of the image's /etc
        bare = oci_of_blobs(os.path.join(tmp, "oci-docker"), [layer, whiteouts()])
        subprocess.run([VIGIL, "image", "import", bare, "--name", "bench-docker"], env=env,
                       check=True, capture_output=True)
        rootfs = os.path.join(home, ".local/state/vigil/images/sha256", digest[7:], "rootfs")
        log = os.path.join(tmp, "log.msgpack")
        vigil = [VIGIL, "run", "-q", "--no-cgroups", "-o", log]
        print(f"image {digest[:19]}, {ROUNDS} rounds, medians")
        print(f"{'workload':18s} {'bwrap':>8s} {'bwrap img':>9s} {'vigil':>8s} {'vigil img':>9s}"
              f" {'img, no etc files':>17s}  img/host  no-etc/host  vigil img/bwrap img")
        for name, argv in WORKLOADS:
            cmds = [bwrap_argv() + argv, bwrap_on(rootfs) + argv, vigil + ["--"] + argv,
                    vigil + ["--image", "bench", "--"] + argv,
                    vigil + ["--image", "bench-docker", "--"] + argv]
            times = [[] for _ in cmds]
            for _ in range(ROUNDS):
                for i, t in enumerate(one_round(cmds, os.path.join(tmp, "h.json"))):
                    times[i].append(t * 1000)
            b, bi, v, vi, vd = (median(t) for t in times)
            print(f"{name:18s} {b:6.1f}ms {bi:7.1f}ms {v:6.1f}ms {vi:7.1f}ms {vd:15.1f}ms"
                  f"  {vi / v:8.2f}  {vd / v:11.2f}  {vi / bi:8.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
