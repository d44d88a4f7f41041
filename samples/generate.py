#!/usr/bin/env python3
"""Generates the Shop sample data in samples/data/ (deterministic: same bytes on every run).

    python3 samples/generate.py            # writes samples/data/*
    python3 samples/generate.py --check    # regenerates into a temp dir and compares

Python 3 standard library only, a seeded RNG, no network, no clock. The generated files are
committed, so the quick start does not need Python; rerun this only to change the data.

Files (for pipelines/import-shop.yml and the Shop model in samples/models/Shop):

  customers.csv       200 records  customer_id,email,full_name,phone,age,balance,signed_up,active,notes,address
  products.json        50 records  {"meta": {...}, "data": {"products": [...]}}  (JSON pointer /data/products)
  orders.ndjson       500 records  number, placed_at, status, total, customer_id
  order_items.csv   1473 records  order_number,sku,quantity,unit_price

The CSV shows what real exports contain: quoted fields with commas ("Smith, Jr."), doubled
quotes (Prefers ""express"" shipping), a note with an embedded newline, unicode names
("Zoë Ångström"), e-mails with stray spaces (the job trims them), booleans as yes/no (and a
few Y/N), ISO-8601 dates like 2024-03-01T10:15:00Z, empty optional fields, and an address
column holding JSON.

Deliberate bad records (the job's max_rejects budgets allow for exactly these).
Record numbers count data records from 1 (the CSV header is not a record); line numbers
are 1-based physical lines of the file (CSV records with embedded newlines span two lines).

  customers.csv    record  57  email "jane.doe(at)example.com"   rejected: email does not match the pattern
  customers.csv    record 112  age "abc"                         rejected: age is not an int16
  customers.csv    record 158  customer_id 1010 again            rejected: duplicate id (unique constraint; on_conflict: error)
  orders.ndjson    record 123  customer_id 9999 (no such customer) rejected: customer not found by id
  orders.ndjson    record 245  status "refunded"                 rejected: status does not match the pattern
  orders.ndjson    record 377  a truncated JSON line             rejected: malformed JSON
  order_items.csv  record 888  quantity 0 (line 889)            rejected: quantity below min 1

Nothing else is bad: rejected customers have no orders, rejected orders have no items, so no
reject cascades into a later step. Expected outcome of pipelines/import-shop.yml on a new store:

  Customer   200 read, 197 inserted, 3 rejected
  Product     50 read,  50 inserted, 0 rejected
  Order      500 read, 497 inserted, 3 rejected
  OrderItem 1473 read, 1472 inserted, 1 rejected

(The customers.csv bad records are on lines 59, 117 and 164; the run prints these positions.)
"""

import csv
import io
import json
import os
import random
import sys
import tempfile
import unicodedata
import uuid
from datetime import datetime, timedelta, timezone

SEED = 20240301
CUSTOMERS = 200
PRODUCTS = 50
ORDERS = 500

# Positions (1-based data record numbers) of the deliberate bad records.
BAD_EMAIL_RECORD = 57
BAD_AGE_RECORD = 112
DUPLICATE_ID_RECORD = 158
DUPLICATE_OF_ID = 1010
MISSING_CUSTOMER_RECORD = 123
MISSING_CUSTOMER_ID = 9999
BAD_STATUS_RECORD = 245
MALFORMED_RECORD = 377

