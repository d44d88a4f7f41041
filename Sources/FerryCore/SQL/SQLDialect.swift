/// The SQL of one database engine: everything in ferry's generated SQL that differs between
/// engines goes through here, so a second backend (PostgreSQL) is one more implementation.
/// ``SQLiteDialect`` and PostgreSQL's `PostgreSQLDialect` (`FerryPostgresStore`) implement it.
///
/// What it deliberately leaves out: connection set-up (SQLite's PRAGMAs, PostgreSQL's session
/// settings) belongs to the backend's connection. A migration reaches the new store through a
/// schema name its tables are qualified with (``qualified(_:in:)``): an attached database in
/// SQLite, a schema in PostgreSQL.
package protocol SQLDialect: Sendable {
    /// A quoted identifier.
    func quote(_ identifier: String) -> String
    /// `name` in the schema (attached database, PostgreSQL schema) `schema`.
    func qualified(_ name: String, in schema: String) -> String
    /// A SQL literal of a stored value (DDL defaults, constant assignments).
    func literal(_ value: DatabaseValue) -> String
    /// The column type declared for an attribute of `type` whose values are kept as `storage`
    /// (what the store's ``ValueCoding`` says).
    func columnType(for type: AttributeType, storedAs storage: DatabaseValue.StorageClass) -> String
    /// The definition of an entity table's integer primary key column named `column`.
    func keyColumnDefinition(_ column: String) -> String
    /// The same column without its primary key, which `ALTER TABLE … ADD PRIMARY KEY` adds once
    /// a table's rows are in; nil when the key cannot be added later (SQLite's rowid).
    func keyColumnDefinitionWithoutPrimaryKey(_ column: String) -> String?
    /// The clause that makes an existing key column generate keys (`ALTER COLUMN … ADD …`), for
    /// a table made by `CREATE TABLE … AS SELECT`; nil when the dialect cannot add it later.
    var keyIdentity: String? { get }
    /// The type of a column holding another row's key (a foreign key, a join table's column).
    var keyReferenceType: String { get }
    /// What follows a foreign key's `REFERENCES table(key)` (PostgreSQL: `DEFERRABLE …`).
    var foreignKeyOptions: String { get }
    /// What follows a join table's closing parenthesis (SQLite: `WITHOUT ROWID`).
    var joinTableOptions: String { get }
    /// `INSERT` of `columns` with `values` (a `VALUES (…)` list or a `SELECT`) into `table`,
    /// doing `onConflict` when a uniqueness constraint fails.
    func insert(into table: String, columns: [String], values: String, onConflict: ConflictAction) -> String
    /// A query with one text parameter, the table's name, answering one row with one integer:
    /// 1 when the table exists in the main schema, 0 otherwise.
    var tableExistsQuery: String { get }
    /// As ``tableExistsQuery``, in `schema` (an attached database, a PostgreSQL schema).
    func tableExistsQuery(inSchema schema: String) -> String
    /// A query answering how many tables the database holds apart from the engine's own.
    var userTableCountQuery: String { get }
    /// The statement that defers foreign-key checks to the end of the current transaction.
    var deferForeignKeysStatement: String { get }
    /// The statement that runs the checks ``deferForeignKeysStatement`` deferred now, for an
    /// engine that builds no index on a table with checks pending; nil where they simply run at
    /// the commit.
    var immediateForeignKeysStatement: String? { get }
    /// A condition true when `expression` holds an integer (not text, real or blob).
    func isInteger(_ expression: String) -> String
    /// The `ORDER BY` terms sorting `sql`, holding values of `type`, as ferry sorts: as SQLite
    /// sorts the stored forms (`NULL` first, text byte-wise), decimals numerically.
    func ordering(_ sql: String, type: AttributeType, ascending: Bool) -> [String]
    /// The `LIMIT` argument meaning no limit (with an `OFFSET`).
    var unlimited: DatabaseValue { get }
    /// True when the connection runs ferry's own SQL functions (``PredicateFunctions``,
    /// `ExpressionSQLFunctions`), so that compiled predicates and expressions may call them.
    var runsFerryFunctions: Bool { get }
    /// The boolean constant `flag` (`1`/`0`, `TRUE`/`FALSE`).
    func booleanConstant(_ flag: Bool) -> String
    /// True unless `sql` is true (a NULL comparison counts as false before negation).
    func isNotTrue(_ sql: String) -> String
    /// `a` equals `b`, NULL equal to NULL (or, with `negated`, differs from it).
    func nullSafeEquality(_ a: String, _ b: String, negated: Bool) -> String
    /// A decimal operand compared as SQLite compares it: as a 64-bit float.
    func float64(_ sql: String) -> String
    /// A text operand ordered byte-wise (SQLite's `BINARY`; PostgreSQL's `"C"` collation).
    func byteOrdered(_ sql: String) -> String
    /// The average of `sql` over a group, computed in 64-bit floats.
    func average(_ sql: String) -> String
    /// How compiled predicates filter rows: exactly, or as a wider filter ferry completes on the rows.
    var predicatePushdown: StoreEngine.PredicatePushdown { get }
    /// A condition that always holds (`1`, `TRUE`).
    var trueCondition: String { get }
    /// True when a `REFERENCES` clause needs its table to exist already (PostgreSQL): the
    /// schema then adds foreign keys after every table.
    var referencesNeedExistingTables: Bool { get }
    /// The session's own table `name` (it goes with the session): SQLite's `temp`, PostgreSQL's `pg_temp`.
    func temporaryTable(_ name: String) -> String
    /// `CREATE INDEX` of `name` on `column` of the temporary table `table`.
    func createTemporaryIndex(_ name: String, on table: String, column: String) -> String
    /// True when a scan of a table (or of an index on it) meets its rows in primary-key order, so
    /// that the first row a `LIMIT 1` query answers has the smallest key without an `ORDER BY`.
    var scansInKeyOrder: Bool { get }
    /// A condition true when the key `key` is not among the keys in the one-column (`pk`) table
    /// `table`, in the form the engine plans best over a large table.
    func notAmongKeys(_ key: String, in table: String) -> String
    /// A condition true when the key `key` is one of `keys`, with one argument whatever their number.
    func among(_ keys: [Int64], key: String) -> (sql: String, arguments: [DatabaseValue])
}

