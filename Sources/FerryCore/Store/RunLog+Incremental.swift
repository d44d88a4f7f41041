import Foundation

/// The last value an incremental read committed (`incremental: {column: …}`): the value of the
/// source's increasing column in the last row the run read, kept as the source gave it (an
/// integer, a real, or text: PostgreSQL's own text for a timestamp, with every digit).
package struct IncrementalMark: Sendable, Hashable, Codable, CustomStringConvertible {
    /// How the value is bound again: `integer`, `real` or `text`.
    package var kind: String
    /// The value's text.
    package var value: String

    /// A mark of `kind` (`integer`, `real`, `text`) holding `value`.
    package init(kind: String, value: String) {
        self.kind = kind
        self.value = value
    }

    /// The mark as a SQLite value (the source's own type, so that SQLite compares like with like).
    package var databaseValue: DatabaseValue {
        switch kind {
        case "integer": return Int64(value).map(DatabaseValue.integer) ?? .text(value)
        case "real": return Double(value).map(DatabaseValue.real) ?? .text(value)
        default: return .text(value)
        }
    }

    package var description: String { value }
}

/// A file a `files: new` import read to its end and committed: its path, size and SHA-256.
package struct ImportedFile: Sendable, Hashable, Codable {
    package var path: String
    package var size: Int64
    package var sha256: String

    /// A file at `path` of `size` bytes whose content hashes to `sha256` (hex).
    package init(path: String, size: Int64, sha256: String) {
        self.path = path
        self.size = size
        self.sha256 = sha256
    }
}

// MARK: - Incremental state

/// The run log's incremental state, beside the runs: the marks of incremental database sources
/// (`ferry_incremental`) and the files `files: new` imports committed (`ferry_imported_files`).
/// Both are written in the transaction that commits the rows they account for, so a killed run
/// leaves rows and state agreeing.
extension RunLog {
    /// The table of the marks of incremental database sources.
    package static let marksTable = "ferry_incremental"
    /// The table of the files `files: new` imports committed.
    package static let filesTable = "ferry_imported_files"

    /// The statement creating the marks table, named `table` (quoted, qualified when needed).
    private static func createMarksTable(_ table: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(table) (
            job TEXT NOT NULL,
            entity TEXT NOT NULL,
            source TEXT NOT NULL,
            column_name TEXT NOT NULL,
            kind TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (job, entity, source, column_name)
        )
        """
    }

    /// The statement creating the imported-files table, named `table` (quoted, qualified when needed).
    private static func createFilesTable(_ table: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(table) (
            job TEXT NOT NULL,
            entity TEXT NOT NULL,
            path TEXT NOT NULL,
            size BIGINT NOT NULL,
            sha256 TEXT NOT NULL,
            imported_at TEXT NOT NULL,
            PRIMARY KEY (job, entity, path, sha256)
        )
        """
    }

    /// Copies `other`'s incremental state (a log on the same connection, in another schema) into
    /// this log's schema; part of ``copy(from:)``.
    func copyIncrementalState(from other: RunLog) throws {
        let tables: [(name: String, create: (String) -> String, columns: String)] = [
            (Self.marksTable, Self.createMarksTable, "job, entity, source, column_name, kind, value, updated_at"),
            (Self.filesTable, Self.createFilesTable, "job, entity, path, size, sha256, imported_at"),
        ]
        for table in tables where try other.exists(table.name) {
            let destination = qualified(table.name)
            try connection.execute(table.create(destination))
            try connection.execute(
                "INSERT INTO \(destination) (\(table.columns)) SELECT \(table.columns) FROM \(other.qualified(table.name))"
            )
        }
    }

    /// The mark the last committed run of `job` left for reading `column` of `source` into
    /// `entity`; nil before the first one.
    package func mark(job: String, entity: String, source: String, column: String) throws -> IncrementalMark? {
        guard try exists(Self.marksTable) else { return nil }
        let rows = try connection.rows(
            "SELECT kind, value FROM \(qualified(Self.marksTable)) WHERE job = ? AND entity = ? AND source = ? AND column_name = ?",
            [.text(job), .text(entity), .text(source), .text(column)])
        guard let row = rows.first, let kind = row[0].text, let value = row[1].text else { return nil }
        return IncrementalMark(kind: kind, value: value)
    }

    /// Replaces the mark of `column` of `source` for `job` and `entity` (inside the caller's
    /// transaction: the one committing the rows read up to it).
    package func saveMark(_ mark: IncrementalMark, job: String, entity: String, source: String, column: String) throws {
        let table = qualified(Self.marksTable)
        try connection.execute(Self.createMarksTable(table))
        let key: [DatabaseValue] = [.text(job), .text(entity), .text(source), .text(column)]
        try connection.execute(
            "DELETE FROM \(table) WHERE job = ? AND entity = ? AND source = ? AND column_name = ?", key)
        try connection.execute(
            "INSERT INTO \(table) (job, entity, source, column_name, kind, value, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            key + [.text(mark.kind), .text(mark.value), .text(DateCoding.nowText())])
    }

    /// The files `job` imported into `entity` so far (every version of a file that changed).
    package func importedFiles(job: String, entity: String) throws -> Set<ImportedFile> {
        guard try exists(Self.filesTable) else { return [] }
        let rows = try connection.rows(
            "SELECT path, size, sha256 FROM \(qualified(Self.filesTable)) WHERE job = ? AND entity = ?",
            [.text(job), .text(entity)])
        return Set(
            rows.map { ImportedFile(path: $0[0].text ?? "", size: $0[1].int64 ?? -1, sha256: $0[2].text ?? "") })
    }

    /// Records that `job` imported `files` into `entity` (inside the transaction that commits
    /// their rows); a file recorded already is recorded once.
    package func recordImportedFiles(_ files: [ImportedFile], job: String, entity: String) throws {
        guard !files.isEmpty else { return }
        let table = qualified(Self.filesTable)
        try connection.execute(Self.createFilesTable(table))
        for file in files {
            let key: [DatabaseValue] = [.text(job), .text(entity), .text(file.path), .text(file.sha256)]
            try connection.execute("DELETE FROM \(table) WHERE job = ? AND entity = ? AND path = ? AND sha256 = ?", key)
            try connection.execute(
                "INSERT INTO \(table) (job, entity, path, sha256, size, imported_at) VALUES (?, ?, ?, ?, ?, ?)",
                key + [.integer(file.size), .text(DateCoding.nowText())])
        }
    }
}