FIRST_NAMES = [
    "Ana", "Aroha", "Björn", "Chloé", "Daniel", "Émile", "Fatima", "Grace", "Hana", "Ivan",
    "José", "Kiri", "Liam", "Łukasz", "Mei", "Mia", "Noah", "Olivia", "Priya", "Renée",
    "Siobhán", "Søren", "Tane", "Wiremu", "Yuki", "Zoë", "Ngaio", "Oscar", "Ingrid", "Rahul",
]
LAST_NAMES = [
    "Ångström", "Brown", "Chen", "Dubois", "García", "Håkansson", "Kowalski", "Müller", "Ngata",
    "Núñez", "O'Connor", "Patel", "Rossi", "Smith", "Tanaka", "Te Whata", "Walker", "Wilson",
    "Żółć", "Ó Briain", "Nguyễn", "Kierkegaard", "Taylor", "Singh",
]
DOMAINS = ["example.com", "example.org", "mail.example.net", "example.co.nz"]
CITIES = [
    # city, postcode, country, streets
    ("Auckland", "1010", "NZ", ["Queen St", "Ponsonby Rd"]), ("Wellington", "6011", "NZ", ["Cuba St", "Lambton Quay"]),
    ("Christchurch", "8011", "NZ", ["Colombo St"]), ("Sydney", "2000", "AU", ["George St", "Pitt St"]),
    ("Melbourne", "3000", "AU", ["Flinders Lane"]), ("København", "1050", "DK", ["Strøget", "Nørregade"]),
    ("Malmö", "211 22", "SE", ["Södergatan"]), ("Kraków", "31-001", "PL", ["Floriańska"]),
    ("Zürich", "8001", "CH", ["Bahnhofstrasse"]),
]
NOTES = [
    'Prefers "express" shipping',
    "Call after 5pm, not before",
    "VIP, since 2019; handle with care",
    "Moved from Auckland.\nNew address confirmed by phone.",
    "Asked about gift wrapping",
    "Wholesale account, invoices monthly",
]

PRODUCT_KINDS = [
    # sku prefix, name variants, noun, tags, price range (cents), weight range (grams; None = no weight)
    ("COF", ["Ethiopia Yirgacheffe", "Colombia Huila", "Kenya AA", "Guatemala Antigua", "Sumatra Mandheling"],
     "coffee beans 250 g", ["coffee", "beans"], (1200, 3400), (250, 260)),
    ("TEA", ["Darjeeling", "Assam", "Yunnan", "Nilgiri", "Sencha"], "loose-leaf tea 100 g", ["tea"], (800, 2600), (100, 110)),
    ("MUG", ["Stoneware", "Porcelain", "Enamel", "Double-wall glass"], "mug 350 ml", ["kitchen", "ceramic"], (1500, 3900), (300, 450)),
    ("GRN", ["Hand", "Conical burr", "Flat burr"], "grinder", ["kitchen", "appliance"], (4900, 24900), (900, 3200)),
    ("KET", ["Gooseneck", "Stovetop", "Electric gooseneck"], "kettle", ["kitchen", "appliance"], (3900, 12900), (700, 1400)),
    ("GFT", ["Gift card"], "", None, (2000, 10000), None),
]
STATUSES = ["pending", "paid", "shipped", "cancelled"]
STATUS_WEIGHTS = [15, 20, 55, 10]

EPOCH = datetime(2022, 1, 1, tzinfo=timezone.utc)


