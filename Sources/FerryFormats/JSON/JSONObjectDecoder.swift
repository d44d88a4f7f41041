import FerryCore

/// Turns the members of one JSON object into fields, for both JSON readers.
///
/// Keys are interned through a ``JSONFieldTable``; the field index seen at each member position
/// of the previous object is tried first, so records with the same key order never hash.
/// Values go into ``fields`` as kinds and bytes. Duplicate keys: the last occurrence wins.
final class JSONObjectDecoder {
    let table = JSONFieldTable()
    /// The members of the last object decoded.
    let fields = JSONObjectFields()
    /// Registered names that are paths into nested objects (`address.city`).
    private let paths = JSONPathFields()
    /// The field index found at each member position of the previous object.
    @exclusivity(unchecked) private var predicted: [Int] = []
    /// Where the compact text of the nested value being read starts in the fields' arena.
    @exclusivity(unchecked) private var compactStart = 0

    /// Reads the members of the object whose `{` the tokenizer just returned, up to its `}`,
    /// into ``fields``.
    func decodeObject(_ tokenizer: JSONTokenizer) throws {
        let fields = self.fields
        fields.reset(fieldCount: table.count)
        var ordinal = 0
        while true {
            let token = try tokenizer.next()
            if token == .endObject { break }
            let index = tokenizer.withStringBytes { bytes -> Int in
                if ordinal < predicted.count {
                    let guess = predicted[ordinal]
                    if table.matches(guess, bytes) { return guess }
                    let found = table.index(bytes: bytes)
                    predicted[ordinal] = found
                    return found
                }
                let found = table.index(bytes: bytes)
                predicted.append(found)
                return found
            }
            ordinal += 1
            try decodeValue(try tokenizer.next(), into: index, tokenizer)
        }
        paths.resolve(fields, table: table)
    }

    /// Reads the values of the array whose `[` the tokenizer just returned (a row of the `rows`
    /// shape), up to its `]`, into ``fields``: the value at position `i` is field `indexes[i]`.
    /// Returns how many values the row has; the values beyond `indexes` are read and dropped.
    func decodeRow(_ tokenizer: JSONTokenizer, indexes: [Int]) throws -> Int {
        fields.reset(fieldCount: table.count)
        var position = 0
        while true {
            let token = try tokenizer.next()
            if token == .endArray { break }
            if position < indexes.count {
                try decodeValue(token, into: indexes[position], tokenizer)
            } else if token == .beginObject || token == .beginArray {
                try tokenizer.skipContainer()
            }
            position += 1
        }
        return position
    }

    /// Stores the value whose first token the tokenizer just returned as field `index`.
    @inline(__always)
    private func decodeValue(_ valueToken: JSONToken, into index: Int, _ tokenizer: JSONTokenizer) throws {
        let fields = self.fields
        let line = tokenizer.line
        let column = tokenizer.tokenColumn
        switch valueToken {
        case .string:
            tokenizer.withStringBytes { fields.set(index, kind: .string, bytes: $0, line: line, column: column) }
        case .number:
            tokenizer.withTokenBytes { fields.set(index, kind: .number, bytes: $0, line: line, column: column) }
        case .true: fields.set(index, kind: .true, line: line, column: column)
        case .false: fields.set(index, kind: .false, line: line, column: column)
        case .null: fields.set(index, kind: .null, line: line, column: column)
        case .beginObject, .beginArray:
            // Written straight into the fields' arena: a nested value of a 60 MB record is not
            // copied through a buffer of its own.
            compactStart = fields.arenaEnd
            try compactBytes(tokenizer, opening: valueToken)
            fields.set(index, kind: .nested, from: compactStart, line: line, column: column)
        case .endObject, .endArray, .key, .end:
            throw tokenizer.error("internal error: unexpected token in a record", at: tokenizer.tokenStart)
        }
    }

    /// Reads the header row (the array whose `[` the tokenizer just returned): column names,
    /// strings, distinct; returns their field indexes in order.
    func decodeHeader(_ tokenizer: JSONTokenizer) throws -> [Int] {
        var indexes: [Int] = []
        var names = Set<String>()
        while true {
            let token = try tokenizer.next()
            if token == .endArray { break }
            guard token == .string else {
                throw tokenizer.error(
                    "the header row must hold column names (strings), not \(Self.describe(token))",
                    at: tokenizer.tokenStart)
            }
            let name = tokenizer.stringValue()
            guard names.insert(name).inserted else {
                throw tokenizer.error("duplicate column name '\(name)' in the header row", at: tokenizer.tokenStart)
            }
            indexes.append(tokenizer.withStringBytes { table.index(bytes: $0) })
        }
        return indexes
    }

