import FerryCore
import FerryPostgres

/// The rows of a PostgreSQL table or query, through a server-side cursor (`DECLARE … NO SCROLL
/// CURSOR`, then `FETCH FORWARD n`) in a `READ ONLY` transaction: at most ``batchSize`` rows are
/// in memory, and a query that writes is refused by the server. Dates are read in UTC with
/// ISO output, numbers with every digit.
final class PostgresSourceCursor: DatabaseCursor {
    /// Rows fetched per round trip.
    static let batchSize = 2_000
    private(set) var columns: [DatabaseColumn] = []
    private let connection: PostgresConnection
    private let source: DatabaseSource
    private var types: [AttributeType?] = []
    private var buffered: [PostgresRow] = []
    private var position = 0
    private var done = false
    /// The increasing column's index, for an incremental read.
    private var markIndex: Int?
    private(set) var lastMark: IncrementalMark?

    /// The rows of `source`'s selection of the database at `url`; with an incremental selection,
    /// those at or past `mark` only (bound as a parameter, its type the column's).
    init(url: String, source: DatabaseSource, from mark: IncrementalMark? = nil) throws {
        self.source = source
        let parsed: PostgresURL
        do {
            parsed = try PostgresURL(url)
            connection = try PostgresConnection(url: parsed)
        } catch {
            throw FerryError(.io, "cannot read \(source.label): \(Self.reason(error))", at: source.selectionLocation)
        }
        do {
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try connection.execute("SET LOCAL TimeZone = 'UTC'")
            try connection.execute("SET LOCAL DateStyle = 'ISO, YMD'")
            try connection.execute("SET LOCAL extra_float_digits = 3")
            if let schema = parsed.schema {
                try connection.execute("SET LOCAL search_path TO \(PostgresIdentifier.quote(schema))")
            }
        } catch {
            throw FerryError(.io, "cannot read \(source.label): \(Self.reason(error))", at: source.selectionLocation)
        }
        var query: String
        switch source.selection {
        case .table(let name):
            query = "SELECT * FROM \(try Self.resolveTable(name, connection: connection, source: source))"
        case .query(let sql):
            query = sql
        case .entity(let name):
            throw FerryError(
                .invalidDefinition,
                "'entity: \(name)' reads a Core Data store; for PostgreSQL use 'table:' or 'query:'",
                at: source.selectionLocation)
        }
        var parameters: [PostgresValue] = []
        if let incremental = source.incremental {
            let names: [String]
            do {
                names = try connection.execute("SELECT * FROM (\n\(query)\n) AS ferry_columns LIMIT 0").columns.map(
                    \.name)
            } catch {
                throw FerryError(
                    .invalidDefinition,
                    "the \(source.defaultEntityName == nil ? "query" : "table") of \(source.label) fails: \(Self.reason(error))",
                    at: source.selectionLocation)
            }
            let wrapped = try IncrementalQuery(
                base: query, columns: names, incremental: incremental, source: source, bound: mark != nil,
                placeholder: "$1", quote: PostgresIdentifier.quote)
            query = wrapped.sql
            markIndex = wrapped.columnIndex
            if let mark { parameters = [.text(mark.value)] }
        }
        do {
            try connection.execute("DECLARE ferry_source NO SCROLL CURSOR FOR \(query)", parameters)
            try fetch()
        } catch {
            throw FerryError(
                .invalidDefinition,
                "the \(source.defaultEntityName == nil ? "query" : "table") of \(source.label) fails: \(Self.reason(error))",
                at: source.selectionLocation)
        }
    }

    deinit { connection.close() }

    /// The quoted name of the table or view `name` (`schema.table` or a name on the search
    /// path); an unknown name fails with the tables the database has.
    static func resolveTable(_ name: String, connection: PostgresConnection, source: DatabaseSource) throws -> String {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        let quoted = parts.map(PostgresIdentifier.quote).joined(separator: ".")
        let found = try connection.execute("SELECT to_regclass($1) IS NOT NULL", [.text(quoted)]).rows[0].bool(0)
        if found { return quoted }
        let names = try connection.execute(
            """
            SELECT CASE WHEN n.nspname = ANY (current_schemas(false)) THEN c.relname ELSE n.nspname || '.' || c.relname END
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
            ORDER BY 1
            """
        ).rows.map { try $0.string(0) }
        throw FerryError(
            .invalidDefinition,
            "\(source.databaseLabel) has no table '\(name)'\(Suggestions.didYouMean(name, in: names))",
            at: source.selectionLocation,
            notes: names.isEmpty ? ["it has no tables"] : ["its tables: \(names.prefix(50).joined(separator: ", "))"])
    }

    /// Fetches the next rows; the first fetch also names the columns.
    private func fetch() throws {
        let result = try connection.execute("FETCH FORWARD \(Self.batchSize) FROM ferry_source")
        if columns.isEmpty {
            columns = result.columns.map {
                DatabaseColumn(name: $0.name, type: SourceColumnType.postgres(oid: $0.typeOID))
            }
            types = columns.map(\.type)
        }
        buffered = result.rows
        position = 0
        if result.rows.count < Self.batchSize {
            done = true
            _ = try? connection.execute("COMMIT")
        }
    }

    func next() throws -> [Value]? {
        if position == buffered.count {
            if done { return nil }
            do {
                try fetch()
            } catch {
                throw FerryError(
                    .io, "reading \(source.label) failed: \(Self.reason(error))", at: source.selectionLocation)
            }
            if buffered.isEmpty { return nil }
        }
        let row = buffered[position]
        position += 1
        if let markIndex { lastMark = Self.mark(of: row.values[markIndex]) ?? lastMark }
        return row.values.enumerated().map { index, value in Self.value(value, as: types[index]) }
    }

    /// The mark of an increasing column's value, in the server's own text (a timestamp keeps every
    /// digit of its fraction, so the next run's comparison is exact).
    static func mark(of value: PostgresValue) -> IncrementalMark? {
        switch value {
        case .integer(let number): return IncrementalMark(kind: "integer", value: String(number))
        case .real(let number): return IncrementalMark(kind: "real", value: String(number))
        case .text(let text): return IncrementalMark(kind: "text", value: text)
        case .null, .bool, .bytes: return nil
        }
    }

    /// The server's message (and hint) about a failure, without a password.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? PostgresError else { return (error as? FerryError)?.message ?? "\(error)" }
        return error.message + (error.hint.map { " (hint: \($0))" } ?? "")
    }

    /// A value in ferry's typed form: numeric as canonical decimal text, timestamps as
    /// milliseconds, UUIDs in lowercase; a text the type's reading refuses (`NaN`, `infinity`)
    /// stays text, and the import's coercion rejects it with its reason.
    static func value(_ value: PostgresValue, as type: AttributeType?) -> Value {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .integer(let number): return .integer(number)
        case .real(let number): return .double(number)
        case .bytes(let bytes): return .binary(bytes)
        case .text(let text):
            switch type {
            case .decimal: return DecimalText.canonical(text).map(Value.decimal) ?? .string(text)
            case .date: return DateCoding.parseISO8601(text).map(Value.date) ?? .string(text)
            case .uuid: return .uuid(text.lowercased())
            case .json: return .json(text)
            default: return .string(text)
            }
        }
    }
}
