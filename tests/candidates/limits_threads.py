"""20 threads that each allocate a little: glibc gives each its own malloc
arena and reserves 64 MiB of address space for it, so under an
address-space limit (RLIMIT_AS) of 512M this fails with "can't start new
thread" or MemoryError although it uses only a few MiB of memory."""
import sys
import threading

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20
barrier = threading.Barrier(N + 1)
kept = []


def work(i):
    kept.append([bytes(1000) for _ in range(200)])  # ~200 KiB in this thread's arena
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass    # the main thread could not start them all


threads = [threading.Thread(target=work, args=(i,)) for i in range(N)]
try:
    for t in threads:
        t.start()
except RuntimeError:
    barrier.abort()
    raise
barrier.wait()
for t in threads:
    t.join()
print("threads ok", len(kept))
