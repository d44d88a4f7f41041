import FerryCore
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// References resolved a batch at a time on PostgreSQL (one query per relationship for a
/// read-ahead batch's keys) give exactly the objects and the rejects of SQLite's imports, which
/// resolve each key when met: keys found, missing (rejected, or NULL under `missing: null`),
/// null, absent, keys PostgreSQL's array syntax must escape, integer and text keys, over
/// several read-ahead batches, atomic or committed in batches.
@Suite(
    "PostgreSQL references resolved by batch (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresBatchedReferencesCLITests {
    /// Orders naming a customer by text code, a warehouse by integer number (missing: null),
    /// and a region by a date (an exact type the key's text must be read as).
    static let model = """
        version: "1"
        entities:
          Customer:
            attributes:
              code: {type: string, optional: false, unique: true}
            relationships:
              orders: {destination: Order, to_many: true, inverse: customer}
          Warehouse:
            attributes:
              number: {type: int32, optional: false, unique: true}
            relationships:
              orders: {destination: Order, to_many: true, inverse: warehouse}
          Season:
            attributes:
              start: {type: date, optional: false, unique: true}
            relationships:
              orders: {destination: Order, to_many: true, inverse: season}
          Order:
            attributes:
              number: {type: int64, optional: false, unique: true}
            relationships:
              customer: {destination: Customer, inverse: orders, optional: false}
              warehouse: {destination: Warehouse, inverse: orders, optional: true}
              season: {destination: Season, inverse: orders, optional: true}
        """

    /// The customers' codes: plain ones, and the characters an array literal quotes or escapes.
    static let codes = [
        "c1", "c2", "has,comma", "has\"quote", "has\\backslash", "{braces}", "NULL", "with space", "é✓",
    ]

    /// The parents (kept when already stored), then the orders with `mode` (an `on_conflict:`
    /// or `mode:` line, or nothing).
    static func job(source: String, batch: Int?, mode: String = "") -> String {
        """
        job: orders
        store: {path: "${store}"}
        model: {path: model.yml}
        steps:
          - import: {source: customers.csv, entity: Customer, on_conflict: keep}
          - import: {source: warehouses.csv, entity: Warehouse, on_conflict: keep}
          - import: {source: seasons.csv, entity: Season, on_conflict: keep}
          - import:
              source: \(source)
              entity: Order
        \(mode.isEmpty ? "" : "      \(mode)\n")\
              relationships:
                customer: {field: customer, match: code}
                warehouse: {field: warehouse, match: number, missing: "null"}
                season: {field: season, match: start}
              rejects: ${out}/orders.rejects.ndjson
              max_rejects: 100000
        \(batch.map { "      atomic: false\n      batch_size: \($0)\n" } ?? "")
        """
    }

    /// A CSV field, quoted when it holds a comma or a quote.
    static func field(_ text: String) -> String {
        text.contains(where: { ",\"".contains($0) })
            ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
    }

    /// 5,000 orders over three read-ahead batches: customers found (each code), missing
    /// (`nobody`), empty (a null key, rejected: the relationship is required); warehouses
    /// found, missing (NULL) or empty; seasons found, missing, empty.
    static func orders() -> String {
        var text = "number,customer,warehouse,season\n"
        for n in 1...5_000 {
            let customer = n % 101 == 0 ? "nobody\(n % 7)" : n % 211 == 0 ? "" : codes[n % codes.count]
            let warehouse = n % 13 == 0 ? "99" : n % 17 == 0 ? "" : String(n % 5 + 1)
            let season = n % 29 == 0 ? "2031-01-01" : n % 31 == 0 ? "" : "202\(n % 4)-03-01"
            text += "\(n),\(field(customer)),\(warehouse),\(season)\n"
        }
        return text
    }

    static func write(_ directory: TemporaryDirectory) throws {
        try directory.write("model.yml", Self.model)
        try directory.write("customers.csv", "code\n" + codes.map(field).joined(separator: "\n") + "\n")
        try directory.write("warehouses.csv", "number\n1\n2\n3\n4\n5\n")
        try directory.write("seasons.csv", "start\n2020-03-01\n2021-03-01\n2022-03-01\n2023-03-01\n")
        try directory.write("orders.csv", orders())
        // The same orders as NDJSON (the keys typed: numbers for warehouses).
        var ndjson = ""
        for line in orders().split(separator: "\n").dropFirst() {
            let fields = try #require(parseCSVLine(String(line)))
            let warehouse = fields[2].isEmpty ? "null" : fields[2]
            ndjson +=
                "{\"number\":\(fields[0]),\"customer\":\(jsonString(fields[1])),\"warehouse\":\(warehouse),\"season\":\(fields[3].isEmpty ? "null" : jsonString(fields[3]))}\n"
        }
        try directory.write("orders.ndjson", ndjson)
    }

    static func jsonString(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Splits one line of the CSV ``orders()`` writes.
    static func parseCSVLine(_ line: String) -> [String]? {
        var fields: [String] = []
        var current = ""
        var quoted = false
        var characters = Array(line)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        current.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields.count == 4 ? fields : nil
    }

    /// Every order with the keys of what it names, sorted: from `store` (a path or URL).
    static func orderRows(_ directory: TemporaryDirectory, store: String) throws -> String {
        let result = try runFerry(
            [
                "export", "--store", store, "--entity", "Order", "--format", "csv", "--quiet", "--sort", "number",
                "--fields", "number,customer.code,warehouse.number,season.start",
            ], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result.stderr)")
        return result.stdout
    }

    @Test(
        "text, integer and date keys resolved a batch at a time give SQLite's objects and rejects: found, missing, null, escaped, from CSV and NDJSON, atomic or in batches, inserting, updating and syncing"
    )
    func sameObjectsAndRejectsAsSQLite() throws {
        let directory = TemporaryDirectory()
        try Self.write(directory)
        for source in ["orders.csv", "orders.ndjson"] {
            for batch in [nil, 700] {
                let round = "\(source), batch \(batch.map(String.init) ?? "none")"
                let (url, drop) = try PostgresImportCLITests.freshStore("batchrefs")
                defer { drop() }
                try? FileManager.default.removeItem(atPath: directory.file("sq"))
                // New orders, then the same again updating them, then a sync of them (which runs
                // in one transaction only).
                for mode in ["", "on_conflict: update"] + (batch == nil ? ["mode: sync"] : []) {
                    try directory.write("job.yml", Self.job(source: source, batch: batch, mode: mode))
                    try Self.compare(directory, url: url, round: "\(round), \(mode)")
                }
            }
        }
    }

    /// The foreign keys of the store's `Order` table: name and definition (without the schema).
    static func orderForeignKeys(_ url: String) throws -> [String] {
        let schema = try #require(url.split(separator: "schema=").last.map(String.init))
        let connection = try PostgresConnection(try PostgresTestServer.requireURL())
        defer { connection.close() }
        return try connection.execute(
            """
            SELECT conname || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c
            JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
            WHERE c.contype = 'f' AND n.nspname = $1 AND t.relname = 'Order' ORDER BY 1
            """, [.text(schema)]
        ).rows.map { row in
            guard case .text(let text) = row[0] else { return "" }
            return text.replacingOccurrences(of: schema + ".", with: "")
        }
    }

    @Test(
        "an atomic load into an empty table checks its references at the end instead of row by row: the same foreign keys afterwards, and all of them after a failed step"
    )
    func foreignKeysAroundBulkLoad() throws {
        let directory = TemporaryDirectory()
        try Self.write(directory)
        try FileManager.default.createDirectory(atPath: directory.file("pg"), withIntermediateDirectories: true)
        var keys: [String: [String]] = [:]
        // Committed in batches (row-by-row checks), atomic into the empty table (checked at the
        // end), then atomic again into the now full table (row by row: nothing lifted).
        for (name, batch) in [("batches", 700), ("atomic", nil)] as [(String, Int?)] {
            let (url, drop) = try PostgresImportCLITests.freshStore("bulkfk")
            defer { drop() }
            try directory.write("job.yml", Self.job(source: "orders.csv", batch: batch))
            for run in 1...2 {
                let result = try runFerry(
                    ["run", "job.yml", "--param", "store=\(url)", "--param", "out=pg"], cwd: directory.path,
                    timeout: .seconds(300))
                #expect(result.exitCode == 0, "\(name) \(run): \(result.stderr)")
            }
            keys[name] = try Self.orderForeignKeys(url)
        }
        #expect(keys["atomic"]?.count == 3, "\(keys)")
        #expect(keys["atomic"] == keys["batches"], "\(keys)")

        // A step that fails (its reject budget spent) after the keys were lifted: rolled back
        // with its rows, every key is there.
        let (url, drop) = try PostgresImportCLITests.freshStore("bulkfkfail")
        defer { drop() }
        try directory.write(
            "job.yml",
            Self.job(source: "orders.csv", batch: nil).replacingOccurrences(
                of: "max_rejects: 100000", with: "max_rejects: 3"))
        let failed = try runFerry(
            ["run", "job.yml", "--param", "store=\(url)", "--param", "out=pg"], cwd: directory.path,
            timeout: .seconds(300))
        #expect(failed.exitCode != 0, "\(failed)")
        #expect(try Self.orderForeignKeys(url) == keys["atomic"])
        let counted = try runFerry(["store", "info", url, "--json"], cwd: directory.path)
        #expect(counted.stdout.contains("\"Order\""), "\(counted)")
    }

    /// Runs `job.yml` into the SQLite store `sq/store.sqlite` and into `url`, and checks that both
    /// succeed with the same counts, rejects file and orders.
    static func compare(_ directory: TemporaryDirectory, url: String, round: String) throws {
        var outputs: [String] = []
        for (store, folder) in [("sq/store.sqlite", "sq"), (url, "pg")] {
            try FileManager.default.createDirectory(
                atPath: directory.file(folder), withIntermediateDirectories: true)
            let result = try runFerry(
                ["run", "job.yml", "--param", "store=\(store)", "--param", "out=\(folder)"],
                cwd: directory.path, timeout: .seconds(300))
            #expect(result.exitCode == 0, "\(round): \(result.stderr)")
            outputs.append(result.stdout + result.stderr)
        }
        #expect(
            outputs.map(PostgresImportCLITests.countLines)[1] == outputs.map(PostgresImportCLITests.countLines)[0],
            "\(round)")
        let left = try String(contentsOfFile: directory.file("sq/orders.rejects.ndjson"), encoding: .utf8)
        let right = try String(contentsOfFile: directory.file("pg/orders.rejects.ndjson"), encoding: .utf8)
        #expect(right == left, "\(round): rejects")
        #expect(left.contains("customer: no Customer with code = nobody3"), "\(round): \(left.prefix(500))")
        #expect(left.contains("season: no Season with start = 2031-01-01"), "\(round)")
        #expect(try Self.orderRows(directory, store: url) == Self.orderRows(directory, store: "sq/store.sqlite"))
        // Each code (escaped in the array literal) found its customer.
        let orders = try Self.orderRows(directory, store: url)
        for code in Self.codes { #expect(orders.contains(Self.field(code)), "\(round): \(code)") }
    }
}
