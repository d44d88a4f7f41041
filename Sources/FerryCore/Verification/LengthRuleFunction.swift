internal import CFerrySQLite

/// `ferry_rule_length(value)`, the length `ferry verify` tests `min_length` and `max_length`
/// against: ``LengthRule``'s, the one import applies, counted on the stored bytes in place.
///
/// TEXT counts UTF-16 code units (``LengthRule/utf16Count(_:)``), a BLOB its bytes, a number the
/// UTF-16 length of the text SQLite converts it to; NULL stays NULL.
enum LengthRuleFunction {
    static let functionName = "ferry_rule_length"

    static func register(on connection: Connection) throws {
        try connection.registerRawFunction(functionName, argumentCount: 1) { context, argc, argv in
            guard let context, let argv, argc == 1 else { return }
            let value = argv[0]
            switch sqlite3_value_type(value) {
            case SQLITE_NULL:
                sqlite3_result_null(context)
            case SQLITE_BLOB:
                sqlite3_result_int64(context, Int64(sqlite3_value_bytes(value)))
            default:
                // sqlite3_value_text before sqlite3_value_bytes, as SQLite documents.
                let text = sqlite3_value_text(value)
                let bytes = UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
                sqlite3_result_int64(context, Int64(LengthRule.utf16Count(bytes)))
            }
        }
    }
}
