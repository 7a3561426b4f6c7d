"""A small task of the kind `vigil learn` is for (tests/test_learn.py):
read an input from a data directory bound into the sandbox, write a result
in the workdir, run a tool the default policy does not allow (sha256sum),
and report to a listener at HOST (outside the sandbox).  Optional extras
make the variants that a learned policy must refuse: --ssh PATH reads a
key, --port2 PORT connects to a second listener on HOST.

usage: learn_task.py DATA_DIR HOST PORT [--ssh PATH] [--port2 PORT]"""
import socket
import subprocess
import sys


def read_input(data_dir):
    with open(f"{data_dir}/input.txt") as f:
        return f.read()


def digest(text):
    with open("out.txt", "w") as f:
        f.write(text.upper())
    return subprocess.run(["/usr/bin/sha256sum", "out.txt"], capture_output=True,
                          text=True, check=True).stdout.split()[0]


def report(host, port, what):
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(what.encode())


def main(argv):
    data_dir, host, port = argv[1], argv[2], int(argv[3])
    extras = dict(zip(argv[4::2], argv[5::2]))
    text = read_input(data_dir)
    try:
        report(host, port, digest(text))
    except OSError as e:  # a dry run of a policy without network goes on
        print("report refused:", e.strerror)
    if "--ssh" in extras:
        try:
            with open(extras["--ssh"]) as f:
                print("key:", f.read())
        except OSError as e:
            print("key refused:", e.strerror)
    if "--port2" in extras:
        try:
            report(host, int(extras["--port2"]), "second")
        except OSError as e:
            print("port2 refused:", e.strerror)
    print("done")


if __name__ == "__main__":
    main(sys.argv)