    /// Why a row of the `rows` shape with the wrong number of values is rejected.
    static func rowLengthProblem(expected: Int, found: Int, headerRow: Bool) -> String {
        "expected \(expected) value\(expected == 1 ? "" : "s") (\(headerRow ? "the header row's columns" : "the columns")) but found \(found)"
    }

    /// The field indexes of given column names (the `rows` shape without a header row).
    func columnIndexes(_ columns: [String]) -> [Int] {
        columns.map { name in
            var copy = name
            return copy.withUTF8 { table.index(bytes: $0) }
        }
    }

    /// Compact JSON text of the container whose begin token was just returned, consuming it,
    /// appended to the fields' arena from ``compactStart`` on.
    ///
    /// Strings are re-escaped minimally (`"`, `\`, control characters); numbers keep their
    /// source spelling; no white space.
    private func compactBytes(_ tokenizer: JSONTokenizer, opening: JSONToken) throws {
        let compact = fields
        compact.append(opening == .beginObject ? 0x7B : 0x5B)
        let target = tokenizer.depth - 1
        while tokenizer.depth > target {
            let token = try tokenizer.next()
            switch token {
            case .endObject: compact.append(0x7D)
            case .endArray: compact.append(0x5D)
            case .beginObject:
                separate()
                compact.append(0x7B)
            case .beginArray:
                separate()
                compact.append(0x5B)
            case .key:
                separate()
                appendQuoted(tokenizer)
                compact.append(0x3A)
            case .string:
                separate()
                appendQuoted(tokenizer)
            case .number:
                separate()
                tokenizer.withTokenBytes { compact.append($0) }
            case .true:
                separate()
                appendWord("true")
            case .false:
                separate()
                appendWord("false")
            case .null:
                separate()
                appendWord("null")
            case .end:
                throw tokenizer.error("internal error: unexpected end of a nested value", at: tokenizer.tokenStart)
            }
        }
    }

    /// Appends a comma unless the text so far ends a container opening or a key.
    @inline(__always)
    private func separate() {
        if let last = fields.lastByte(since: compactStart), last != 0x7B && last != 0x5B && last != 0x3A {
            fields.append(0x2C)
        }
    }

    private func appendWord(_ word: StaticString) {
        word.withUTF8Buffer { fields.append($0) }
    }

    /// Appends the last string token quoted, escaping only `"`, `\` and control characters;
    /// the runs between them are copied whole.
    private func appendQuoted(_ tokenizer: JSONTokenizer) {
        let compact = fields
        compact.append(0x22)
        tokenizer.withStringBytes { bytes in
            var run = 0
            for index in 0..<bytes.count {
                let b = bytes[index]
                guard b < 0x20 || b == 0x22 || b == 0x5C else { continue }
                compact.append(UnsafeBufferPointer(rebasing: bytes[run..<index]))
                run = index + 1
                switch b {
                case 0x22, 0x5C: appendEscape(b)
                case 0x0A: appendEscape(0x6E)
                case 0x0D: appendEscape(0x72)
                case 0x09: appendEscape(0x74)
                case 0x08: appendEscape(0x62)
                case 0x0C: appendEscape(0x66)
                default:
                    let digits: StaticString = "0123456789abcdef"
                    appendEscape(0x75)
                    compact.append(0x30)
                    compact.append(0x30)
                    compact.append(digits.utf8Start[Int(b >> 4)])
                    compact.append(digits.utf8Start[Int(b & 0xF)])
                }
            }
            compact.append(UnsafeBufferPointer(rebasing: bytes[run..<bytes.count]))
        }
        compact.append(0x22)
    }

    @inline(__always)
    private func appendEscape(_ letter: UInt8) {
        fields.append(0x5C)
        fields.append(letter)
    }

    /// A readable name for a value token (in messages: "found a number").
    static func describe(_ token: JSONToken) -> String {
        switch token {
        case .beginObject: return "an object"
        case .beginArray: return "an array"
        case .string, .key: return "a string"
        case .number: return "a number"
        case .true, .false: return "a boolean"
        case .null: return "null"
        case .endObject, .endArray, .end: return "the end of a container"
        }
    }
}
