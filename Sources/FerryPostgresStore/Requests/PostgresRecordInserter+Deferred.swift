import FerryCore
import FerryPostgres

/// The rows of one entity a nested import's batch writes together on PostgreSQL
/// (``PostgresRecordInserter/deferInsert(_:)``): new rows with the keys ferry gave them, written
/// with one `COPY`, and updates of stored objects, written with one `UPDATE … FROM unnest(…)`.
struct PostgresDeferredRows {
    let schema: String
    let tableName: String
    /// The quoted `schema.table`, and the unquoted and quoted key and stored columns.
    let table: String
    let keyName: String
    let names: [String]
    let quotedNames: [String]
    let quotedKey: String
    /// The key the next new row takes; nil until read from the key sequence.
    var nextKey: Int64?
    /// New rows (key, values), in the order they were given.
    var inserts: [(key: Int64, values: [DatabaseValue])] = []
    var insertIndex: [Int64: Int] = [:]
    /// Updates of stored objects (key, values, which values the records supplied), merged per object.
    var updates: [(key: Int64, values: [DatabaseValue], supplied: [Bool])] = []
    var updateIndex: [Int64: Int] = [:]
    /// The stored columns' types, as PostgreSQL names them (read at the first update).
    var columnTypes: [String]?
    /// The lookups of stored objects by a column (``PostgresRecordInserter/storedKeys(_:)``).
    var lookups: [Int: PostgresKeyLookup] = [:]
}

extension PostgresRecordInserter {
    /// The record's values encoded for the store when the record passes every check ferry makes
    /// on it (rules, defaults, text PostgreSQL can store, and the required values of an insert
    /// or, `updating`, of an update of a stored object); nil when ``insert(_:supplied:)`` would
    /// reject it (and give the reason).
    package func encodedIfAccepted(_ values: [Value], supplied: [Bool]?, updating: Bool) -> [DatabaseValue]? {
        var encoded = Array(repeating: DatabaseValue.null, count: values.count)
        if rules.encode(values, supplied: supplied, into: &encoded) != nil { return nil }
        if encoded.contains(where: Self.holdsNUL) { return nil }
        let missing =
            updating
            ? rules.missingValue(in: encoded, supplied: supplied.map { $0[...] }, updating: policy == .update)
            : rules.missingValue(in: encoded)
        return missing == nil ? encoded : nil
    }

    /// True when an update of a stored object writes something (the entity has columns to
    /// assign) and keeps no version count: what a deferred update can do.
    package var defersUpdates: Bool { !deferred.names.isEmpty }

    /// The key the deferred insert `offset` inserts after the next one takes: the first time, the
    /// next key of the table's sequence, above every key the table holds (one round trip).
    package func deferredKey(offset: Int) throws -> Int64 {
        if let next = deferred.nextKey { return next + Int64(offset) }
        let sequence = "pg_get_serial_sequence(?1, ?2)"
        let first = try database.scalar(
            "SELECT GREATEST(nextval(\(sequence)), (SELECT COALESCE(max(\(deferred.quotedKey)), 0) + 1 FROM \(deferred.table)))",
            [.text(deferred.table), .text(deferred.keyName)])
        guard let first = first?.int64 else {
            throw FerryError(
                .store,
                "PostgreSQL store \(database.location): \(entity.name) has no key sequence to number new objects")
        }
        deferred.nextKey = first
        return first + Int64(offset)
    }

    /// Keeps a new row (values from ``encodedIfAccepted(_:supplied:updating:)``) for
    /// ``writeDeferred(_:waiting:)``; its key.
    package func deferInsert(_ encoded: [DatabaseValue]) throws -> Int64 {
        let key = try deferredKey(offset: 0)
        deferred.nextKey = key + 1
        deferred.insertIndex[key] = deferred.inserts.count
        deferred.inserts.append((key, encoded))
        lastKey = key
        return key
    }

    /// Keeps an update of the object `key` (a stored one, or a row kept by ``deferInsert(_:)``):
    /// the values it supplies replace the object's, as ``insert(_:supplied:)`` updates it.
    package func deferUpdate(key: Int64, _ encoded: [DatabaseValue], supplied: [Bool]?) {
        lastKey = key
        if let index = deferred.insertIndex[key] {
            for column in encoded.indices where supplied?[column] ?? true {
                deferred.inserts[index].values[column] = encoded[column]
            }
            return
        }
        if let index = deferred.updateIndex[key] {
            for column in encoded.indices where supplied?[column] ?? true {
                deferred.updates[index].values[column] = encoded[column]
                deferred.updates[index].supplied[column] = true
            }
            return
        }
        deferred.updateIndex[key] = deferred.updates.count
        deferred.updates.append((key, encoded, supplied ?? Array(repeating: true, count: encoded.count)))
    }

    /// True when rows wait for ``writeDeferred(_:waiting:)``.
    package var hasDeferredRows: Bool { !deferred.inserts.isEmpty || !deferred.updates.isEmpty }

