#!/usr/bin/env python3
"""Writes N synthetic customer records as CSV, NDJSON and a JSON array, for scripts/bench.sh.

    python3 scripts/bench_data.py N OUT_DIR

Creates OUT_DIR/customers-N.csv, OUT_DIR/customers-N.ndjson and OUT_DIR/customers-N.json
(deterministic: the same N gives the same bytes). Each file is written under a temporary name
and renamed when complete, so an interrupted run never leaves a truncated file behind.

Columns: id (1..N, unique), uuid, email, name, age, balance, created_at, active, notes.
Values are already in the form ferry stores (dates `YYYY-MM-DDTHH:MM:SS.sssZ`, lowercase
UUIDs, booleans 1/0 in CSV, decimals with two places), so `sqlite3 .import` of the CSV stores
the same text ferry does. Notes contain commas, doubled quotes and (1 in 4) newlines.

Python 3 standard library only; about 1 µs per record per format.
"""

import json
import os
import random
import sys

SEED = 1_000_003
CHUNK = 20_000

FIRST = ["Ana", "Björn", "Chloé", "Daniel", "Émile", "Fatima", "Grace", "Hana", "Ivan", "José",
         "Kiri", "Liam", "Łukasz", "Mei", "Noah", "Olivia", "Priya", "Renée", "Søren", "Zoë"]
LAST = ["Ångström", "Brown", "Chen", "Dubois", "García", "Kowalski", "Müller", "Ngata", "Núñez",
        "O'Connor", "Patel", "Rossi", "Smith", "Tanaka", "Walker", "Żółć"]
NOTES = [
    "Prefers email",
    "Call after 5pm, not before",
    'Asked for "express" shipping, twice',
    "VIP, since 2019; handle with care",
    "Moved house.\nNew address confirmed by phone.",
    'Said "no" to the newsletter',
    "Wholesale account, invoices monthly",
    "Line one\nline two, with a comma",
]


def csv_field(text):
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def main(argv):
    if len(argv) != 3 or not argv[1].isdigit():
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    count = int(argv[1])
    out_dir = argv[2]
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, f"customers-{count}")

    names = [f"{first} {last}" for first in FIRST for last in LAST]           # 320
    names_csv = [csv_field(n) for n in names]
    names_json = [json.dumps(n, ensure_ascii=False) for n in names]
    notes_csv = [csv_field(n) for n in NOTES]
    notes_json = [json.dumps(n, ensure_ascii=False) for n in NOTES]
    # 1024 days from 2021-01-01, as text.
    days = []
    year, month, day = 2021, 1, 1
    month_days = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    for _ in range(1024):
        days.append(f"{year:04d}-{month:02d}-{day:02d}")
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        day += 1
        if day > month_days[month - 1] + (1 if month == 2 and leap else 0):
            day, month = 1, month + 1
            if month > 12:
                month, year = 1, year + 1
    variant = "89ab"

    rng = random.Random(SEED)
    bits = rng.getrandbits
    paths = [base + ext for ext in (".csv", ".ndjson", ".json")]
    temps = [p + ".tmp" for p in paths]
    csv_file, ndjson_file, json_file = (open(t, "w", encoding="utf-8", newline="") for t in temps)
    try:
        csv_file.write("id,uuid,email,name,age,balance,created_at,active,notes\n")
        json_file.write("[\n")
        first_json = True
        for start in range(1, count + 1, CHUNK):
            csv_rows = []
            json_rows = []
            for i in range(start, min(start + CHUNK, count + 1)):
                r = bits(64)
                h = f"{bits(128):032x}"
                uuid = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{variant[r & 3]}{h[17:20]}-{h[20:]}"
                n = (r >> 2) % 320
                age = 18 + (r >> 11) % 80
                cents = (r >> 18) % 1_000_000
                balance = f"{cents // 100}.{cents % 100:02d}"
                seconds = (r >> 38) % 86_400
                created = f"{days[(r >> 20) & 1023]}T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000Z"
                active = (r >> 60) & 1 or (r >> 61) & 1        # 3 in 4 active
                note = (r >> 30) & 7
                csv_rows.append(f"{i},{uuid},user{i}@example.com,{names_csv[n]},{age},{balance},{created},{active},{notes_csv[note]}\n")
                json_rows.append(f'{{"id":{i},"uuid":"{uuid}","email":"user{i}@example.com","name":{names_json[n]},"age":{age},'
                                 f'"balance":"{balance}","created_at":"{created}","active":{"true" if active else "false"},"notes":{notes_json[note]}}}')
            csv_file.write("".join(csv_rows))
            ndjson_file.write("\n".join(json_rows) + "\n")
            json_file.write(("" if first_json else ",\n") + ",\n".join(json_rows))
            first_json = False
        json_file.write("\n]\n")
    finally:
        for f in (csv_file, ndjson_file, json_file):
            f.close()
    for temp, path in zip(temps, paths):
        os.replace(temp, path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
