/// A field name that addresses a value inside a JSON record: members of nested objects joined by
/// dots, and elements of arrays by a whole number in brackets, counted from 0 (from the end when
/// negative): `address.city`, `tags[0]`, `contacts[0].phone`, `matrix[1][-1]`.
///
/// A name without `.` or `[` is a plain key. A record whose key is spelled exactly like the whole
/// name reads that key instead of the path.
package struct JSONFieldPath: Sendable, Hashable {
    package enum Component: Sendable, Hashable {
        /// The member of an object with this name.
        case member(String)
        /// The element of an array at this position (negative: from the end, -1 the last).
        case index(Int)
    }

    /// The top-level key the path starts from.
    package var root: String
    /// The steps after the root.
    package var rest: [Component]

    package init(root: String, rest: [Component]) {
        self.root = root
        self.rest = rest
    }

    /// The path a field name spells; nil for a plain key (no `.` or `[`, or an empty member
    /// such as `a..b`, which can only be a key); an error for brackets that do not hold a whole
    /// number (`tags[x]`, `tags[0`).
    package static func parse(_ name: String) -> Result<JSONFieldPath, PathError>? {
        guard name.contains(".") || name.contains("[") else { return nil }
        var members: [(name: String, indexes: [Int])] = []
        for part in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard let bracket = part.firstIndex(of: "[") else {
                if part.isEmpty || part.contains("]") {
                    return part.isEmpty ? nil : .failure(PathError(name: name, reason: "']' without '['"))
                }
                members.append((String(part), []))
                continue
            }
            let key = part[..<bracket]
            var indexes: [Int] = []
            var rest = part[bracket...]
            while !rest.isEmpty {
                guard rest.first == "[", let close = rest.firstIndex(of: "]") else {
                    return .failure(
                        PathError(
                            name: name, reason: rest.first == "[" ? "'[' without ']'" : "text after ']': '\(rest)'"))
                }
                let number = rest[rest.index(after: rest.startIndex)..<close]
                guard let index = Int(number), !number.hasPrefix("+") else {
                    return .failure(
                        PathError(
                            name: name,
                            reason:
                                "'[\(number)]' is not an array index (a whole number, e.g. [0], or [-1] for the last element)"
                        ))
                }
                indexes.append(index)
                rest = rest[rest.index(after: close)...]
            }
            if key.isEmpty && members.isEmpty {
                return .failure(PathError(name: name, reason: "a path starts with a key, e.g. tags[0]"))
            }
            if key.isEmpty {
                return .failure(PathError(name: name, reason: "an empty member before '['"))
            }
            members.append((String(key), indexes))
        }
        guard let first = members.first else { return nil }
        var rest: [Component] = first.indexes.map { .index($0) }
        for member in members.dropFirst() {
            rest.append(.member(member.name))
            rest += member.indexes.map { .index($0) }
        }
        return .success(JSONFieldPath(root: first.name, rest: rest))
    }

    /// A field name that is not a well-formed path.
    package struct PathError: Error, Sendable, Hashable, CustomStringConvertible {
        package var name: String
        package var reason: String

        package init(name: String, reason: String) {
            self.name = name
            self.reason = reason
        }

        package var description: String { "'\(name)' is not a well-formed field path: \(reason)" }
    }
}
