/// Fields addressed by a path into nested objects: `address.city` is the member `city` of the
/// object in the member `address` (`fields: {city: address.city}`).
///
/// A field name with a `.` is a path unless the record has a member spelled exactly so (a key
/// `"address.city"` wins). Paths are resolved after each object is decoded, from the nested
/// value's compact JSON text, and only for the names a consumer registered; a record without the
/// path (no such member, or not an object on the way) lacks the field, as for a missing key.
final class JSONPathFields {
    private struct Path {
        /// The field index the value goes to.
        var index: Int
        /// The first component, and its field index once the input has such a key.
        var root: String
        var rootIndex: Int?
        /// The components after the first, as UTF-8.
        var rest: [[UInt8]]
    }

    private var paths: [Path] = []
    /// How many of the table's names were looked at for paths.
    private var scanned = 0
    private var value: [UInt8] = []

    /// Sets the path fields of the object just decoded into `fields`.
    func resolve(_ fields: JSONObjectFields, table: JSONFieldTable) {
        if table.count > scanned { scan(table) }
        guard !paths.isEmpty else { return }
        for position in paths.indices where fields.kind(paths[position].index) == .absent {
            if paths[position].rootIndex == nil { paths[position].rootIndex = table.existingIndex(of: paths[position].root) }
            guard let root = paths[position].rootIndex, fields.kind(root) == .nested, let (line, column) = fields.position(root) else { continue }
            // Copied out first: setting a field may move the bytes being read.
            let found = fields.withBytes(root) { Self.extract($0, path: paths[position].rest[...], into: &value) }
            guard let kind = found else { continue }
            value.withUnsafeBufferPointer { fields.set(paths[position].index, kind: kind, bytes: $0, line: line, column: column) }
        }
    }

    private func scan(_ table: JSONFieldTable) {
        let names = table.names
        for index in scanned..<names.count {
            let parts = names[index].split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count > 1, !parts.contains(where: \.isEmpty) else { continue }
            paths.append(Path(index: index, root: String(parts[0]), rootIndex: nil, rest: parts.dropFirst().map { Array($0.utf8) }))
        }
        scanned = names.count
    }

    // MARK: - Reading compact JSON

    /// The value at `path` inside the compact JSON object `json`: its kind, with its bytes in
    /// `value` (a string decoded, a number's spelling, a nested value's text); nil when absent.
    static func extract(_ json: UnsafeBufferPointer<UInt8>, path: ArraySlice<[UInt8]>, into value: inout [UInt8]) -> JSONFieldKind? {
        var position = 0
        var components = path
        while let component = components.first {
            guard position < json.count, json[position] == UInt8(ascii: "{") else { return nil }
            position += 1
            var found = false
            while position < json.count, json[position] == UInt8(ascii: "\"") {
                let keyEnd = skipValue(json, from: position)
                unescape(json, from: position + 1, to: keyEnd - 1, into: &value)
                let matches = value == component
                position = keyEnd + 1  // the ':'
                let valueEnd = skipValue(json, from: position)
                if matches {
                    components = components.dropFirst()
                    if components.isEmpty { return classify(json, from: position, to: valueEnd, into: &value) }
                    found = true
                    break
                }
                position = valueEnd
                if position < json.count, json[position] == UInt8(ascii: ",") { position += 1 }
            }
            guard found else { return nil }
        }
        return nil
    }

    /// The index after the value starting at `start`.
    private static func skipValue(_ json: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var position = start
        var depth = 0
        var inString = false
        while position < json.count {
            let byte = json[position]
            if inString {
                if byte == UInt8(ascii: "\\") {
                    position += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if depth == 0 { return position + 1 }
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if depth == 0 { return position }
                    depth -= 1
                    if depth == 0 { return position + 1 }
                case UInt8(ascii: ","):
                    if depth == 0 { return position }
                default: break
                }
            }
            position += 1
        }
        return position
    }

    private static func classify(_ json: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, into value: inout [UInt8]) -> JSONFieldKind {
        value.removeAll(keepingCapacity: true)
        switch json[start] {
        case UInt8(ascii: "\""):
            unescape(json, from: start + 1, to: end - 1, into: &value)
            return .string
        case UInt8(ascii: "t"): return .true
        case UInt8(ascii: "f"): return .false
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            value.append(contentsOf: json[start..<end])
            return .nested
        default:
            value.append(contentsOf: json[start..<end])
            return .number
        }
    }

    /// The text of a JSON string's content with its escapes undone.
    private static func unescape(_ json: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, into value: inout [UInt8]) {
        value.removeAll(keepingCapacity: true)
        var position = start
        while position < end {
            let byte = json[position]
            guard byte == UInt8(ascii: "\\"), position + 1 < end else {
                value.append(byte)
                position += 1
                continue
            }
            let escaped = json[position + 1]
            position += 2
            switch escaped {
            case UInt8(ascii: "n"): value.append(0x0A)
            case UInt8(ascii: "r"): value.append(0x0D)
            case UInt8(ascii: "t"): value.append(0x09)
            case UInt8(ascii: "b"): value.append(0x08)
            case UInt8(ascii: "f"): value.append(0x0C)
            case UInt8(ascii: "u"):
                guard position + 4 <= end, let code = UInt32(String(decoding: json[position..<position + 4], as: UTF8.self), radix: 16),
                    let scalar = Unicode.Scalar(code)
                else { continue }
                value.append(contentsOf: Array(String(Character(scalar)).utf8))
                position += 4
            default: value.append(escaped)
            }
        }
    }
}
