import FerryCore
import FerryPostgres

/// Resolves many keys of one destination entity on PostgreSQL in one round trip: the keys go as
/// one array parameter, joined with the destination on its match attribute (one join, whatever
/// the number of keys). How ``ReferenceResolver/prefetch(_:)`` resolves a batch's references.
///
/// A key matches as it does when sent alone (``ReferenceResolver``'s query per key): the server
/// reads its text as the match column's type. When several objects hold a key (the match
/// attribute is not unique), the one with the smallest primary key is taken.
final class PostgresKeyLookup: BatchKeyLookup {
    private let database: PostgresDatabase
    private let source: String
    private let keyColumn: String
    private let matchColumn: String
    /// The match column's type, as PostgreSQL names it (read at the first lookup).
    private var typeName: String?

    /// Looks keys up in `source` (a quoted table or subquery, ``StoreLayout/quotedSource(for:)``)
    /// by the quoted `matchColumn`, returning the quoted `keyColumn`.
    init(database: PostgresDatabase, source: String, keyColumn: String, matchColumn: String) {
        self.database = database
        self.source = source
        self.keyColumn = keyColumn
        self.matchColumn = matchColumn
    }

    /// Whether `key` can travel in the array parameter: not NULL, and no text holding U+0000
    /// (which no PostgreSQL text holds; such a key is looked up alone, as before).
    static func canSend(_ key: DatabaseValue) -> Bool {
        guard let text = PostgresDatabase.postgresValue(key).textForm else { return false }
        return !text.utf8.contains(0)
    }

    /// The static test, for ``BatchKeyLookup``.
    func canSend(_ key: DatabaseValue) -> Bool { Self.canSend(key) }

    /// The primary key of the object holding each of `keys` (nil: none holds it), in order.
    func primaryKeys(of keys: [DatabaseValue]) throws -> [Int64?] {
        try Self.primaryKeys([(self, keys)])[0]
    }

    /// ``primaryKeys(of:)`` of several lookups in one query, when all are PostgreSQL's.
    func primaryKeys(_ requests: [(lookup: any BatchKeyLookup, keys: [DatabaseValue])]) throws -> [[Int64?]] {
        let lookups = requests.compactMap { request in
            (request.lookup as? PostgresKeyLookup).map { (lookup: $0, keys: request.keys) }
        }
        guard lookups.count == requests.count, lookups.allSatisfy({ $0.lookup.database === database }) else {
            return try requests.map { try $0.lookup.primaryKeys(of: $0.keys) }
        }
        return try Self.primaryKeys(lookups)
    }

    /// For each lookup (all on one session), the primary key of the object holding each of its
    /// keys (nil: none holds it), with one query: each lookup's join, tagged with its place, in
    /// one `UNION ALL`, so a batch's lookups of several entities take one round trip.
    static func primaryKeys(_ requests: [(lookup: PostgresKeyLookup, keys: [DatabaseValue])]) throws -> [[Int64?]] {
        var found = requests.map { [Int64?](repeating: nil, count: $0.keys.count) }
        var queries: [String] = []
        var arguments: [DatabaseValue] = []
        try readMatchTypes(requests.filter { !$0.keys.isEmpty }.map(\.lookup))
        for (place, request) in requests.enumerated() where !request.keys.isEmpty {
            let lookup = request.lookup
            let type = try lookup.matchType()
            arguments.append(.text(arrayLiteral(request.keys)))
            queries.append(
                "(SELECT \(place), u.i, min(d.\(lookup.keyColumn)) FROM unnest(?\(arguments.count)::\(type)[]) WITH ORDINALITY AS u(v, i) JOIN \(lookup.source) AS d ON d.\(lookup.matchColumn) = u.v GROUP BY u.i)"
            )
        }
        guard let database = requests.first?.lookup.database, !queries.isEmpty else { return found }
        for row in try database.rows(queries.joined(separator: " UNION ALL "), arguments) {
            guard let place = row[0].int64, place >= 0, place < requests.count, let ordinal = row[1].int64,
                ordinal >= 1, ordinal <= requests[Int(place)].keys.count
            else { continue }
            found[Int(place)][Int(ordinal) - 1] = row[2].int64
        }
        return found
    }

    /// Reads the match column types `lookups` have not read yet, with one query.
    private static func readMatchTypes(_ lookups: [PostgresKeyLookup]) throws {
        var unread: [PostgresKeyLookup] = []
        for lookup in lookups where lookup.typeName == nil && !unread.contains(where: { $0 === lookup }) {
            unread.append(lookup)
        }
        guard unread.count > 1, let database = unread.first?.database else { return }
        let columns = unread.map { "pg_typeof((SELECT d.\($0.matchColumn) FROM \($0.source) AS d LIMIT 1))::text" }
        guard let row = try database.rows("SELECT " + columns.joined(separator: ", "), []).first else { return }
        for (lookup, name) in zip(unread, row) { lookup.typeName = name.text }
    }

    /// The match column's type name, read once.
    private func matchType() throws -> String {
        if let typeName { return typeName }
        guard
            let name = try database.scalar(
                "SELECT pg_typeof((SELECT d.\(matchColumn) FROM \(source) AS d LIMIT 1))::text", [])?.text
        else {
            throw FerryError(.store, "PostgreSQL store \(database.location): cannot read the type of \(matchColumn)")
        }
        typeName = name
        return name
    }

    /// `keys` as an array literal in PostgreSQL's text form: each element quoted, its
    /// backslashes and double quotes escaped.
    static func arrayLiteral(_ keys: [DatabaseValue]) -> String {
        var literal = "{"
        for (index, key) in keys.enumerated() {
            if index > 0 { literal += "," }
            literal += "\""
            for character in PostgresDatabase.postgresValue(key).textForm ?? "" {
                if character == "\\" || character == "\"" { literal += "\\" }
                literal.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }
}