extension SQLDialect {
    package var keyReferenceType: String { "INTEGER" }
    package var keyIdentity: String? { nil }
    package var foreignKeyOptions: String { "" }
    package var unlimited: DatabaseValue { .integer(-1) }
    package var immediateForeignKeysStatement: String? { nil }
    package var runsFerryFunctions: Bool { true }
    package func booleanConstant(_ flag: Bool) -> String { flag ? "1" : "0" }
    package func isNotTrue(_ sql: String) -> String { "(\(sql)) IS NOT 1" }
    package func nullSafeEquality(_ a: String, _ b: String, negated: Bool) -> String {
        negated ? "\(a) IS NOT \(b)" : "\(a) IS \(b)"
    }
    package func float64(_ sql: String) -> String { "CAST(\(sql) AS REAL)" }
    package func byteOrdered(_ sql: String) -> String { sql }
    /// SQLite averages in 64-bit floats.
    package func average(_ sql: String) -> String { "AVG(\(sql))" }
    package var predicatePushdown: StoreEngine.PredicatePushdown { .exact }
    package var trueCondition: String { "1" }
    package var referencesNeedExistingTables: Bool { false }
    package func temporaryTable(_ name: String) -> String { "temp.\(name)" }
    package var scansInKeyOrder: Bool { true }
    package func among(_ keys: [Int64], key: String) -> (sql: String, arguments: [DatabaseValue]) {
        (
            "\(key) IN (SELECT value FROM json_each(?))",
            [.text("[" + keys.map(String.init).joined(separator: ",") + "]")]
        )
    }
    package func notAmongKeys(_ key: String, in table: String) -> String { "\(key) NOT IN (SELECT pk FROM \(table))" }
    package func createTemporaryIndex(_ name: String, on table: String, column: String) -> String {
        "CREATE INDEX temp.\(name) ON \(table)(\(column))"
    }
}

/// What an `INSERT` does when it would break a uniqueness constraint.
package enum ConflictAction: Sendable, Hashable {
    /// Fail (the engine's error).
    case fail
    /// Insert nothing for that row.
    case ignore
    /// Set `columns` to the inserted row's values where `key` matches.
    case update(key: [String], columns: [String])
}
