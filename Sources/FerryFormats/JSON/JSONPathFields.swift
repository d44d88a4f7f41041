/// Fields addressed by a path into nested objects and arrays (``JSONFieldPath``): `address.city`
/// is the member `city` of the object in the member `address` (`fields: {city: address.city}`),
/// `tags[0]` the first element of the array in `tags`.
///
/// A field name with a `.` or `[` is a path unless the record has a member spelled exactly so (a
/// key `"address.city"` wins). Paths are resolved after each object is decoded, from the nested
/// value's compact JSON text, and only for the names a consumer registered; a record without the
/// path (no such member, not an object or array on the way, an index beyond the array's end)
/// lacks the field, as for a missing key.
final class JSONPathFields {
    /// A step into a nested value: an object's member (its name in UTF-8) or an array's element.
    enum Step {
        case member([UInt8])
        case index(Int)
    }

    private struct Path {
        /// The field index the value goes to.
        var index: Int
        /// The first component, and its field index once the input has such a key.
        var root: String
        var rootIndex: Int?
        /// The steps after the first component.
        var rest: [Step]
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
            if paths[position].rootIndex == nil {
                paths[position].rootIndex = table.existingIndex(of: paths[position].root)
            }
            guard let root = paths[position].rootIndex, fields.kind(root) == .nested,
                let (line, column) = fields.position(root)
            else { continue }
            // Copied out first: setting a field may move the bytes being read.
            let found = fields.withBytes(root) { Self.extract($0, path: paths[position].rest[...], into: &value) }
            guard let kind = found else { continue }
            value.withUnsafeBufferPointer {
                fields.set(paths[position].index, kind: kind, bytes: $0, line: line, column: column)
            }
        }
    }

    private func scan(_ table: JSONFieldTable) {
        let names = table.names
        for index in scanned..<names.count {
            // A name that is no well-formed path can only be a key.
            guard case .success(let path) = JSONFieldPath.parse(names[index]), !path.rest.isEmpty else { continue }
            let rest = path.rest.map { component -> Step in
                switch component {
                case .member(let name): return .member(Array(name.utf8))
                case .index(let position): return .index(position)
                }
            }
            paths.append(Path(index: index, root: path.root, rootIndex: nil, rest: rest))
        }
        scanned = names.count
    }

    // MARK: - Reading compact JSON

    /// The value at `path` inside the compact JSON value `json`: its kind, with its bytes in
    /// `value` (a string decoded, a number's spelling, a nested value's text); nil when absent.
    static func extract(
        _ json: UnsafeBufferPointer<UInt8>, path: ArraySlice<Step>, into value: inout [UInt8]
    ) -> JSONFieldKind? {
        var position = 0
        var components = path
        while let step = components.first {
            let component: [UInt8]
            switch step {
            case .index(let wanted):
                guard let (start, end) = element(json, at: position, index: wanted) else { return nil }
                components = components.dropFirst()
                if components.isEmpty { return classify(json, from: start, to: end, into: &value) }
                position = start
                continue
            case .member(let name):
                component = name
            }
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

    /// The bounds of element `index` of the compact JSON array starting at `start` (negative:
    /// counted from the end); nil when `start` is no array or the array is shorter.
    private static func element(_ json: UnsafeBufferPointer<UInt8>, at start: Int, index: Int) -> (Int, Int)? {
        guard start < json.count, json[start] == UInt8(ascii: "[") else { return nil }
        var target = index
        if index < 0 {
            var count = 0
            var position = start + 1
            while position < json.count, json[position] != UInt8(ascii: "]") {
                count += 1
                position = skipValue(json, from: position)
                if position < json.count, json[position] == UInt8(ascii: ",") { position += 1 }
            }
            target = count + index
            guard target >= 0 else { return nil }
        }
        var position = start + 1
        var current = 0
        while position < json.count, json[position] != UInt8(ascii: "]") {
            let end = skipValue(json, from: position)
            if current == target { return (position, end) }
            current += 1
            position = end
            if position < json.count, json[position] == UInt8(ascii: ",") { position += 1 }
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

    private static func classify(
        _ json: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, into value: inout [UInt8]
    ) -> JSONFieldKind {
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
    private static func unescape(
        _ json: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, into value: inout [UInt8]
    ) {
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
                guard position + 4 <= end,
                    let code = UInt32(String(decoding: json[position..<position + 4], as: UTF8.self), radix: 16),
                    let scalar = Unicode.Scalar(code)
                else { continue }
                value.append(contentsOf: Array(String(Character(scalar)).utf8))
                position += 4
            default: value.append(escaped)
            }
        }
    }
}
