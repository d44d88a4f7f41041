import FerryCore

/// The entries of a YAML mapping with text keys, in file order.
struct YAMLMapping {
    struct Entry {
        var key: String
        var keyLocation: InputLocation
        var value: YAMLNode
    }

    var location: InputLocation
    var entries: [Entry]

    subscript(key: String) -> YAMLNode? { entries.first { $0.key == key }?.value }

    func keyLocation(_ key: String) -> InputLocation? { entries.first { $0.key == key }?.keyLocation }

    var keys: [String] { entries.map(\.key) }
}

/// Typed, located reading of YAML definitions (models, jobs) that collects every problem
/// instead of stopping at the first.
///
/// Each accessor reports a problem at the value's location and returns nil when the value has
/// the wrong shape, e.g. `expected a boolean for 'optional' but found 'maybe'`.
final class DefinitionReader {
    let code: FerryError.Code
    private var collected: [FerryError] = []
    /// The problems found so far, grouped by file (in the order files were first read) and
    /// sorted by line and column within each file.
    var errors: [FerryError] {
        var fileOrder: [String: Int] = [:]
        for error in collected where fileOrder[error.location?.file ?? ""] == nil {
            fileOrder[error.location?.file ?? ""] = fileOrder.count
        }
        func key(_ error: FerryError) -> (Int, Int, Int) {
            (fileOrder[error.location?.file ?? ""] ?? 0, error.location?.line ?? 0, error.location?.column ?? 0)
        }
        return collected.enumerated().sorted { a, b in
            let (ka, kb) = (key(a.element), key(b.element))
            return ka != kb ? ka < kb : a.offset < b.offset
        }.map(\.element)
    }
    /// Applied to every string scalar (job parameters); nil when it reported a problem.
    var substitute: ((String, InputLocation, DefinitionReader) -> String?)?

    init(code: FerryError.Code) { self.code = code }

    func fail(_ message: String, at location: InputLocation, notes: [String] = []) {
        collected.append(FerryError(code, message, at: location, notes: notes))
    }

    func record(_ error: FerryError) { collected.append(error) }

    func wrongType(_ expected: String, for name: String, found node: YAMLNode) {
        fail("expected \(expected) for '\(name)' but found \(node.kindDescription)", at: node.location)
    }

    /// The node as a mapping with text keys (null reads as an empty mapping).
    func mapping(_ node: YAMLNode, for name: String) -> YAMLMapping? {
        switch node.content {
        case .scalar(_, isNull: true):
            return YAMLMapping(location: node.location, entries: [])
        case .mapping(let pairs):
            var entries: [YAMLMapping.Entry] = []
            for pair in pairs {
                guard case .scalar(let key, _) = pair.key.content else {
                    fail(
                        "expected a name as a key in '\(name)' but found \(pair.key.kindDescription)",
                        at: pair.key.location)
                    continue
                }
                entries.append(YAMLMapping.Entry(key: key, keyLocation: pair.key.location, value: pair.value))
            }
            return YAMLMapping(location: node.location, entries: entries)
        default:
            wrongType("a mapping", for: name, found: node)
            return nil
        }
    }

    /// Reports every key that is not in `allowed`, with the closest allowed key as a suggestion.
    func checkKeys(_ mapping: YAMLMapping, allowed: [String], in context: String) {
        for entry in mapping.entries where !allowed.contains(entry.key) {
            fail(
                "unknown key '\(entry.key)' in \(context)\(Suggestions.didYouMean(entry.key, in: allowed))",
                at: entry.keyLocation)
        }
    }

    /// The items of a list (null reads as an empty list).
    func list(_ node: YAMLNode, for name: String) -> [YAMLNode]? {
        switch node.content {
        case .scalar(_, isNull: true): return []
        case .sequence(let items): return items
        default:
            wrongType("a list", for: name, found: node)
            return nil
        }
    }

    /// A scalar's text, after parameter substitution.
    func string(_ node: YAMLNode, for name: String) -> String? {
        guard case .scalar(let text, _) = node.content else {
            wrongType("a string", for: name, found: node)
            return nil
        }
        guard let substitute else { return text }
        return substitute(text, node.location, self)
    }

    /// A scalar's text, or nil without a problem when it is null.
    func optionalString(_ node: YAMLNode, for name: String) -> String? {
        if node.isNull { return nil }
        return string(node, for: name)
    }

    /// `true`/`false` (also `yes`/`no`, `on`/`off`, any case).
    func bool(_ node: YAMLNode, for name: String) -> Bool? {
        if case .scalar = node.content, let text = string(node, for: name) {
            switch text.lowercased() {
            case "true", "yes", "on": return true
            case "false", "no", "off": return false
            default: break
            }
            fail("expected a boolean for '\(name)' but found '\(text)'", at: node.location)
            return nil
        }
        if case .scalar = node.content { return nil }
        wrongType("a boolean", for: name, found: node)
        return nil
    }

    /// A whole number no smaller than `minimum`.
    func int(_ node: YAMLNode, for name: String, minimum: Int = 0) -> Int? {
        guard case .scalar = node.content else {
            wrongType("a whole number", for: name, found: node)
            return nil
        }
        guard let text = string(node, for: name) else { return nil }
        guard let value = Int(String(text.filter { $0 != "_" })) else {
            fail("expected a whole number for '\(name)' but found '\(text)'", at: node.location)
            return nil
        }
        guard value >= minimum else {
            fail("'\(name)' must be at least \(minimum), not \(value)", at: node.location)
            return nil
        }
        return value
    }

    /// A single string or a list of strings.
    func strings(_ node: YAMLNode, for name: String) -> [String]? {
        switch node.content {
        case .scalar:
            return string(node, for: name).map { [$0] }
        case .sequence(let items):
            var values: [String] = []
            for item in items {
                guard case .scalar = item.content else {
                    wrongType("a string", for: name, found: item)
                    return nil
                }
                guard let value = string(item, for: name) else { return nil }
                values.append(value)
            }
            return values
        case .mapping:
            wrongType("a string or a list of strings", for: name, found: node)
            return nil
        }
    }

    /// One of an enumeration's raw values, with a suggestion when misspelt.
    func choice<T: RawRepresentable & CaseIterable>(_ node: YAMLNode, for name: String, as type: T.Type = T.self) -> T?
    where T.RawValue == String {
        guard let text = string(node, for: name) else { return nil }
        if let value = T(rawValue: text) { return value }
        let names = T.allCases.map(\.rawValue)
        fail(
            "'\(text)' is not a valid '\(name)' (one of \(names.joined(separator: ", ")))\(Suggestions.didYouMean(text, in: names))",
            at: node.location)
        return nil
    }
}
