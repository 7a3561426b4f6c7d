#!/bin/sh
# recheck_task.sh: the shell candidate of tests/test_recheck.py: the same
# attempts as recheck_task.py (a system file, a secret probed, a directory
# and files made, renamed and removed in the workdir, a program run), each
# made whatever the one before it was answered.
read -r name < /etc/hostname || echo "hostname refused"
[ -e /root/.ssh/id_rsa ] || echo "no key"
mkdir out || echo "mkdir refused"
echo a > out/a.txt || echo "write refused"
mv out/a.txt out/b.txt || echo "rename refused"
rm -f out/b.txt || echo "unlink refused"
cat /etc/hostname > /dev/null || echo "cat refused"
echo done
