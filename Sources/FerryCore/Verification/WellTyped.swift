internal import CFerrySQLite

/// The `types` check's per-value test, as one SQL function over many columns:
/// `ferry_well_typed(codes, v1, v2, …)` is 1 when every `vN` is NULL or stored as ferry stores
/// an attribute of the type `codes` names at position N, and 0 otherwise.
///
/// One call per row tests all of a row's attributes, reading the values' bytes in place (no
/// per-row allocation), which costs a fraction of SQLite evaluating `typeof(...)` and GLOB
/// patterns per column. The conditions are exactly those the SQL forms had:
///
/// | code | type | well-typed when (besides NULL) |
/// | --- | --- | --- |
/// | `s`, `i` | int16, int32 | INTEGER within the type's range |
/// | `l` | int64 | INTEGER |
/// | `b` | bool | INTEGER 0 or 1 |
/// | `f` | double, float | REAL |
/// | `d` | decimal | TEXT: optional `-`, digits, at most one `.` with a digit on each side |
/// | `t` | date | TEXT matching `[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9].[0-9]{3,}Z` |
/// | `u` | uuid | TEXT: 8-4-4-4-12 lowercase hexadecimal digits |
/// | `x` | string, uri | TEXT |
/// | `o` | binary | BLOB |
/// | `j` | json | TEXT that ``JSONSyntax`` accepts (the rule import coercion applies) |
/// | `n` | date, decimal kept as numbers (Core Data's) | INTEGER or REAL |
/// | `g` | uuid kept as bytes (Core Data's) | BLOB of 16 bytes |
///
/// Texts are tested as UTF-8 bytes over their full length: every well-formed text but JSON is
/// ASCII, so any byte of a multi-byte character, invalid UTF-8 or an embedded NUL makes a value
/// malformed; JSON must be well-formed UTF-8. A wrong number of codes, or an
/// unknown code met by a non-NULL value, is an SQL error.
enum WellTyped {
    static let functionName = "ferry_well_typed"
    /// Columns per call, below SQLite's default limit of 127 function arguments.
    static let maxColumns = 100

    /// The code of the test of a value of `type` stored in `storage` (the store's value coding
    /// says which: ferry keeps dates, decimals and UUIDs as text, Core Data as numbers and bytes).
    static func code(for type: AttributeType, storedAs storage: DatabaseValue.StorageClass) -> Character {
        switch (type, storage) {
        case (.date, .real), (.decimal, .real): return "n"
        case (.uuid, .blob): return "g"
        default: return code(for: type)
        }
    }

    /// The code of the test of a value of `type` in ferry's own forms.
    static func code(for type: AttributeType) -> Character {
        switch type {
        case .int16: return "s"
        case .int32: return "i"
        case .int64: return "l"
        case .bool: return "b"
        case .double, .float: return "f"
        case .decimal: return "d"
        case .date: return "t"
        case .uuid: return "u"
        case .string, .uri: return "x"
        case .binary: return "o"
        case .json: return "j"
        }
    }

    static func register(on connection: Connection) throws {
        try connection.registerRawFunction(functionName, argumentCount: -1) { context, argc, argv in
            guard let context, let argv, argc >= 1 else { return }
            let codes = sqlite3_value_text(argv[0])
            let count = Int(sqlite3_value_bytes(argv[0]))
            guard let codes, count == Int(argc) - 1 else {
                sqlite3_result_error(context, "\(WellTyped.functionName): expected one type code per value", -1)
                return
            }
            for index in 0..<count {
                switch WellTyped.test(codes[index], argv[index + 1]) {
                case true?: continue
                case false?:
                    sqlite3_result_int(context, 0)
                    return
                case nil:
                    sqlite3_result_error(context, "\(WellTyped.functionName): unknown type code", -1)
                    return
                }
            }
            sqlite3_result_int(context, 1)
        }
    }

