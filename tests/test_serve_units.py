"""Running `vigil serve` as a service: the systemd units the Debian package
installs (debian/vigil-serve.socket, .service) say what docs/SERVE.md
promises and pass `systemd-analyze verify`; the service's own command,
started as its socket starts it (LISTEN_FDS, fd 3) under the unit's
hardening (its mount-namespace settings, no_new_privs, its capability
bounding set, done here as systemd does them: this machine's pid 1 is not
systemd), serves a run and stops clean on SIGTERM; the shipped example
config and the Kubernetes example's are configs the daemon accepts; and
the Kubernetes manifests parse and keep the node's secrets out of the pod."""
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import time

import pytest
import yaml

from helpers import ROOT, VIGIL
from serve_daemon import Daemon, require_serve, serve_available, stop_and_check

DEBIAN = os.path.join(ROOT, "debian")
SERVICE = os.path.join(DEBIAN, "vigil-serve.service")
SOCKET = os.path.join(DEBIAN, "vigil-serve.socket")
EXAMPLE_CONF = os.path.join(DEBIAN, "serve.conf")
K8S = os.path.join(ROOT, "examples", "kubernetes")
SERVE_YAML = os.path.join(K8S, "vigil-serve.yaml")
WAIT_S = 60

# Settings that install a seccomp filter the candidates would inherit (its
# refusals outrank vigil's notify filter: calls refused unseen), or cover
# parts of /proc or /dev (the kernel then refuses the sandbox its /proc).
MUST_NOT = {"SystemCallFilter", "SystemCallArchitectures", "SystemCallLog",
            "RestrictAddressFamilies", "RestrictNamespaces", "LockPersonality",
            "MemoryDenyWriteExecute", "RestrictRealtime", "RestrictSUIDSGID", "ProtectClock",
            "ProtectHostname", "ProtectKernelModules", "ProtectKernelLogs",
            "ProtectKernelTunables", "ProtectControlGroups", "ProtectProc", "ProcSubset",
            "PrivateDevices", "PrivateUsers", "PrivateNetwork", "DynamicUser", "User"}
# The hardening this test does as systemd would (strict_namespace below);
# a unit setting of the [Service] section that hardens and is not here
# fails the test until it is done here too, so what is tested is the unit.
EMULATED = {"ProtectSystem", "ProtectHome", "PrivateTmp", "NoNewPrivileges",
            "CapabilityBoundingSet"}
NOT_HARDENING = {"Type", "ExecStart", "StateDirectory", "StateDirectoryMode", "Restart",
                 "RestartSec", "KillMode", "TimeoutStopSec", "Delegate", "LimitNOFILE"}


def unit(path):
    """{section: {key: [values]}} of a unit file (a key may repeat)."""
    got, section = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = got.setdefault(line.strip("[]"), {})
                continue
            key, _, value = line.partition("=")
            section.setdefault(key.strip(), []).append(value.strip())
    return got


def one(u, section, key):
    values = u[section].get(key, [])
    assert len(values) == 1, (section, key, values)
    return values[0]


def test_socket_unit_is_the_documented_socket():
    s = unit(SOCKET)
    assert s["Socket"]["ListenStream"] == ["/run/vigil/serve.sock"]
    assert one(s, "Socket", "SocketMode") == "0666"    # every local user, known by uid
    assert one(s, "Install", "WantedBy") == "sockets.target"
    assert "Accept" not in s["Socket"]     # one daemon gets the listening socket


def test_service_unit_runs_the_daemon_as_documented():
    s = unit(SERVICE)
    assert shlex.split(one(s, "Service", "ExecStart")) == [
        "/usr/bin/vigil", "serve", "--state", "/var/lib/vigil-serve",
        "--config", "/etc/vigil/serve.conf"]
    assert one(s, "Service", "StateDirectory") == "vigil-serve"
    assert one(s, "Service", "KillMode") == "mixed"      # SIGTERM to vigil alone
    assert one(s, "Service", "Restart") == "on-failure"
    assert one(s, "Service", "Delegate") == "yes"        # its cgroups are its own
    assert one(s, "Service", "Type") in ("exec", "simple")   # vigil does not fork away
    assert "vigil-serve.socket" in one(s, "Unit", "Requires")
    bad = MUST_NOT & set(s["Service"])
    assert not bad, "settings that break vigil's sandboxes: %s" % sorted(bad)
    unknown = set(s["Service"]) - EMULATED - NOT_HARDENING
    assert not unknown, "not done by strict_namespace below, so untested: %s" % sorted(unknown)


