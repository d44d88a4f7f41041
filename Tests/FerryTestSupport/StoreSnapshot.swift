import FerryCore
import Foundation

/// The content of a store file, table by table, to tell whether anything changed: row counts and
/// a SHA-256 of every row (`SELECT * … ORDER BY` the primary key), plus `PRAGMA integrity_check`.
///
/// `ferry_runs` is left out by default: it is the audit log, and a failed step records its run
/// there after rolling back.
public struct StoreSnapshot: Equatable, CustomStringConvertible {
    public struct Table: Equatable, Sendable {
        public var rows: Int
        public var checksum: String
    }

    /// Tables by name.
    public var tables: [String: Table]
    /// The result of `PRAGMA integrity_check` (`ok` when the file is sound).
    public var integrity: String

    public var description: String {
        tables.keys.sorted().map { "\($0): \(tables[$0]?.rows ?? 0) rows \(tables[$0]?.checksum.prefix(12) ?? "")" }
            .joined(separator: ", ")
            + "; integrity \(integrity)"
    }

    /// Rows of one table (0 when it does not exist).
    public func rows(_ table: String) -> Int { tables[table]?.rows ?? 0 }

    /// Reads every table of the store at `path` (waits for a writer's lock). The connection may
    /// write: opening a store a killed process left behind rolls its journal back, as any
    /// SQLite client does; a read-only connection would fail with SQLITE_READONLY_ROLLBACK.
    public static func take(_ path: String, excluding excluded: Set<String> = ["ferry_runs"]) throws -> StoreSnapshot {
        let connection = try Connection(path: path, readOnly: false, create: false)
        connection.setBusyTimeout(milliseconds: 30_000)
        let integrity = try connection.rows("PRAGMA integrity_check").compactMap { $0.first?.text }.joined(
            separator: "\n")
        var tables: [String: Table] = [:]
        let names = try connection.rows(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        .compactMap { $0.first?.text }
        for name in names where !excluded.contains(name) {
            let quoted = "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            let columns = try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(name)]).compactMap {
                $0.first?.text
            }
            let order =
                columns.contains(FerryLayout.primaryKey)
                ? FerryLayout.primaryKey : (1...max(1, columns.count)).map(String.init).joined(separator: ", ")
            var hash = SHA256()
            var count = 0
            for row in try connection.rows("SELECT * FROM \(quoted) ORDER BY \(order)") {
                count += 1
                hash.update(row.map(\.description).joined(separator: "\u{1F}"))
                hash.update("\u{1E}")
            }
            tables[name] = Table(rows: count, checksum: SHA256.hexString(hash.finalize()))
        }
        return StoreSnapshot(tables: tables, integrity: integrity)
    }

    /// Runs one query and returns its first column as integers (for counts in tests).
    public static func integers(_ path: String, _ sql: String) throws -> [Int64] {
        let connection = try Connection(path: path, readOnly: false, create: false)
        connection.setBusyTimeout(milliseconds: 30_000)
        return try connection.rows(sql).compactMap { $0.first?.int64 }
    }

    /// Runs one query and returns its rows rendered as text (NULL as `nil`).
    public static func texts(_ path: String, _ sql: String) throws -> [[String?]] {
        let connection = try Connection(path: path, readOnly: false, create: false)
        connection.setBusyTimeout(milliseconds: 30_000)
        return try connection.rows(sql).map { row in row.map { $0.isNull ? nil : $0.description } }
    }
}

/// Holds a store's write lock (an open `BEGIN IMMEDIATE` transaction) until released, to test
/// how another process waits for it.
public final class StoreWriteLock {
    private let connection: Connection
    private var held = true

    public init(_ path: String) throws {
        connection = try Connection(path: path, readOnly: false, create: false)
        try connection.execute("BEGIN IMMEDIATE")
    }

    /// Ends the transaction (a rollback: nothing was written).
    public func release() throws {
        guard held else { return }
        held = false
        try connection.execute("ROLLBACK")
    }

    deinit { if held { try? connection.execute("ROLLBACK") } }
}

/// A plain read-write SQLite connection to a store, for tests that write to it as another
/// program would (e.g. in WAL mode, keeping it open while its files are copied).
public final class StoreConnection {
    private let connection: Connection

    /// Opens the database at `path`; with `create`, a new one when there is none.
    public init(_ path: String, create: Bool = false) throws {
        connection = try Connection(path: path, readOnly: false, create: create)
        connection.setBusyTimeout(milliseconds: 30_000)
    }

    /// Runs one statement.
    public func execute(_ sql: String) throws { try connection.execute(sql) }

    /// Runs a script of several statements (a test's fixture).
    public func executeScript(_ sql: String) throws { try connection.executeScript(sql) }
}