    /// True when `value` is NULL or well-typed for `code`; nil for an unknown code.
    @inline(__always)
    static func test(_ code: UInt8, _ value: OpaquePointer?) -> Bool? {
        let type = sqlite3_value_type(value)
        if type == SQLITE_NULL { return true }
        switch code {
        case UInt8(ascii: "s"):
            return type == SQLITE_INTEGER && Int64(Int16.min)...Int64(Int16.max) ~= sqlite3_value_int64(value)
        case UInt8(ascii: "i"):
            return type == SQLITE_INTEGER && Int64(Int32.min)...Int64(Int32.max) ~= sqlite3_value_int64(value)
        case UInt8(ascii: "l"): return type == SQLITE_INTEGER
        case UInt8(ascii: "b"): return type == SQLITE_INTEGER && 0...1 ~= sqlite3_value_int64(value)
        case UInt8(ascii: "f"): return type == SQLITE_FLOAT
        case UInt8(ascii: "x"): return type == SQLITE_TEXT
        case UInt8(ascii: "o"): return type == SQLITE_BLOB
        case UInt8(ascii: "d"): return type == SQLITE_TEXT && text(value, isDecimal)
        case UInt8(ascii: "t"): return type == SQLITE_TEXT && text(value, isDate)
        case UInt8(ascii: "u"): return type == SQLITE_TEXT && text(value, isUUID)
        case UInt8(ascii: "j"): return type == SQLITE_TEXT && text(value, JSONSyntax.isValue)
        case UInt8(ascii: "n"): return type == SQLITE_INTEGER || type == SQLITE_FLOAT
        case UInt8(ascii: "g"): return type == SQLITE_BLOB && sqlite3_value_bytes(value) == 16
        default: return nil
        }
    }

    @inline(__always)
    private static func text(_ value: OpaquePointer?, _ test: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        // sqlite3_value_text before sqlite3_value_bytes, as SQLite documents.
        guard let bytes = sqlite3_value_text(value) else { return test(UnsafeBufferPointer(start: nil, count: 0)) }
        return test(UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))))
    }

    // MARK: Byte tests

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    @inline(__always)
    private static func isHex(_ byte: UInt8) -> Bool { isDigit(byte) || byte &- UInt8(ascii: "a") < 6 }

    /// `-?` then digits with at most one `.`, which is neither first (after the sign) nor last.
    static func isDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = bytes.count
        var index = n > 0 && bytes[0] == UInt8(ascii: "-") ? 1 : 0
        let first = index
        guard first < n else { return false }  // "" and "-"
        var sawDot = false
        while index < n {
            let byte = bytes[index]
            if byte == UInt8(ascii: ".") {
                if sawDot || index == first || index == n - 1 { return false }
                sawDot = true
            } else if !isDigit(byte) {
                return false
            }
            index += 1
        }
        return true
    }

    /// `YYYY-MM-DDTHH:MM:SS.sssZ` with the digit ranges of the former GLOB pattern, or with more
    /// fractional digits (a date between two milliseconds, `DateCoding.format(_:)`).
    static func isDate(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count >= 24, b[b.count - 1] == UInt8(ascii: "Z") else { return false }
        func digit(_ i: Int, max: UInt8 = 9) -> Bool { b[i] &- UInt8(ascii: "0") <= max }
        for index in 20..<(b.count - 1) where !digit(index) { return false }
        return digit(0) && digit(1) && digit(2) && digit(3) && b[4] == UInt8(ascii: "-")
            && digit(5, max: 1) && digit(6) && b[7] == UInt8(ascii: "-") && digit(8, max: 3) && digit(9)
            && b[10] == UInt8(ascii: "T") && digit(11, max: 2) && digit(12) && b[13] == UInt8(ascii: ":")
            && digit(14, max: 5) && digit(15) && b[16] == UInt8(ascii: ":") && digit(17, max: 6) && digit(18)
            && b[19] == UInt8(ascii: ".")
    }

    /// 8-4-4-4-12 lowercase hexadecimal digits.
    static func isUUID(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard b.count == 36 else { return false }
        for index in 0..<36 {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                if b[index] != UInt8(ascii: "-") { return false }
            } else if !isHex(b[index]) {
                return false
            }
        }
        return true
    }
}
