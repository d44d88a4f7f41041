/// The fields of one row in `COPY … TO STDOUT`'s text format (what ``PostgresCopyOutStream``
/// reads): fields separated by tabs, the row ended by a newline, NULL as `\N`, and backslash
/// escapes (`\\`, `\t`, `\n`, `\r`, `\b`, `\f`, `\v`, and, as `COPY FROM` reads them, a
/// backslash and one to three octal digits or `x` and one or two hex digits; any other escaped
/// character stands for itself).
///
/// The reverse of ``PostgresCopyText``.
public enum PostgresCopyTextFields {
    /// Calls `body` with the index and the unescaped bytes of each field of `row` (nil for
    /// NULL), in order, and returns the number of fields. A field without escapes is handed as a
    /// slice of `row`; an escaped one is decoded into `scratch` first. The bytes are valid only
    /// during the call.
    @discardableResult
    public static func forEach(
        in row: UnsafeBufferPointer<UInt8>, scratch: inout [UInt8],
        _ body: (Int, UnsafeBufferPointer<UInt8>?) throws -> Void
    ) rethrows -> Int {
        var end = row.count
        if end > 0, row[end - 1] == newline { end -= 1 }
        var start = 0
        var field = 0
        while true {
            var position = start
            var escaped = false
            while position < end {
                let byte = row[position]
                if byte == tab { break }
                if byte == backslash { escaped = true }
                position += 1
            }
            let bytes = UnsafeBufferPointer(rebasing: row[start..<position])
            if !escaped {
                try body(field, bytes)
            } else if bytes.count == 2, bytes[1] == UInt8(ascii: "N") {
                try body(field, nil)
            } else {
                unescape(bytes, into: &scratch)
                try scratch.withUnsafeBufferPointer { try body(field, $0) }
            }
            field += 1
            if position >= end { return field }
            start = position + 1
        }
    }

    private static let tab = UInt8(ascii: "\t")
    private static let newline = UInt8(ascii: "\n")
    private static let backslash = UInt8(ascii: "\\")

    /// `bytes` with COPY's escapes decoded, in `output` (emptied first); ferry's `pgcopy` file
    /// format reads its fields with it too.
    package static func unescape(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        output.removeAll(keepingCapacity: true)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            guard byte == backslash, index < bytes.count else {
                output.append(byte)
                continue
            }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "b"): output.append(8)
            case UInt8(ascii: "f"): output.append(12)
            case UInt8(ascii: "n"): output.append(10)
            case UInt8(ascii: "r"): output.append(13)
            case UInt8(ascii: "t"): output.append(9)
            case UInt8(ascii: "v"): output.append(11)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = Int(escape - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3, index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[index]) {
                    value = value * 8 + Int(bytes[index] - UInt8(ascii: "0"))
                    index += 1
                    digits += 1
                }
                output.append(UInt8(truncatingIfNeeded: value))
            case UInt8(ascii: "x") where index < bytes.count && PostgresValue.hexDigit(bytes[index]) != nil:
                var value = PostgresValue.hexDigit(bytes[index]) ?? 0
                index += 1
                if index < bytes.count, let low = PostgresValue.hexDigit(bytes[index]) {
                    value = value << 4 | low
                    index += 1
                }
                output.append(value)
            default:
                output.append(escape)
            }
        }
    }
}
