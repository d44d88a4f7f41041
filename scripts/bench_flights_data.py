#!/usr/bin/env python3
"""Synthetic nycflights13-like data for scripts/bench_postgres_network.sh.

    bench_flights_data.py ROWS OUT_DIR

Writes airlines.csv (16), airports.csv (1,458), planes.csv (3,322) and flights.csv (ROWS rows)
into OUT_DIR. Each flight names its carrier, origin, dest and tailnum by text key; about 1 in
100 names a tailnum that no plane has (rejected on import), and about 1 in 50 has no tailnum
(a null relationship); flights leave from 3 airports for 105. Deterministic: the same ROWS gives the same files.
"""
import csv
import os
import random
import sys


def main():
    rows = int(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(13)
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    carriers = ["9E", "AA", "AS", "B6", "DL", "EV", "F9", "FL", "HA", "MQ", "OO", "UA", "US", "VX", "WN", "YV"]
    with open(os.path.join(out, "airlines.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["carrier", "name"])
        for c in carriers:
            w.writerow([c, f"{c} Airlines Inc."])
    faas = []
    seen = set()
    while len(faas) < 1458:
        code = "".join(rng.choice(letters) for _ in range(3))
        if code not in seen:
            seen.add(code)
            faas.append(code)
    with open(os.path.join(out, "airports.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["faa", "name", "lat", "lon", "alt"])
        for code in faas:
            w.writerow([code, f"{code} Regional Airport", round(rng.uniform(20, 65), 6),
                        round(rng.uniform(-170, -60), 6), rng.randint(0, 9000)])
    tailnums = []
    seen = set()
    while len(tailnums) < 3322:
        code = "N%d%s" % (rng.randint(100, 999), "".join(rng.choice(letters) for _ in range(2)))
        if code not in seen:
            seen.add(code)
            tailnums.append(code)
    with open(os.path.join(out, "planes.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["tailnum", "year", "manufacturer", "seats"])
        for code in tailnums:
            w.writerow([code, rng.randint(1960, 2013), rng.choice(["BOEING", "AIRBUS", "EMBRAER", "BOMBARDIER"]),
                        rng.choice([55, 80, 140, 178, 200, 290])])
    with open(os.path.join(out, "flights.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["year", "month", "day", "dep_time", "arr_time", "dep_delay", "arr_delay", "carrier",
                    "flight", "tailnum", "origin", "dest", "air_time", "distance", "time_hour"])
        for i in range(rows):
            month = 1 + i * 12 // rows
            day = 1 + rng.randrange(28)
            dep = rng.randint(500, 2359)
            hour = dep // 100
            r = rng.random()
            if r < 0.01:
                tail = "X%05d" % rng.randrange(100000)  # no such plane: rejected
            elif r < 0.03:
                tail = ""  # no plane: null
            else:
                tail = tailnums[int(rng.paretovariate(1.2)) % len(tailnums)]
            w.writerow([2013, month, day, dep, rng.randint(0, 2359), rng.randint(-20, 300), rng.randint(-60, 300),
                        rng.choice(carriers), rng.randint(1, 6000), tail,
                        faas[rng.randrange(3)], faas[rng.randrange(105)], rng.randint(20, 700), rng.randint(80, 5000),
                        "2013-%02d-%02dT%02d:00:00Z" % (month, day, hour % 24)])


if __name__ == "__main__":
    main()