def verify(tmp_path, service_text, binary=VIGIL, socket_unit=SOCKET):
    """systemd-analyze verify of the two units, the service's binary the
    one given (verify checks that it exists and is executable)."""
    d = tmp_path / ("u%d" % len(os.listdir(str(tmp_path))))
    d.mkdir()
    (d / "vigil-serve.service").write_text(service_text.replace("/usr/bin/vigil", binary))
    shutil.copy(socket_unit, str(d / "vigil-serve.socket"))
    return subprocess.run(["systemd-analyze", "verify", "--man=no",
                           str(d / "vigil-serve.service"), str(d / "vigil-serve.socket")],
                          capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="no systemd-analyze")
def test_systemd_analyze_verify(tmp_path):
    with open(SERVICE, encoding="utf-8") as f:
        text = f.read()
    r = verify(tmp_path, text)
    assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr
    # verify says what is wrong only as text, and still exits 0: a wrong
    # value is seen, so an empty output means something
    r = verify(tmp_path, text.replace("KillMode=mixed", "KillMode=sometimes"))
    assert "KillMode" in r.stdout + r.stderr or "kill mode" in r.stdout + r.stderr, r


def strict_namespace(service):
    """The wrapper that does the unit's hardening to the command it runs,
    in a new mount namespace, as systemd would: ProtectSystem=strict
    (every mount read-only but /proc, /sys, /dev, then the state directory
    writable), ProtectHome=read-only (covered by strict), PrivateTmp (new
    /tmp and /var/tmp), then setpriv for NoNewPrivileges and the bounding
    set.  state is the directory StateDirectory= stands for."""
    svc = unit(service)["Service"]
    assert svc.get("ProtectSystem") == ["strict"] and svc.get("ProtectHome") == ["read-only"]
    assert svc.get("PrivateTmp") == ["yes"]
    drop = one({"S": svc}, "S", "CapabilityBoundingSet")
    assert drop.startswith("~"), drop
    caps = ",".join("-" + c.lower()[len("cap_"):] for c in drop[1:].split())
    priv = ["setpriv", "--bounding-set", caps]
    if svc.get("NoNewPrivileges") == ["yes"]:
        priv.append("--no-new-privs")
    # The unit runs /usr/bin/vigil; the test runs the tree's, which may lie
    # under /tmp (a clone in CI): it is kept through PrivateTmp by a bind
    # made first beside the state (read-only with the rest) and put back
    # at its path on the new /tmp.
    script = r"""
        set -e
        state=$1; tree=$2; shift 2
        keep="$state/../tree"
        mount --make-rslave /
        case "$tree" in /tmp/*|/var/tmp/*) mkdir -p "$keep"; mount --bind "$tree" "$keep";; esac
        findmnt -rn -o TARGET | sed 's/\\x20/ /g' | while read -r m; do
            case "$m" in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue;; esac
            mount -o remount,bind,ro "$m" 2>/dev/null || true
        done
        mount -t tmpfs -o mode=1777 tmpfs /tmp
        mount -t tmpfs -o mode=1777 tmpfs /var/tmp
        case "$tree" in /tmp/*|/var/tmp/*) mkdir -p "$tree"; mount --bind "$keep" "$tree";; esac
        mount --bind "$state" "$state"
        mount -o remount,bind,rw "$state"
        exec "$@"
    """
    return lambda state: ["unshare", "-m", "sh", "-c", script, "strict", state, ROOT] + priv


