import FerryCore

/// A JSON value with the line and column where each of its parts starts: how an import reads a
/// field's nested objects and arrays (related objects) and names the place of a bad value.
///
/// A cheap view into the record's own bytes, as fast JSON readers do it: reading a nested value
/// makes one pass over its bytes that notes where each object and array starts and ends (two
/// 32-bit offsets per container, nothing per string, number or key), and a value's members or
/// elements are found from there one level at a time, when asked for. Strings and numbers are
/// decoded only when read, and a line and column are counted from the bytes only when asked
/// for (a bad value's place). So a record of N bytes takes about N bytes more, not a tree of
/// values many times its size.
package struct LocatedJSON: Sendable {
    /// One level of the value: an object's members, an array's elements, or a scalar.
    package enum Content: Sendable {
        case object([(key: String, value: LocatedJSON)])
        case array([LocatedJSON])
        /// A string, number, boolean or null, as a reader hands over a field.
        case scalar(FieldValue)
    }

    /// What kind of JSON value this is (without reading it).
    package enum Kind: Sendable, Equatable {
        case object, array, string, number, bool, null
    }

    private enum Storage: Sendable {
        /// A value read from JSON bytes: where it starts, and its container's index (-1 for a scalar).
        case bytes(Document, start: Int, container: Int)
        /// A field's scalar value as the reader gave it, at the field's place.
        case given(FieldValue, line: Int, column: Int)
    }

    private let storage: Storage

    private init(_ storage: Storage) { self.storage = storage }

    /// The value's kind.
    package var kind: Kind {
        switch storage {
        case .given(let value, _, _):
            switch value {
            case .null: return .null
            case .bool: return .bool
            case .number: return .number
            case .json(let text): return text.utf8.first == UInt8(ascii: "[") ? .array : .object
            case .text, .typed: return .string
            }
        case .bytes(let document, let start, _):
            switch document.bytes[start] {
            case UInt8(ascii: "{"): return .object
            case UInt8(ascii: "["): return .array
            case UInt8(ascii: "\""): return .string
            case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
            case UInt8(ascii: "n"): return .null
            default: return .number
            }
        }
    }

    /// One level of the value: an object's members or an array's elements as views (their own
    /// parts are read when asked for), or a scalar's value.
    package var content: Content {
        switch kind {
        case .object: return .object(members)
        case .array: return .array(Array(elements))
        default: return .scalar(fieldValue)
        }
    }

    /// 1-based line where the value starts (counted from the bytes: for messages, not loops).
    package var line: Int { position.line }
    /// 1-based byte column where the value starts.
    package var column: Int { position.column }

    /// The line and column where the value starts.
    package var position: (line: Int, column: Int) {
        switch storage {
        case .given(_, let line, let column): return (line, column)
        case .bytes(let document, let start, _): return document.position(of: start)
        }
    }

    /// The value as a field of a record (a container becomes compact JSON text).
    package var field: Field {
        let (line, column) = position
        return Field(value: fieldValue, line: line, column: column)
    }

    /// The value as a record's field holds it: a scalar's value, a container's compact JSON text.
    package var fieldValue: FieldValue {
        switch storage {
        case .given(let value, _, _): return value
        case .bytes(let document, let start, let container):
            if container >= 0 { return .json(compactText) }
            switch document.bytes[start] {
            case UInt8(ascii: "\""): return .text(document.string(at: start).text)
            case UInt8(ascii: "t"): return .bool(true)
            case UInt8(ascii: "f"): return .bool(false)
            case UInt8(ascii: "n"): return .null
            default: return .number(document.word(at: start).text)
            }
        }
    }

    /// An object's members, one level (a repeated key appears each time); empty for other kinds.
    package var members: [(key: String, value: LocatedJSON)] {
        guard case .bytes(let document, let start, let container) = storage, container >= 0,
            document.bytes[start] == UInt8(ascii: "{")
        else { return [] }
        var members: [(key: String, value: LocatedJSON)] = []
        document.forEachItem(of: container) { key, value, valueContainer in
            let name = key.map { document.string(at: $0).text } ?? ""
            members.append((name, LocatedJSON(.bytes(document, start: value, container: valueContainer))))
            return true
        }
        return members
    }

    /// The member `key` of an object (the last one when it is repeated, as the readers do).
    package subscript(key: String) -> LocatedJSON? {
        guard case .bytes(let document, let start, let container) = storage, container >= 0,
            document.bytes[start] == UInt8(ascii: "{")
        else { return nil }
        var found: LocatedJSON?
        var wanted = key
        wanted.withUTF8 { wantedBytes in
            document.forEachItem(of: container) { keyStart, value, valueContainer in
                if let keyStart, document.stringEquals(at: keyStart, wantedBytes) {
                    found = LocatedJSON(.bytes(document, start: value, container: valueContainer))
                }
                return true
            }
        }
        return found
    }

    /// An array's elements, read one after the other as the sequence is walked (an array of a
    /// million objects is never held as a million values); empty for other kinds.
    package var elements: Elements {
        guard case .bytes(let document, let start, let container) = storage, container >= 0,
            document.bytes[start] == UInt8(ascii: "[")
        else { return Elements(document: nil, container: 0) }
        return Elements(document: document, container: container)
    }

    /// The elements of an array, as views, in order.
    package struct Elements: Sequence {
        fileprivate let document: Document?
        fileprivate let container: Int

        /// No elements.
        package init() {
            document = nil
            container = 0
        }

        fileprivate init(document: Document?, container: Int) {
            self.document = document
            self.container = container
        }

        package func makeIterator() -> Iterator {
            Iterator(document: document, cursor: document.map { $0.firstItem(of: container) })
        }

        /// Walks an array's elements.
        package struct Iterator: IteratorProtocol {
            fileprivate let document: Document?
            fileprivate var cursor: Document.Cursor?

            package mutating func next() -> LocatedJSON? {
                guard let document, var current = cursor,
                    let item = document.nextItem(&current, keyed: false)
                else { return nil }
                cursor = current
                return LocatedJSON(.bytes(document, start: item.value, container: item.container))
            }
        }
    }

    /// The compact JSON text of the value (no white space; strings re-escaped minimally, as the
    /// readers write a nested field's text).
    package var compactText: String {
        switch storage {
        case .given(let value, _, _):
            switch value {
            case .null: return "null"
            case .bool(let flag): return flag ? "true" : "false"
            case .number(let text), .json(let text): return text
            case .text(let text): return JSONEscaping.quote(text)
            case .typed(let typed): return JSONEscaping.quote("\(typed)")
            }
        case .bytes(let document, let start, let container):
            let end = container >= 0 ? Int(document.ends[container]) + 1 : document.scalarEnd(at: start)
            return document.compactText(from: start, to: end)
        }
    }

    /// The located value of a record's field: read from the record's raw bytes at the field's
    /// position, so that every nested part keeps its own line and column; from the field's
    /// compact text (every part then located at the field) when the raw bytes do not hold it.
    /// Nil only for a nested value that neither holds (malformed, or 4 GiB or more).
    package static func value(of field: Field, in record: SourceRecord) -> LocatedJSON? {
        guard case .json(let text) = field.value else {
            return LocatedJSON(.given(field.value, line: field.line, column: field.column))
        }
        if let offset = offset(ofLine: field.line, column: field.column, in: record),
            let document = Document(
                bytes: record.rawBytes, root: offset, line: field.line, lineStart: offset - (field.column - 1))
        {
            return LocatedJSON(.bytes(document, start: offset, container: 0))
        }
        guard
            let document = Document(
                bytes: Array(text.utf8), root: 0, line: field.line, lineStart: 0,
                fixedAt: Document.Place(line: field.line, column: field.column))
        else { return nil }
        return LocatedJSON(.bytes(document, start: 0, container: 0))
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
}

/// The bytes a nested value lives in and the index of its containers: where each object and
/// array starts and where its closing bracket is, in the order they open (so sorted by start).
/// Built in one pass over JSON the record's reader has already checked; nesting is bounded by
/// the reader's `max_depth`.
private final class Document: Sendable {
    struct Place: Sendable {
        let line: Int
        let column: Int
    }

    let bytes: [UInt8]
    /// Where each container starts and ends (its closing bracket), in the order they open.
    let starts: [UInt32]
    let ends: [UInt32]
    /// Where the root value starts, its line, and the (possibly negative) index its line's
    /// column 1 would have in `bytes`.
    let root: Int
    let line: Int
    let lineStart: Int
    /// Every value located here (compact text, which has no positions of its own).
    let fixedAt: Place?

    /// Nil when the bytes from `root` on are not one whole container, or the bytes are 4 GiB or more.
    init?(bytes: [UInt8], root: Int, line: Int, lineStart: Int, fixedAt: Place? = nil) {
        guard bytes.count < Int(UInt32.max), root < bytes.count,
            bytes[root] == UInt8(ascii: "{") || bytes[root] == UInt8(ascii: "[")
        else { return nil }
        var starts: [UInt32] = []
        var ends: [UInt32] = []
        let complete = bytes.withUnsafeBufferPointer { buffer -> Bool in
            var open: [Int] = []
            var index = root
            let count = buffer.count
            while index < count {
                let byte = buffer[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    while index < count && buffer[index] != UInt8(ascii: "\"") {
                        index += buffer[index] == UInt8(ascii: "\\") ? 2 : 1
                    }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    open.append(starts.count)
                    starts.append(UInt32(index))
                    ends.append(0)
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    guard let container = open.popLast(),
                        buffer[Int(starts[container])]
                            == (byte == UInt8(ascii: "}") ? UInt8(ascii: "{") : UInt8(ascii: "["))
                    else { return false }
                    ends[container] = UInt32(index)
                    if open.isEmpty { return true }
                default: break
                }
                index += 1
            }
            return false
        }
        guard complete else { return nil }
        self.bytes = bytes
        self.starts = starts
        self.ends = ends
        self.root = root
        self.line = line
        self.lineStart = lineStart
        self.fixedAt = fixedAt
    }

    /// The line and column of a byte index: lines counted from the root's.
    func position(of index: Int) -> (line: Int, column: Int) {
        if let fixedAt { return (fixedAt.line, fixedAt.column) }
        var lines = 0
        var start = lineStart
        bytes.withUnsafeBufferPointer { buffer in
            for scan in root..<index where buffer[scan] == 0x0A {
                lines += 1
                start = scan + 1
            }
        }
        return (line + lines, index - start + 1)
    }

    /// The index of the container that starts at `index`.
    func container(at index: Int) -> Int {
        let target = UInt32(index)
        var low = 0
        var high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if starts[middle] < target { low = middle + 1 } else { high = middle }
        }
        precondition(low < starts.count && starts[low] == target, "a container starts where its bracket is")
        return low
    }

    /// Where the walk of a container's items is: the next byte to read, and where it stops.
    struct Cursor {
        var index: Int
        let end: Int
    }

    func firstItem(of container: Int) -> Cursor {
        Cursor(index: Int(starts[container]) + 1, end: Int(ends[container]))
    }

    /// The next member (`keyed`: its key's opening quote) or element of a container, moving the cursor past it.
    func nextItem(_ cursor: inout Cursor, keyed: Bool) -> (key: Int?, value: Int, container: Int)? {
        bytes.withUnsafeBufferPointer { buffer in
            var index = cursor.index
            func skipSpace() {
                while index < cursor.end {
                    let byte = buffer[index]
                    guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 || byte == UInt8(ascii: ",")
                    else { return }
                    index += 1
                }
            }
            skipSpace()
            guard index < cursor.end else {
                cursor.index = index
                return nil
            }
            var key: Int?
            if keyed {
                key = index
                index = Self.stringEnd(buffer, from: index)
                while index < cursor.end && buffer[index] != UInt8(ascii: ":") { index += 1 }
                index += 1
                while index < cursor.end,
                    buffer[index] == 0x20 || buffer[index] == 0x0A || buffer[index] == 0x0D
                        || buffer[index] == 0x09
                {
                    index += 1
                }
            }
            let value = index
            let container: Int
            switch buffer[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                container = self.container(at: index)
                index = Int(ends[container]) + 1
            case UInt8(ascii: "\""):
                container = -1
                index = Self.stringEnd(buffer, from: index)
            default:
                container = -1
                index = Self.wordEnd(buffer, from: index)
            }
            cursor.index = index
            return (key, value, container)
        }
    }

    /// Calls `body` with each member (key and value) or element (no key) of a container until it returns false.
    func forEachItem(of container: Int, _ body: (_ key: Int?, _ value: Int, _ container: Int) -> Bool) {
        var cursor = firstItem(of: container)
        let keyed = bytes[Int(starts[container])] == UInt8(ascii: "{")
        while let item = nextItem(&cursor, keyed: keyed) {
            if !body(item.key, item.value, item.container) { return }
        }
    }

    /// The index just past the string whose opening quote is at `index`.
    static func stringEnd(_ buffer: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var index = index + 1
        while index < buffer.count && buffer[index] != UInt8(ascii: "\"") {
            index += buffer[index] == UInt8(ascii: "\\") ? 2 : 1
        }
        return min(index + 1, buffer.count)
    }

    /// The index just past the number or literal starting at `index`.
    static func wordEnd(_ buffer: UnsafeBufferPointer<UInt8>, from index: Int) -> Int {
        var index = index
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte <= 0x20 {
                break
            }
            index += 1
        }
        return index
    }

    /// Where the scalar starting at `index` ends.
    func scalarEnd(at index: Int) -> Int {
        bytes.withUnsafeBufferPointer { buffer in
            buffer[index] == UInt8(ascii: "\"")
                ? Self.stringEnd(buffer, from: index) : Self.wordEnd(buffer, from: index)
        }
    }

    /// The number or literal starting at `index`, as spelled.
    func word(at index: Int) -> (text: String, end: Int) {
        bytes.withUnsafeBufferPointer { buffer in
            let end = Self.wordEnd(buffer, from: index)
            return (String(decoding: UnsafeBufferPointer(rebasing: buffer[index..<end]), as: UTF8.self), end)
        }
    }

    /// Whether the string whose opening quote is at `index` is `wanted` once decoded.
    func stringEquals(at index: Int, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            let end = Self.stringEnd(buffer, from: index)
            let raw = UnsafeBufferPointer(rebasing: buffer[(index + 1)..<(end - 1)])
            if !raw.contains(UInt8(ascii: "\\")) { return raw.elementsEqual(wanted) }
            return Self.decoded(raw).elementsEqual(wanted)
        }
    }

    /// The string whose opening quote is at `index`, decoded.
    func string(at index: Int) -> (text: String, end: Int) {
        bytes.withUnsafeBufferPointer { buffer in
            let end = Self.stringEnd(buffer, from: index)
            let raw = UnsafeBufferPointer(rebasing: buffer[(index + 1)..<(end - 1)])
            if !raw.contains(UInt8(ascii: "\\")) { return (String(decoding: raw, as: UTF8.self), end) }
            // Decoded straight into the string (a 20 MB string is not copied through an array).
            let text = String(unsafeUninitializedCapacity: raw.count + 4) { Self.decode(raw, into: $0) }
            return (text, end)
        }
    }

    /// A string's bytes between its quotes with its escapes undone (UTF-8; a lone surrogate,
    /// which the readers refuse, becomes U+FFFD).
    static func decoded(_ raw: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: raw.count + 4) { out, count in count = decode(raw, into: out) }
    }

    /// Writes a string's bytes between its quotes with its escapes undone into `out` (which
    /// has room for `raw.count + 4` bytes: no escape decodes to more bytes than it takes);
    /// returns how many it wrote.
    static func decode(_ raw: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var count = 0
        var index = 0
        func put(_ byte: UInt8) {
            out[count] = byte
            count += 1
        }
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= raw.count else { return nil }
            var value: UInt32 = 0
            for byte in raw[at..<(at + 4)] {
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: return nil
                }
                value = value << 4 | digit
            }
            return value
        }
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < raw.count else {
                put(byte)
                index += 1
                continue
            }
            let escaped = raw[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "n"): put(0x0A)
            case UInt8(ascii: "t"): put(0x09)
            case UInt8(ascii: "r"): put(0x0D)
            case UInt8(ascii: "b"): put(0x08)
            case UInt8(ascii: "f"): put(0x0C)
            case UInt8(ascii: "u"):
                var value = hex4(index) ?? 0xFFFD
                index += 4
                if (0xD800..<0xDC00).contains(value), index + 1 < raw.count, raw[index] == UInt8(ascii: "\\"),
                    raw[index + 1] == UInt8(ascii: "u"), let low = hex4(index + 2)
                {
                    index += 6
                    value = 0x10000 + ((value - 0xD800) << 10) + (low &- 0xDC00)
                }
                UTF8.encode(Unicode.Scalar(value) ?? "\u{FFFD}", into: put)
            default: put(escaped)
            }
        }
        return count
    }

    /// Compact JSON text of the bytes `[start, end)`: white space between tokens dropped,
    /// strings with escapes decoded and quoted again minimally.
    func compactText(from start: Int, to end: Int) -> String {
        bytes.withUnsafeBufferPointer { buffer in
            var out: [UInt8] = []
            out.reserveCapacity(end - start)
            var index = start
            while index < end {
                let byte = buffer[index]
                switch byte {
                case 0x20, 0x0A, 0x0D, 0x09:
                    index += 1
                case UInt8(ascii: "\""):
                    let stringEnd = Self.stringEnd(buffer, from: index)
                    let raw = UnsafeBufferPointer(rebasing: buffer[(index + 1)..<(stringEnd - 1)])
                    if raw.contains(UInt8(ascii: "\\")) {
                        Self.appendQuoted(Self.decoded(raw), to: &out)
                    } else {
                        // Without escapes, the bytes are already minimally quoted (the readers
                        // refuse raw control characters).
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[index..<stringEnd]))
                    }
                    index = stringEnd
                default:
                    out.append(byte)
                    index += 1
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Appends decoded string bytes as a JSON string literal, escaped as ``JSONEscaping/quote(_:)`` does.
    static func appendQuoted(_ text: [UInt8], to out: inout [UInt8]) {
        let digits = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in text {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0..<0x20:
                out.append(contentsOf: [
                    0x5C, UInt8(ascii: "u"), 0x30, 0x30, digits[Int(byte >> 4)], digits[Int(byte & 0xF)],
                ])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
