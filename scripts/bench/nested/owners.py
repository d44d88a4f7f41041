#!/usr/bin/env python3
"""Owners for the nested benchmark: each nests two pets (an array of objects) and a vet (a to-one
object shared by every 50th owner), one JSON object a line.

    owners.py N OUT.ndjson             # N owners
    owners.py N OUT.ndjson --rejects   # the same, but 1 owner in 1,000 nests a pet whose id is
                                       # not a number (rejected with its location)
"""
import json
import sys

count, path = int(sys.argv[1]), sys.argv[2]
rejects = "--rejects" in sys.argv[3:]
with open(path, "w") as f:
    for i in range(1, count + 1):
        pets = [{"id": 2 * i, "name": f"pet {2 * i}"}, {"id": 2 * i + 1, "name": f"pet {2 * i + 1}"}]
        if rejects and i % 1000 == 500:
            pets[1]["id"] = f"p{2 * i + 1}"
        f.write(json.dumps({"id": i, "name": f"owner {i}", "vet": {"id": i % 50 + 1, "name": f"vet {i % 50 + 1}"},
                            "pets": pets}) + "\n")
