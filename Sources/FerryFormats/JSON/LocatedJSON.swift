import FerryCore

/// A JSON value with the line and column where each of its parts starts: how an import reads a
/// field's nested objects and arrays (related objects) and names the place of a bad value.
package struct LocatedJSON: Sendable {
    package enum Content: Sendable {
        case object([(key: String, value: LocatedJSON)])
        case array([LocatedJSON])
        /// A string, number, boolean or null, as a reader hands over a field.
        case scalar(FieldValue)
    }

    package var content: Content
    /// 1-based line and byte column where the value starts.
    package var line: Int
    package var column: Int

    /// The value as a field of a record (a container becomes compact JSON text).
    package var field: Field {
        switch content {
        case .scalar(let value): return Field(value: value, line: line, column: column)
        case .object, .array: return Field(value: .json(compactText), line: line, column: column)
        }
    }

    /// The member `key` of an object (the last one when it is repeated, as the readers do).
    package subscript(key: String) -> LocatedJSON? {
        guard case .object(let members) = content else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// The compact JSON text of the value.
    package var compactText: String {
        switch content {
        case .scalar(let value):
            switch value {
            case .null: return "null"
            case .bool(let flag): return flag ? "true" : "false"
            case .number(let text), .json(let text): return text
            case .text(let text): return JSONEscaping.quote(text)
            case .typed(let typed): return JSONEscaping.quote("\(typed)")
            }
        case .array(let items): return "[" + items.map(\.compactText).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { JSONEscaping.quote($0.key) + ":" + $0.value.compactText }.joined(separator: ",")
                + "}"
        }
    }

    /// The located value of a record's field: parsed from the record's raw bytes at the field's
    /// position, so that every nested part keeps its own line and column; from the field's
    /// compact text (every part then located at the field) when the raw bytes do not hold it.
    package static func value(of field: Field, in record: SourceRecord) -> LocatedJSON? {
        guard case .json(let text) = field.value else {
            return LocatedJSON(content: .scalar(field.value), line: field.line, column: field.column)
        }
        if let offset = offset(ofLine: field.line, column: field.column, in: record) {
            var parser = Parser(
                bytes: record.rawBytes, position: offset, line: field.line, lineStart: offset - (field.column - 1))
            if let value = try? parser.parseValue() { return value }
        }
        var parser = Parser(
            bytes: Array(text.utf8), position: 0, line: field.line, lineStart: -(field.column - 1),
            fixedAt: (field.line, field.column))
        return try? parser.parseValue()
    }

    /// The index in the record's raw bytes of a line and byte column, nil when outside them.
    private static func offset(ofLine line: Int, column: Int, in record: SourceRecord) -> Int? {
        var currentLine = record.line
        var lineStartColumn = record.column  // the column of rawBytes[lineStart]
        var lineStart = 0
        let bytes = record.rawBytes
        while currentLine < line {
            guard let newline = bytes[lineStart...].firstIndex(of: 0x0A) else { return nil }
            lineStart = newline + 1
            lineStartColumn = 1
            currentLine += 1
        }
        let index = lineStart + (column - lineStartColumn)
        return index >= lineStart && index < bytes.count
            && (bytes[index] == UInt8(ascii: "{") || bytes[index] == UInt8(ascii: "[")) ? index : nil
    }

    /// A recursive reader of JSON the record's reader has already checked (so it only needs to
    /// build values and track positions); nesting is bounded by the reader's `max_depth`.
    private struct Parser {
        struct Malformed: Error {}
        let bytes: [UInt8]
        var position: Int
        var line: Int
        var lineStart: Int
        /// Every value located here (for compact text, which has no positions of its own).
        var fixedAt: (line: Int, column: Int)?

        mutating func parseValue() throws -> LocatedJSON {
            skipWhitespace()
            guard position < bytes.count else { throw Malformed() }
            let here = fixedAt ?? (line, position - lineStart + 1)
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                var members: [(key: String, value: LocatedJSON)] = []
                skipWhitespace()
                if peek == UInt8(ascii: "}") {
                    position += 1
                    return LocatedJSON(content: .object(members), line: here.0, column: here.1)
                }
                while true {
                    skipWhitespace()
                    let key = try parseString()
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    members.append((key, try parseValue()))
                    skipWhitespace()
                    if peek == UInt8(ascii: ",") {
                        position += 1
                        continue
                    }
                    try expect(UInt8(ascii: "}"))
                    return LocatedJSON(content: .object(members), line: here.0, column: here.1)
                }
            case UInt8(ascii: "["):
                position += 1
                var items: [LocatedJSON] = []
                skipWhitespace()
                if peek == UInt8(ascii: "]") {
                    position += 1
                    return LocatedJSON(content: .array(items), line: here.0, column: here.1)
                }
                while true {
                    items.append(try parseValue())
                    skipWhitespace()
                    if peek == UInt8(ascii: ",") {
                        position += 1
                        continue
                    }
                    try expect(UInt8(ascii: "]"))
                    return LocatedJSON(content: .array(items), line: here.0, column: here.1)
                }
            case UInt8(ascii: "\""):
                return LocatedJSON(content: .scalar(.text(try parseString())), line: here.0, column: here.1)
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                let word = scanWord()
                switch word {
                case "true": return LocatedJSON(content: .scalar(.bool(true)), line: here.0, column: here.1)
                case "false": return LocatedJSON(content: .scalar(.bool(false)), line: here.0, column: here.1)
                case "null": return LocatedJSON(content: .scalar(.null), line: here.0, column: here.1)
                default: throw Malformed()
                }
            default:
                let word = scanWord()
                guard !word.isEmpty else { throw Malformed() }
                return LocatedJSON(content: .scalar(.number(word)), line: here.0, column: here.1)
            }
        }

        var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func expect(_ byte: UInt8) throws {
            guard peek == byte else { throw Malformed() }
            position += 1
        }

        mutating func skipWhitespace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                position += 1
                if byte == 0x0A {
                    line += 1
                    lineStart = position
                }
            }
        }

        mutating func scanWord() -> String {
            let start = position
            while let byte = peek,
                !(byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte <= 0x20)
            { position += 1 }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        mutating func parseString() throws -> String {
            try expect(UInt8(ascii: "\""))
            var scalars = String.UnicodeScalarView()
            var run: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll(keepingCapacity: true)
            }
            while let byte = peek {
                position += 1
                if byte == UInt8(ascii: "\"") {
                    flush()
                    return String(scalars)
                }
                guard byte == UInt8(ascii: "\\") else {
                    run.append(byte)
                    continue
                }
                flush()
                guard let escaped = peek else { throw Malformed() }
                position += 1
                switch escaped {
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "u"):
                    var value = try hex4()
                    if (0xD800..<0xDC00).contains(value), peek == UInt8(ascii: "\\") {
                        position += 2
                        let low = try hex4()
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    }
                    scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
                default: scalars.append(Unicode.Scalar(escaped))
                }
            }
            throw Malformed()
        }

        mutating func hex4() throws -> UInt32 {
            guard position + 4 <= bytes.count,
                let value = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
            else { throw Malformed() }
            position += 4
            return value
        }
    }
}