    /// Writes the rows `inserters` kept in one round trip: one script holding, per inserter in
    /// the order given, an `INSERT … SELECT` from `unnest` of its new rows (with the keys ferry
    /// gave them) and the key sequence moved past them, then per inserter an `UPDATE … FROM
    /// unnest(…)` of the stored objects changed. The arrays travel as literals (a script takes
    /// no parameters), in the text form parameters have. Unless `waiting`, the script is only
    /// sent: the server writes the rows while ferry goes on, and ``finishDeferredWrite(_:)`` (or
    /// the session's next statement) reads its outcome.
    package static func writeDeferred(_ inserters: [PostgresRecordInserter], waiting: Bool = true) throws {
        guard let database = inserters.first?.database else { return }
        try readColumnTypes(of: inserters.filter(\.hasDeferredRows))
        var statements: [String] = []
        for inserter in inserters { statements += try inserter.deferredInsertStatements() }
        for inserter in inserters { statements += try inserter.deferredUpdateStatements() }
        guard !statements.isEmpty else { return }
        let script = statements.joined(separator: ";\n")
        do {
            if waiting {
                try database.executeScript(script)
            } else {
                try database.sendScript(script)
            }
        } catch let error as FerryError {
            throw writeFailure(error, of: inserters, on: database)
        }
        for inserter in inserters {
            inserter.deferred.inserts.removeAll(keepingCapacity: true)
            inserter.deferred.insertIndex.removeAll(keepingCapacity: true)
            inserter.deferred.updates.removeAll(keepingCapacity: true)
            inserter.deferred.updateIndex.removeAll(keepingCapacity: true)
        }
    }

    /// Waits for the rows ``writeDeferred(_:waiting:)`` sent without waiting, if any.
    package static func finishDeferredWrite(_ inserters: [PostgresRecordInserter]) throws {
        guard let database = inserters.first?.database else { return }
        do {
            try database.finishSentScript()
        } catch let error as FerryError {
            throw writeFailure(error, of: inserters, on: database)
        }
    }

    private static func writeFailure(
        _ error: FerryError, of inserters: [PostgresRecordInserter], on database: PostgresDatabase
    ) -> FerryError {
        let entities = inserters.map(\.entity.name).joined(separator: ", ")
        return FerryError(
            .store, "import into \(entities) on PostgreSQL store \(database.location) failed: \(error.message)")
    }

    /// The kept new rows' `INSERT … SELECT * FROM unnest(…)` and the `setval` moving the key
    /// sequence past their keys; none when no row is kept.
    private func deferredInsertStatements() throws -> [String] {
        guard let last = deferred.inserts.last?.key else { return [] }
        let types = try deferredColumnTypes()
        var arrays = [
            Self.arrayArgument(Self.arrayLiteral(deferred.inserts.map { .integer($0.key) }), "bigint")
        ]
        for column in deferred.names.indices {
            arrays.append(
                Self.arrayArgument(Self.arrayLiteral(deferred.inserts.map { $0.values[column] }), types[column]))
        }
        let columns = ([deferred.quotedKey] + deferred.quotedNames).joined(separator: ", ")
        return [
            "INSERT INTO \(deferred.table) (\(columns)) SELECT * FROM unnest(\(arrays.joined(separator: ", ")))",
            "SELECT setval(pg_get_serial_sequence(\(SQL.stringLiteral(deferred.table)), \(SQL.stringLiteral(deferred.keyName))), \(last))",
        ]
    }

    /// The kept updates' `UPDATE … FROM unnest(…)`: each column takes the value a record
    /// supplied, else keeps its own; none when no update is kept.
    private func deferredUpdateStatements() throws -> [String] {
        guard !deferred.updates.isEmpty else { return [] }
        let types = try deferredColumnTypes()
        var arrays = [
            Self.arrayArgument(Self.arrayLiteral(deferred.updates.map { .integer($0.key) }), "bigint")
        ]
        var assignments: [String] = []
        for column in deferred.names.indices {
            arrays.append(
                Self.arrayArgument(Self.arrayLiteral(deferred.updates.map { $0.values[column] }), types[column]))
            arrays.append(
                Self.arrayArgument(
                    Self.arrayLiteral(deferred.updates.map { .integer($0.supplied[column] ? 1 : 0) }), "integer"))
            let name = deferred.quotedNames[column]
            assignments.append("\(name) = CASE WHEN s.f\(column) = 1 THEN s.v\(column) ELSE o.\(name) END")
        }
        let aliases = ["k"] + deferred.names.indices.flatMap { ["v\($0)", "f\($0)"] }
        return [
            "UPDATE \(deferred.table) AS o SET \(assignments.joined(separator: ", ")) FROM unnest(\(arrays.joined(separator: ", "))) AS s(\(aliases.joined(separator: ", "))) WHERE o.\(deferred.quotedKey) = s.k"
        ]
    }

