internal import CFerrySQLite

/// The SQL functions compiled expressions call on SQLite (`SQLTemplate.function`): ferry's text
/// functions as SQL, running the very Swift code evaluation runs (`ExpressionRuntime.lowercase`
/// and the others), so that an `INSERT … SELECT` or `UPDATE` computes exactly what evaluating the
/// expression per object would. SQLite's own `lower()`, `upper()` and `trim()` know only ASCII,
/// and `instr()` finds bytes, not Characters.
///
/// | Function | Result |
/// | --- | --- |
/// | `ferry_lowercase(text)` | `lowercase(text)` |
/// | `ferry_uppercase(text)` | `uppercase(text)` |
/// | `ferry_trim(text)` | `trim(text)` |
/// | `ferry_split_part(text, separator, index)` | `split(text, separator, index)` (a non-empty separator) |
///
/// Each returns NULL when an argument is NULL (or the index is not an integer), as evaluation
/// gives nil. Registered on every connection a store opens and on the migration step's.
enum ExpressionSQLFunctions {
    /// The functions, by their SQL names.
    enum Name: String, Sendable, CaseIterable {
        case lowercase = "ferry_lowercase"
        case uppercase = "ferry_uppercase"
        case trim = "ferry_trim"
        case splitPart = "ferry_split_part"
    }

    /// Registers every function on a connection.
    static func register(on connection: Connection) throws {
        try connection.registerRawFunction(Name.lowercase.rawValue, argumentCount: 1) { context, _, argv in
            ExpressionSQLFunctions.mapText(context, argv, ExpressionRuntime.lowercase)
        }
        try connection.registerRawFunction(Name.uppercase.rawValue, argumentCount: 1) { context, _, argv in
            ExpressionSQLFunctions.mapText(context, argv, ExpressionRuntime.uppercase)
        }
        try connection.registerRawFunction(Name.trim.rawValue, argumentCount: 1) { context, _, argv in
            ExpressionSQLFunctions.mapText(context, argv, ExpressionRuntime.trim)
        }
        try connection.registerRawFunction(Name.splitPart.rawValue, argumentCount: 3) { context, _, argv in
            guard let context, let argv else { return }
            guard let text = ExpressionSQLFunctions.text(argv[0]), let separator = ExpressionSQLFunctions.text(argv[1]),
                sqlite3_value_type(argv[2]) == SQLITE_INTEGER
            else { return sqlite3_result_null(context) }
            guard !separator.isEmpty else {
                return sqlite3_result_error(context, "split(): the separator is empty", -1)
            }
            switch ExpressionRuntime.splitPart(text, separator: separator, index: sqlite3_value_int64(argv[2])) {
            case .string(let part): ExpressionSQLFunctions.result(part, context)
            default: sqlite3_result_null(context)
            }
        }
    }

    /// A one-argument text function: NULL for NULL, else `transform` of the text.
    @inline(__always)
    private static func mapText(
        _ context: OpaquePointer?, _ argv: UnsafeMutablePointer<OpaquePointer?>?, _ transform: (String) -> String
    ) {
        guard let context, let argv else { return }
        guard let text = text(argv[0]) else { return sqlite3_result_null(context) }
        result(transform(text), context)
    }

    /// The text of an argument (numbers in SQLite's text form), nil for NULL.
    @inline(__always)
    private static func text(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) != SQLITE_NULL else { return nil }
        // sqlite3_value_text before sqlite3_value_bytes, as SQLite documents.
        guard let bytes = sqlite3_value_text(value) else { return "" }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Returns `text` as the function's result (with its byte length: a NUL inside is kept, and
    /// an empty text stays empty text, not NULL).
    @inline(__always)
    private static func result(_ text: String, _ context: OpaquePointer) {
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    sqlite3_result_text(context, base, Int32(chars.count), ferry_sqlite_transient())
                } else {
                    sqlite3_result_text(context, "", 0, ferry_sqlite_transient())
                }
            }
        }
    }
}
