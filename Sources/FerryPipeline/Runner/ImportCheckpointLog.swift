import FerryCore
import Foundation

/// The store's table of interrupted `atomic: false` imports (`ferry_import_progress`): one row
/// per job, step and entity, holding its ``ImportCheckpoint`` as JSON. Created with the first
/// checkpoint; a row is written in the transaction of each committed batch and deleted in the
/// transaction that records the step's success.
struct ImportCheckpointLog {
    static let table = "ferry_import_progress"
    private let connection: any DatabaseConnection
    private let dialect: any SQLDialect
    private let quoted: String

    /// The log on `connection`; nil for a layout without ferry's bookkeeping tables (such a
    /// store cannot resume imports).
    init?(on connection: any DatabaseConnection, layout: any StoreLayout) {
        guard layout.bookkeeping != nil else { return nil }
        self.connection = connection
        dialect = layout.dialect
        quoted = layout.dialect.quote(Self.table)
    }

    private var exists: Bool {
        get throws { (try connection.scalar(dialect.tableExistsQuery, [.text(Self.table)])?.int64 ?? 0) > 0 }
    }

    /// Records `checkpoint` for the step (inside the caller's transaction).
    func save(_ checkpoint: ImportCheckpoint, job: String, step: Int, entity: String) throws {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS \(quoted) (
                job TEXT NOT NULL,
                step_index INTEGER NOT NULL,
                entity TEXT NOT NULL,
                checkpoint TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                PRIMARY KEY (job, step_index, entity)
            )
            """)
        try clear(job: job, step: step, entity: entity)
        let data = try JSONEncoder().encode(checkpoint)
        try connection.execute(
            "INSERT INTO \(quoted) (job, step_index, entity, checkpoint, updated_at) VALUES (?, ?, ?, ?, ?)",
            [
                .text(job), .integer(Int64(step)), .text(entity), .text(String(decoding: data, as: UTF8.self)),
                .text(DateCoding.nowText()),
            ])
    }

    /// The step's checkpoint, or nil when it has none.
    func load(job: String, step: Int, entity: String) throws -> ImportCheckpoint? {
        guard try exists else { return nil }
        let rows = try connection.rows(
            "SELECT checkpoint FROM \(quoted) WHERE job = ? AND step_index = ? AND entity = ?",
            [.text(job), .integer(Int64(step)), .text(entity)])
        guard let text = rows.first?[0].text else { return nil }
        do {
            return try JSONDecoder().decode(ImportCheckpoint.self, from: Data(text.utf8))
        } catch {
            throw FerryError(
                .store, "the progress of the interrupted import of \(entity) in \(Self.table) cannot be read: \(error)")
        }
    }

    /// The first step of `job` with a checkpoint: the one its `--resume` continues.
    func interruptedStep(job: String) throws -> Int? {
        guard try exists else { return nil }
        return try connection.scalar("SELECT min(step_index) FROM \(quoted) WHERE job = ?", [.text(job)])?.int64.map {
            Int($0)
        }
    }

    /// Removes the step's checkpoint (it finished, or starts afresh).
    func clear(job: String, step: Int, entity: String) throws {
        guard try exists else { return }
        try connection.execute(
            "DELETE FROM \(quoted) WHERE job = ? AND step_index = ? AND entity = ?",
            [.text(job), .integer(Int64(step)), .text(entity)])
    }
}