def iso(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def money(cents):
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def ascii_fold(text):
    folded = unicodedata.normalize("NFKD", text.replace("Ł", "L").replace("ł", "l").replace("ø", "o"))
    return "".join(c for c in folded if c.isascii() and (c.isalnum())).lower()


def make_uuid(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def customers(rng):
    """Returns (rows, good customer records) for customers.csv."""
    rows = []
    good = []
    used_emails = set()
    for index in range(1, CUSTOMERS + 1):
        customer_id = 1000 + index
        if index == 1:
            first, last = "Zoë", "Ångström"
        else:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        name = f"{first} {last}"
        if index in (5, 77):
            name += ", Jr."                       # a comma inside a quoted field
        local = f"{ascii_fold(first)}.{ascii_fold(last)}"
        email = f"{local}@{rng.choice(DOMAINS)}"
        while email in used_emails:
            email = f"{local}{rng.randint(2, 99)}@{email.split('@')[1]}"
        used_emails.add(email)
        if index % 29 == 0:
            email = f"  {email} "                 # stray spaces: the job trims them
        phone = "" if rng.random() < 0.3 else f"+64 2{rng.randint(0, 9)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"
        age = "" if rng.random() < 0.1 else str(rng.randint(18, 90))
        balance = money(rng.randint(-2000, 50000) if rng.random() < 0.1 else rng.randint(0, 50000))
        signed_up = EPOCH + timedelta(minutes=rng.randint(0, 2 * 365 * 24 * 60))
        if index == 1:
            signed_up = datetime(2024, 3, 1, 10, 15, tzinfo=timezone.utc)
        active = "yes" if rng.random() < 0.85 else "no"
        if index in (31, 64):
            active = "Y"
        if index == 99:
            active = "N"
        if index == 3:
            notes = NOTES[3]                      # an embedded newline, near the top
        else:
            notes = rng.choice(NOTES) if rng.random() < 0.25 else ""
        if rng.random() < 0.6:
            city, postcode, country, streets = rng.choice(CITIES)
            address = json.dumps({"street": f"{rng.randint(1, 300)} {rng.choice(streets)}", "city": city,
                                  "postcode": postcode, "country": country}, ensure_ascii=False)
        else:
            address = ""

        bad = None
        if index == BAD_EMAIL_RECORD:
            email, bad = "jane.doe(at)example.com", "email does not match the pattern"
        elif index == BAD_AGE_RECORD:
            age, bad = "abc", "age is not an int16"
        elif index == DUPLICATE_ID_RECORD:
            customer_id, bad = DUPLICATE_OF_ID, f"duplicate id {DUPLICATE_OF_ID}"
        rows.append([customer_id, email, name, phone, age, balance, iso(signed_up), active, notes, address])
        if bad is None:
            good.append({"id": customer_id, "signed_up": signed_up})
    return rows, good


def products(rng):
    items = []
    per_kind = {}
    for index in range(PRODUCTS):
        prefix, variants, noun, tags, (low, high), weight = PRODUCT_KINDS[index % len(PRODUCT_KINDS)]
        per_kind[prefix] = per_kind.get(prefix, 0) + 1
        sku = f"{prefix}-{per_kind[prefix] * 10 + rng.randint(0, 9):04d}"
        price = rng.randint(low // 100, high // 100) * 100 - (10 if rng.random() < 0.5 else 0)   # 24.00 or 23.90
        if prefix == "GFT":
            price = rng.choice([2000, 5000, 10000])
            title = f"Gift card ${price // 100}"
        else:
            title = f"{variants[per_kind[prefix] % len(variants)]} {noun}"
            if per_kind[prefix] > len(variants):
                title += f" ({rng.choice(['limited', 'café edition', 'gift box', 'refill'])})"
        product = {
            "sku": sku,
            "title": title,
            "price": money(price),
            "weight_kg": None if weight is None else round(rng.randint(*weight) / 1000, 3),
            "tags": None if tags is None else sorted(set(tags + ([rng.choice(["new", "sale", "bestseller"])] if rng.random() < 0.4 else []))),
            "uuid": make_uuid(rng),
        }
        items.append(product)
    return items


def orders_and_items(rng, good_customers, catalog):
    """Returns (order lines for NDJSON, item rows, line number of the quantity-0 item)."""
    lines = []
    items = []
    bad_item_line = None
    for index in range(1, ORDERS + 1):
        number = f"SO-{100000 + index:06d}"
        customer = rng.choice(good_customers)
        placed = customer["signed_up"] + timedelta(minutes=rng.randint(60, 400 * 24 * 60))
        status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
        count = rng.choices([1, 2, 3, 4, 5], [20, 20, 25, 20, 15])[0]
        chosen = rng.sample(catalog, count)
        order_items = []
        total = 0
        for product in chosen:
            quantity = rng.choices([1, 2, 3, 4, 6, 12], [50, 20, 12, 8, 6, 4])[0]
            cents = int(product["price"].replace(".", ""))
            if rng.random() < 0.1:
                cents = cents * 9 // 10                  # a 10% discount
            total += quantity * cents
            order_items.append([number, product["sku"], quantity, money(cents)])
        record = {"number": number, "placed_at": iso(placed), "status": status, "total": money(total),
                  "customer_id": customer["id"]}
        good = True
        if index == MISSING_CUSTOMER_RECORD:
            record["customer_id"], good = MISSING_CUSTOMER_ID, False
        elif index == BAD_STATUS_RECORD:
            record["status"], good = "refunded", False
        line = json.dumps(record, ensure_ascii=False)
        if index == MALFORMED_RECORD:
            line, good = line[:-1].rstrip("0123456789").rstrip(), False   # cut off: no value, no closing brace
        lines.append(line)
        if not good:
            continue                                     # rejected orders have no items
        items.extend(order_items)
        if index == 301:
            spare = next(p for p in catalog if p["sku"] not in {row[1] for row in order_items})
            items.append([number, spare["sku"], 0, spare["price"]])   # quantity 0: below min 1
            bad_item_line = len(items) + 1               # + the header line
    return lines, items, bad_item_line


def write_csv(path, header, rows):
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    with open(path, "w", encoding="utf-8", newline="") as file:
        file.write(buffer.getvalue())


def csv_record_lines(path):
    """1-based line number where each data record of a CSV file starts."""
    starts = []
    with open(path, encoding="utf-8", newline="") as file:
        line = 1
        reader = csv.reader(file)
        next(reader)
        line = reader.line_num + 1
        for _ in reader:
            starts.append(line)
            line = reader.line_num + 1
    return starts


def generate(out_dir):
    rng = random.Random(SEED)
    os.makedirs(out_dir, exist_ok=True)

    customer_rows, good_customers = customers(rng)
    write_csv(os.path.join(out_dir, "customers.csv"),
              ["customer_id", "email", "full_name", "phone", "age", "balance", "signed_up", "active", "notes", "address"],
              customer_rows)

    catalog = products(rng)
    document = {
        "meta": {"source": "catalog-export", "exported_at": "2024-06-30T23:00:00Z", "currency": "NZD", "count": len(catalog)},
        "data": {"products": catalog},
    }
    with open(os.path.join(out_dir, "products.json"), "w", encoding="utf-8", newline="") as file:
        file.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")

    order_lines, item_rows, bad_item_line = orders_and_items(rng, good_customers, catalog)
    with open(os.path.join(out_dir, "orders.ndjson"), "w", encoding="utf-8", newline="") as file:
        file.write("\n".join(order_lines) + "\n")
    write_csv(os.path.join(out_dir, "order_items.csv"), ["order_number", "sku", "quantity", "unit_price"], item_rows)

    starts = csv_record_lines(os.path.join(out_dir, "customers.csv"))
    return {
        "customers": len(customer_rows),
        "customer_bad_lines": {r: starts[r - 1] for r in (BAD_EMAIL_RECORD, BAD_AGE_RECORD, DUPLICATE_ID_RECORD)},
        "products": len(catalog),
        "orders": len(order_lines),
        "items": len(item_rows),
        "bad_item_record": bad_item_line - 1,
        "bad_item_line": bad_item_line,
    }


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    data_dir = os.path.join(here, "data")
    if argv[1:] == ["--check"]:
        with tempfile.TemporaryDirectory() as temp:
            generate(temp)
            different = [name for name in sorted(os.listdir(temp))
                         if open(os.path.join(temp, name), "rb").read() != open(os.path.join(data_dir, name), "rb").read()]
        if different:
            print("samples/data differs from the generator's output: " + ", ".join(different), file=sys.stderr)
            return 1
        print("samples/data matches the generator")
        return 0
    if argv[1:]:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    summary = generate(data_dir)
    print(f"customers.csv    {summary['customers']} records; bad records (record: line) {summary['customer_bad_lines']}")
    print(f"products.json    {summary['products']} records")
    print(f"orders.ndjson    {summary['orders']} records; bad records {MISSING_CUSTOMER_RECORD}, {BAD_STATUS_RECORD}, {MALFORMED_RECORD} (line = record)")
    print(f"order_items.csv  {summary['items']} records; quantity 0 at record {summary['bad_item_record']} (line {summary['bad_item_line']})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
