"""Allocate (and touch) 1 GiB in one go."""
block = bytearray(1 << 30)
block[::4096] = b"\x01" * len(block[::4096])
print("allocated", len(block))
