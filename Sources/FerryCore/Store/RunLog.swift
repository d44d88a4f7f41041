/// One entry of a store's run log: what a job step or a migration did to the store, and how it
/// ended. Times are ferry's ISO-8601 text (``DateCoding``).
package struct RunRecord: Sendable, Hashable {
    /// The row's number in the log (nil before it is recorded).
    package var id: Int64?
    package var job: String
    /// The step's position in its job (nil for a migration).
    package var stepIndex: Int?
    /// `import`, `update`, `delete`, `migrate`, …
    package var step: String
    package var entity: String?
    /// The input file, or the store a migration read.
    package var source: String?
    package var startedAt: String
    package var endedAt: String?
    /// `succeeded`, `failed`, `rolled back`, …
    package var outcome: String
    package var read: Int = 0
    package var inserted: Int = 0
    package var updated: Int = 0
    package var skipped: Int = 0
    package var rejected: Int = 0
    package var message: String?

    package init(
        id: Int64? = nil, job: String, stepIndex: Int? = nil, step: String, entity: String? = nil,
        source: String? = nil,
        startedAt: String, endedAt: String? = nil, outcome: String, read: Int = 0, inserted: Int = 0, updated: Int = 0,
        skipped: Int = 0, rejected: Int = 0, message: String? = nil
    ) {
        self.id = id
        self.job = job
        self.stepIndex = stepIndex
        self.step = step
        self.entity = entity
        self.source = source
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.read = read
        self.inserted = inserted
        self.updated = updated
        self.skipped = skipped
        self.rejected = rejected
        self.message = message
    }
}

/// A store's run log (`ferry_runs` in ferry's layout): the one place that writes, reads and
/// carries it, for job steps, migrations and `ferry store info`.
package struct RunLog {
    /// The log's table as SQL refers to it (quoted, qualified with its schema when given).
    package let table: String
    let connection: any DatabaseConnection
    let dialect: any SQLDialect
    /// The schema the log lives in when it is not the connection's own (a migration's source or
    /// destination).
    let schema: String?

    /// The log of the store `layout` describes, on `connection`, in `schema` when given (a
    /// migration's destination); nil when the layout keeps no bookkeeping tables.
    package init?(on connection: any DatabaseConnection, layout: any StoreLayout, schema: String? = nil) {
        guard let tables = layout.bookkeeping else { return nil }
        self.table = schema.map { layout.dialect.qualified(tables.runs, in: $0) } ?? layout.dialect.quote(tables.runs)
        self.connection = connection
        self.dialect = layout.dialect
        self.schema = schema
    }

    /// `name` (a bookkeeping table beside the log) as SQL refers to it, in the log's schema.
    func qualified(_ name: String) -> String {
        schema.map { dialect.qualified(name, in: $0) } ?? dialect.quote(name)
    }

    /// Whether the table `name` exists beside the log, in its schema.
    func exists(_ name: String) throws -> Bool {
        let query = schema.map { dialect.tableExistsQuery(inSchema: $0) } ?? dialect.tableExistsQuery
        return (try connection.scalar(query, [.text(name)])?.int64 ?? 0) > 0
    }

    /// Every column but `id`, in the order ``record(_:)`` binds them.
    private static let columns = [
        "job", "step_index", "step", "entity", "source", "started_at", "ended_at", "outcome", "read", "inserted",
        "updated",
        "skipped", "rejected", "message",
    ]

    /// The statement creating the log's table (ferry's layout).
    package static func createStatement(table: String, dialect: any SQLDialect) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(dialect.quote(table)) (
            \(dialect.keyColumnDefinition("id")),
            job TEXT NOT NULL,
            step_index INTEGER,
            step TEXT NOT NULL,
            entity TEXT,
            source TEXT,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            outcome TEXT NOT NULL,
            read INTEGER NOT NULL DEFAULT 0,
            inserted INTEGER NOT NULL DEFAULT 0,
            updated INTEGER NOT NULL DEFAULT 0,
            skipped INTEGER NOT NULL DEFAULT 0,
            rejected INTEGER NOT NULL DEFAULT 0,
            message TEXT
        )
        """
    }

    /// Appends `run` to the log (inside the caller's transaction, when there is one, whose end
    /// then reports a failure: ``DatabaseConnection/executeWithNext(_:_:)``). Passwords written
    /// into PostgreSQL URLs (a source's, a store's named in a message) are stored as `***`.
    package func record(_ run: RunRecord) throws {
        func text(_ value: String?) -> DatabaseValue {
            value.map { .text(StoreEngines.redactingPasswords(in: $0)) } ?? .null
        }
        func integer(_ value: Int) -> DatabaseValue { .integer(Int64(value)) }
        let placeholders = "VALUES (" + Array(repeating: "?", count: Self.columns.count).joined(separator: ", ") + ")"
        try connection.executeWithNext(
            dialect.insert(into: table, columns: Self.columns, values: placeholders, onConflict: .fail),
            [
                text(run.job), run.stepIndex.map { .integer(Int64($0)) } ?? .null, .text(run.step), text(run.entity),
                text(run.source),
                .text(run.startedAt), text(run.endedAt), .text(run.outcome), integer(run.read), integer(run.inserted),
                integer(run.updated), integer(run.skipped), integer(run.rejected), text(run.message),
            ])
    }

    /// The latest `limit` runs (every run when nil), newest first.
    package func recent(limit: Int?) throws -> [RunRecord] {
        var sql = "SELECT id, " + Self.columns.joined(separator: ", ") + " FROM \(table) ORDER BY id DESC"
        var arguments: [DatabaseValue] = []
        if let limit {
            sql += " LIMIT ?"
            arguments.append(.integer(Int64(max(0, limit))))
        }
        return try connection.rows(sql, arguments).map { row in
            RunRecord(
                id: row[0].int64, job: row[1].text ?? "", stepIndex: row[2].int64.map { Int($0) },
                step: row[3].text ?? "",
                entity: row[4].text, source: row[5].text, startedAt: row[6].text ?? "", endedAt: row[7].text,
                outcome: row[8].text ?? "", read: Int(row[9].int64 ?? 0), inserted: Int(row[10].int64 ?? 0),
                updated: Int(row[11].int64 ?? 0), skipped: Int(row[12].int64 ?? 0), rejected: Int(row[13].int64 ?? 0),
                message: row[14].text)
        }
    }

    /// Copies every run of `other` (a log on the same connection, in another schema), oldest
    /// first, into this log, with its incremental state (the marks of incremental sources and the
    /// files `files: new` imported): a migration carrying a store's history into its new version,
    /// so that the next nightly run reads on from where the last one stopped.
    package func copy(from other: RunLog) throws {
        let columns = Self.columns.joined(separator: ", ")
        try connection.execute("INSERT INTO \(table) (\(columns)) SELECT \(columns) FROM \(other.table) ORDER BY id")
        try copyIncrementalState(from: other)
    }
}
