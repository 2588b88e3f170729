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
import threading
import time

DATA = b"x" * 16000


def call(i, held):
    hashlib.sha256(DATA).digest()
    for _ in range(held):
        {"firstName": "Ann" + str(i), "lastName": "Smith", "gender": "female"}


def rate(threads, held, seconds):
    counts = [0] * threads

    def work(k):
        end, n = time.perf_counter() + seconds, 0
        while time.perf_counter() < end:
            call(n, held)
            n += 1
        counts[k] = n

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts) / seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--held", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=3)
    a = ap.parse_args()
    start = time.perf_counter()
    for i in range(10000):
        call(i, a.held)
    print(f"one call: {(time.perf_counter() - start) / 10000 * 1e6:.1f} us")
    one = rate(1, a.held, a.seconds)
    for threads in (1, 2, 4):
        r = one if threads == 1 else rate(threads, a.held, a.seconds)
        print(f"{threads} threads: {r:,.0f} calls/s, {r / one:.2f}x")


if __name__ == "__main__":
    main()
