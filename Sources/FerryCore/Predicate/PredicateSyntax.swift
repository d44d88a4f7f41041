/// The SQL a compiled predicate is written in: what differs between SQLite, where ferry
/// registers its own string functions (``PredicateFunctions``), and PostgreSQL, where it
/// registers nothing on the server and pushes down only what PostgreSQL computes exactly as
/// ferry does (see ``Predicate/postgresFilter(for:model:layout:alias:)``).
package enum PredicateSyntax: Sendable, Hashable {
    case sqlite
    case postgresql

    /// The boolean constants.
    func constant(_ flag: Bool) -> String {
        switch self {
        case .sqlite: return flag ? "1" : "0"
        case .postgresql: return flag ? "TRUE" : "FALSE"
        }
    }

    /// True unless `sql` is true (a NULL comparison counts as false before negation).
    func isNotTrue(_ sql: String) -> String {
        switch self {
        case .sqlite: return "(\(sql)) IS NOT 1"
        case .postgresql: return "(\(sql)) IS NOT TRUE"
        }
    }

    /// `a` equals `b`, NULL equal to NULL (or, with `negated`, differs from it).
    func same(_ a: String, _ b: String, negated: Bool) -> String {
        switch self {
        case .sqlite: return negated ? "\(a) IS NOT \(b)" : "\(a) IS \(b)"
        case .postgresql: return negated ? "\(a) IS DISTINCT FROM \(b)" : "\(a) IS NOT DISTINCT FROM \(b)"
        }
    }

    /// A decimal column compared as SQLite compares it: as a 64-bit float.
    func real(_ sql: String) -> String {
        switch self {
        case .sqlite: return "CAST(\(sql) AS REAL)"
        case .postgresql: return "(\(sql))::float8"
        }
    }

    /// A text operand ordered byte-wise (SQLite's `BINARY`; PostgreSQL's `"C"` collation).
    func byteOrdered(_ sql: String) -> String {
        switch self {
        case .sqlite: return sql
        case .postgresql: return "\(sql) COLLATE \"C\""
        }
    }
}

/// Why a comparison is not pushed down to PostgreSQL: ferry evaluates it on the rows instead.
/// Carried as the `underlying` error of the `FerryError` the compiler throws.
package struct PredicatePushdownLimit: Error, Sendable, Hashable {
    package var reason: String
}
