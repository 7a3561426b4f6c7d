"""storm_denied.py [N]: a refusal storm, as a program stuck in a loop of
refused calls makes one: unlink a file and open another where the policy
refuses both (outside the trees default.policy kills for), N times or,
without N, until vigil stops it.  Prints how many rounds it made (two
refused calls each)."""
import os
import sys

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 0
done = 0
while not rounds or done < rounds:
    try:
        os.unlink(f"/opt/vigil-storm-{done}")
    except OSError:
        pass
    try:
        open("/srv/vigil-storm").close()
    except OSError:
        pass
    done += 1
print("rounds", done)