def test_the_units_command_serves_under_its_hardening():
    """The unit's ExecStart (its paths the test's: the state, the shipped
    example config, the tree's binary; a uid range of the test's), started
    as its socket starts it, inside the unit's hardening: a run works, its
    file and output come back, and SIGTERM ends it all."""
    require_serve()
    argv = shlex.split(one(unit(SERVICE), "Service", "ExecStart"))
    wrapper = strict_namespace(SERVICE)

    def argv_of(state, uid_range):
        os.makedirs(state, mode=0o700)
        a = [VIGIL if x == "/usr/bin/vigil" else state if x == "/var/lib/vigil-serve" else
             EXAMPLE_CONF if x == "/etc/vigil/serve.conf" else x for x in argv]
        return wrapper(state) + a + ["--uid-range", uid_range]
    # /run: a parent PrivateTmp does not hide, as /var/lib is for systemd
    d = Daemon(activated=True, parent="/run", argv_of=argv_of)
    try:
        run = d.client().submit(["python3", "-c", "open('out.txt', 'w').write('hardened');"
                                 "print('ran')"], policy="python")
        assert run.wait(WAIT_S).state == "finished", (run.info, d.stderr())
        assert run.status == "ok" and run.stdout == b"ran\n", (run.info, run.stderr)
        assert run.file("out.txt") == b"hardened"
        assert run.result().limits, run.result()
    finally:
        stop_and_check_kept(d)


def stop_and_check_kept(d):
    """stop_and_check, and the socket the daemon was handed still there:
    it did not make it, so it did not unlink it."""
    code = d.stop()
    kept = os.path.exists(d.sock)
    stop_and_check(d)
    assert code == 0 and kept, (code, kept, d.stderr())


def test_a_killed_daemon_takes_its_runs_with_it():
    """KillMode=mixed signals the daemon alone and SIGKILLs the rest of the
    group only after TimeoutStopSec, and Restart=on-failure waits for the
    group to empty: so a daemon that dies (SIGKILL, a crash) must take its
    runs' vigils and candidates with it at once, or they would hold the
    restart up to 90 s."""
    require_serve()
    d = Daemon()
    try:
        run = d.client().submit(["sleep", "120"])
        deadline = time.monotonic() + WAIT_S
        while run.refresh().state != "running" or len(d.ours()) < 2:
            assert time.monotonic() < deadline, (run.info, d.ours())
            time.sleep(0.05)
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        assert d.left()["processes"] == [], d.left()   # left() waits up to 5 s
    finally:
        d.stop()
        d.remove()


