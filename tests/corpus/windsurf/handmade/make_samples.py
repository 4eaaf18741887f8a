"""Writes the hand-made Windsurf trajectories (tests/corpus/PROVENANCE.md): python make_samples.py CASCADE_DIR.

Encrypted files are indistinguishable from random bytes, so two stand-ins are seeded random
bytes; one is plain protobuf-like bytes (low entropy) for the "not decoded" case; an empty
trajectory and a file of another kind are there to be left out.
"""

import os
import random
import sys

base = sys.argv[1]
os.makedirs(base, exist_ok=True)
rng = random.Random(29)
files = {
    "3f6c2a1e-8b4d-4e7a-9c15-2d7e9b0a4c61.pb": rng.randbytes(48_213),
    "a91d0c57-62f3-4b8e-a0d4-7c3e15f28b90.pb": rng.randbytes(7_904),
    "5e27b8c4-0a19-4d6f-b3e2-9f81c6d047ab.pb": (
        b"\x0a\x24" + b"5e27b8c4-0a19-4d6f-b3e2-9f81c6d047ab" + b"\x12\x05gamma"
    )
    * 40,
    "0d4e9f21-7c8a-4b35-9e60-a1f2c3d4e5f6.pb": b"",
    "user_settings.json": b"{}\n",
}
for name, data in files.items():
    with open(os.path.join(base, name), "wb") as fh:
        fh.write(data)
