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
    /// Reused buffer for compact JSON text of nested values.
    @exclusivity(unchecked) private var compact: [UInt8] = []

    init() {
        compact.reserveCapacity(256)
    }

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
            try compactBytes(tokenizer, opening: valueToken)
            compact.withUnsafeBufferPointer { fields.set(index, kind: .nested, bytes: $0, line: line, column: column) }
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
    /// into ``compact``.
    ///
    /// Strings are re-escaped minimally (`"`, `\`, control characters); numbers keep their
    /// source spelling; no white space.
    func compactBytes(_ tokenizer: JSONTokenizer, opening: JSONToken) throws {
        compact.removeAll(keepingCapacity: true)
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
                tokenizer.withTokenBytes { compact.append(contentsOf: $0) }
            case .true:
                separate()
                compact.append(contentsOf: "true".utf8)
            case .false:
                separate()
                compact.append(contentsOf: "false".utf8)
            case .null:
                separate()
                compact.append(contentsOf: "null".utf8)
            case .end:
                throw tokenizer.error("internal error: unexpected end of a nested value", at: tokenizer.tokenStart)
            }
        }
    }

    /// Appends a comma unless the text so far ends a container opening or a key.
    @inline(__always)
    private func separate() {
        if let last = compact.last, last != 0x7B && last != 0x5B && last != 0x3A { compact.append(0x2C) }
    }

    private func appendQuoted(_ tokenizer: JSONTokenizer) {
        compact.append(0x22)
        tokenizer.withStringBytes { bytes in
            for b in bytes {
                switch b {
                case 0x22: compact.append(contentsOf: [0x5C, 0x22])
                case 0x5C: compact.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: compact.append(contentsOf: [0x5C, 0x6E])
                case 0x0D: compact.append(contentsOf: [0x5C, 0x72])
                case 0x09: compact.append(contentsOf: [0x5C, 0x74])
                case 0x08: compact.append(contentsOf: [0x5C, 0x62])
                case 0x0C: compact.append(contentsOf: [0x5C, 0x66])
                case 0..<0x20:
                    let digits: [UInt8] = Array("0123456789abcdef".utf8)
                    compact.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, digits[Int(b >> 4)], digits[Int(b & 0xF)]])
                default: compact.append(b)
                }
            }
        }
        compact.append(0x22)
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
