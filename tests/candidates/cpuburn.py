"""Burn about half a second of CPU, then exit 0."""
import time
end = time.process_time() + 0.5
n = 0
while time.process_time() < end:
    n += 1
print("spins", n)
