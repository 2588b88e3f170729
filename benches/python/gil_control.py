#!/usr/bin/env python3
"""What CPython's GIL allows on this machine, with no lance_csr in it: a call that releases the
GIL for about as long as a point lookup runs in Rust (`hashlib.sha256` of 16 kB releases it
while hashing), plus `--held` rounds of Python work done with the GIL held (building a small
dict, about 0.15 us each), from 1, 2 and 4 threads.

    python3 benches/python/gil_control.py --held 0     # the released part alone
    python3 benches/python/gil_control.py --held 20    # plus ~3 us held, as a lookup's Python side

Compare its ratios with `point_lookup.py`'s: threads only add throughput while the held part
is a small share of each call.
"""

import argparse
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from point_lookup import ratio  # noqa: E402

DATA = b"x" * 16000


def call(i, held):
    hashlib.sha256(DATA).digest()
    for _ in range(held):
        {"firstName": "Ann" + str(i), "lastName": "Smith", "gender": "female"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--held", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    start = time.perf_counter()
    for i in range(10000):
        call(i, a.held)
    print(f"one call: {(time.perf_counter() - start) / 10000 * 1e6:.1f} us")
    # The harness point_lookup.py measures threads with, so the ratios compare.
    work = lambda i: call(i, a.held)  # noqa: E731
    inputs = list(range(1000))
    for threads in (2, 4):
        one, many = ratio(work, inputs, a.seconds, threads, a.rounds)
        print(f"{threads} threads: {many:,.0f} calls/s against {one:,.0f} on 1, {many / one:.2f}x")


if __name__ == "__main__":
    main()