    /// An array literal as a typed argument of a script: `'{…}'::type[]`.
    private static func arrayArgument(_ literal: String, _ type: String) -> String {
        "\(SQL.stringLiteral(literal))::\(type)[]"
    }

    /// Forgets the kept rows and the next key (the transaction they were for ended, or records
    /// written one by one took keys from the sequence since).
    package func forgetDeferred() {
        deferred.inserts.removeAll(keepingCapacity: true)
        deferred.insertIndex.removeAll(keepingCapacity: true)
        deferred.updates.removeAll(keepingCapacity: true)
        deferred.updateIndex.removeAll(keepingCapacity: true)
        deferred.nextKey = nil
    }

    /// For each request, the key of the stored object holding each of its `values` in the stored
    /// column of record column `column` of its inserter (nil: none), with one query for all.
    package static func storedKeys(
        _ requests: [(inserter: PostgresRecordInserter, column: Int, values: [DatabaseValue])]
    ) throws -> [[Int64?]] {
        try PostgresKeyLookup.primaryKeys(
            requests.map { request in (request.inserter.keyLookup(column: request.column), request.values) })
    }

    /// The lookup of stored objects by the stored column of record column `column`, made once.
    private func keyLookup(column: Int) -> PostgresKeyLookup {
        let lookup =
            deferred.lookups[column]
            ?? PostgresKeyLookup(
                database: database, source: deferred.table, keyColumn: deferred.quotedKey,
                matchColumn: deferred.quotedNames[column])
        deferred.lookups[column] = lookup
        return lookup
    }

    /// Whether `value` can be looked up with ``storedKeys(_:)``: not null, no text
    /// holding U+0000.
    package static func canLookUp(_ value: DatabaseValue) -> Bool { PostgresKeyLookup.canSend(value) }

    /// The record column of attribute `name`, nil when the inserter has none.
    package func columnIndex(ofAttribute name: String) -> Int? { rules.columns.firstIndex(of: .attribute(name)) }

    /// Reads the stored columns' types of the `inserters` that have not read them, with one
    /// query for all (a server may be across a network: one round trip).
    private static func readColumnTypes(of inserters: [PostgresRecordInserter]) throws {
        var unread: [PostgresRecordInserter] = []
        for inserter in inserters
        where inserter.deferred.columnTypes == nil && !unread.contains(where: { $0 === inserter }) {
            unread.append(inserter)
        }
        guard unread.count > 1, let database = unread.first?.database else { return }
        var byTable = Array(repeating: [String: String](), count: unread.count)
        for row in try database.rows(
            "SELECT c.i, a.attname::text, format_type(a.atttypid, a.atttypmod) FROM unnest(?1::text[]) WITH ORDINALITY AS c(t, i) JOIN pg_attribute AS a ON a.attrelid = c.t::regclass WHERE a.attnum > 0 AND NOT a.attisdropped",
            [.text(arrayLiteral(unread.map { .text($0.deferred.table) }))])
        {
            guard let place = row[0].int64, place >= 1, place <= unread.count, let name = row[1].text,
                let type = row[2].text
            else { continue }
            byTable[Int(place) - 1][name] = type
        }
        for (inserter, byName) in zip(unread, byTable) {
            inserter.deferred.columnTypes = try inserter.columnTypes(byName)
        }
    }

    /// The stored columns' types, read once.
    private func deferredColumnTypes() throws -> [String] {
        if let types = deferred.columnTypes { return types }
        var byName: [String: String] = [:]
        for row in try database.rows(
            "SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = ?1::regclass AND attnum > 0 AND NOT attisdropped",
            [.text(deferred.table)])
        {
            if let name = row[0].text, let type = row[1].text { byName[name] = type }
        }
        let types = try columnTypes(byName)
        deferred.columnTypes = types
        return types
    }

    /// The stored columns' types, from every column's type by name.
    private func columnTypes(_ byName: [String: String]) throws -> [String] {
        try deferred.names.map { name in
            guard let type = byName[name] else {
                throw FerryError(.store, "PostgreSQL store \(database.location): \(entity.name) has no column \(name)")
            }
            return type
        }
    }

    /// `values` as an array literal in PostgreSQL's text form: NULL bare, every other element
    /// quoted, its backslashes and double quotes escaped.
    static func arrayLiteral(_ values: [DatabaseValue]) -> String {
        var literal: [UInt8] = [UInt8(ascii: "{")]
        for (index, value) in values.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let text = PostgresDatabase.postgresValue(value).textForm else {
                literal += "NULL".utf8
                continue
            }
            literal.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { literal.append(UInt8(ascii: "\\")) }
                literal.append(byte)
            }
            literal.append(UInt8(ascii: "\""))
        }
        literal.append(UInt8(ascii: "}"))
        return String(decoding: literal, as: UTF8.self)
    }
}