def k8s_docs(path):
    with open(path, encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


def by_kind(docs):
    return {doc["kind"]: doc for doc in docs}


def test_kubernetes_manifests_parse_and_keep_the_node_out():
    files = sorted(glob.glob(os.path.join(K8S, "*.yaml")))
    assert SERVE_YAML in files, files
    for path in files:
        for doc in k8s_docs(path):
            assert doc["apiVersion"] and doc["kind"] and doc["metadata"]["name"], (path, doc)
            spec = doc.get("spec", {}).get("template", {}).get("spec", {})
            for vol in spec.get("volumes", []):
                assert "hostPath" not in vol, (path, vol)   # nothing of the node's files
            for host in ("hostPID", "hostNetwork", "hostIPC"):
                assert not spec.get(host), (path, host)
    kinds = by_kind(k8s_docs(SERVE_YAML))
    assert set(kinds) == {"ConfigMap", "PersistentVolumeClaim", "Deployment", "Service"}
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert kinds["Deployment"]["spec"]["replicas"] == 1     # one daemon per state dir
    (c,) = pod["containers"]
    sc = c["securityContext"]
    assert sc["privileged"] is True and sc["seccompProfile"] == {"type": "Unconfined"}
    assert sc["appArmorProfile"] == {"type": "Unconfined"}
    assert "tcp:0.0.0.0:8080" in c["args"]
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    assert mounts["/etc/vigil/serve.conf"]["subPath"] == "serve.conf"
    claim = {v["name"]: v for v in pod["volumes"]}[mounts["/var/lib/vigil-serve"]["name"]]
    assert claim["persistentVolumeClaim"]["claimName"] == \
        kinds["PersistentVolumeClaim"]["metadata"]["name"]
    assert kinds["Service"]["spec"]["ports"][0]["targetPort"] == c["ports"][0]["name"]


def serve_flags():
    r = subprocess.run([VIGIL, "serve", "--help"], capture_output=True, text=True, timeout=20)
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", r.stdout))


@pytest.mark.skipif(not serve_available(), reason="this vigil has no `serve` yet")
def test_kubernetes_args_and_unit_flags_are_vigil_serves():
    flags = serve_flags()
    assert "--listen" in flags and "--state" in flags, flags
    pod = by_kind(k8s_docs(SERVE_YAML))["Deployment"]["spec"]["template"]["spec"]
    given = {a for a in pod["containers"][0]["args"] if a.startswith("--")}
    assert given <= flags, given - flags
    exec_start = shlex.split(one(unit(SERVICE), "Service", "ExecStart"))
    assert {a for a in exec_start if a.startswith("--")} <= flags


@pytest.mark.parametrize("which", ["debian", "kubernetes"])
def test_shipped_configs_are_accepted(which, tmp_path):
    """debian/serve.conf (all comments) and the ConfigMap's serve.conf
    are configs the daemon starts with; a config with a mistake is not
    (so starting means accepting)."""
    require_serve()
    if which == "debian":
        conf = EXAMPLE_CONF
    else:
        conf = str(tmp_path / "serve.conf")
        with open(conf, "w", encoding="utf-8") as f:
            f.write(by_kind(k8s_docs(SERVE_YAML))["ConfigMap"]["data"]["serve.conf"])
    d = Daemon("--config", conf)
    try:
        assert d.client().version()["api"] == 1
    finally:
        stop_and_check(d)
    with open(conf, encoding="utf-8") as f:
        broken = f.read() + "\nquota colour blue\n"
    (tmp_path / "broken.conf").write_text(broken)
    with pytest.raises(AssertionError, match="exited"):
        Daemon("--config", str(tmp_path / "broken.conf"))


@pytest.mark.soak  # builds the whole Debian package (minutes): an install test
@pytest.mark.skipif(not shutil.which("dpkg-buildpackage") or not shutil.which("lintian"),
                    reason="dpkg-dev, debhelper and lintian come with scripts/install-deps.sh test")
def test_debian_package_installs_the_service(tmp_path):
    """The package built from the tree has the two units and the example
    config (a conffile), depends on the library `vigil serve` loads, its
    maintainer scripts enable and start the socket, lintian is clean, and
    the installed units pass systemd-analyze verify with the packaged
    binary."""
    from test_install import copy_source
    src = tmp_path / "vigil-src"
    copy_source(str(src))
    b = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=str(src),
                       capture_output=True, text=True, timeout=900)
    assert b.returncode == 0, b.stdout[-3000:] + b.stderr[-3000:]
    (deb,) = glob.glob(str(tmp_path / "vigil_*_amd64.deb"))
    lint = subprocess.run(["lintian", "--fail-on", "error,warning", deb],
                          capture_output=True, text=True, timeout=600)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True).stdout
    for path in ("./lib/systemd/system/vigil-serve.service",
                 "./lib/systemd/system/vigil-serve.socket", "./etc/vigil/serve.conf"):
        assert path in listing, path
    ctrl = tmp_path / "ctrl"
    subprocess.run(["dpkg-deb", "-e", deb, str(ctrl)], check=True)
    assert (ctrl / "conffiles").read_text().split() == ["/etc/vigil/serve.conf"]
    postinst = (ctrl / "postinst").read_text()
    assert "enable 'vigil-serve.socket'" in postinst and "vigil-serve.socket'" in postinst
    depends = subprocess.run(["dpkg-deb", "-f", deb, "Depends"], capture_output=True,
                             text=True).stdout
    assert "libmicrohttpd12" in depends, depends
    tree = tmp_path / "tree"
    subprocess.run(["dpkg-deb", "-x", deb, str(tree)], check=True)
    units = tree / "lib/systemd/system"
    assert (units / "vigil-serve.socket").read_text() == open(SOCKET).read()
    with open(tree / "etc/vigil/serve.conf") as f:
        assert f.read() == open(EXAMPLE_CONF).read()
    service = (units / "vigil-serve.service").read_text()
    assert service == open(SERVICE).read()
    if shutil.which("systemd-analyze"):
        (tmp_path / "verify").mkdir()
        r = verify(tmp_path / "verify", service, str(tree / "usr/bin/vigil"),
                   str(units / "vigil-serve.socket"))
        assert r.returncode == 0 and not (r.stdout + r.stderr).strip(), r.stdout + r.stderr
