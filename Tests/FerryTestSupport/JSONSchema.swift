import Foundation

/// A validator for the subset of JSON Schema that docs/report.schema.json (draft 2020-12) and
/// schemas/*.schema.json (draft-07) use: `type` (a name or a list), `required`, `properties`,
/// `additionalProperties` (false or a schema), `minProperties`, `maxProperties`, `items`,
/// `enum`, `minimum`, `minLength`, `pattern`, `anyOf`, `oneOf` and local `$ref`s
/// (`#/$defs/name` or `#/definitions/name`). Any other keyword in the schema is an error, so
/// the schema cannot silently use something this validator ignores.
public struct JSONSchema {
    public let root: [String: Any]

    static let known: Set<String> = [
        "$schema", "$id", "$defs", "$ref", "title", "description", "type", "required", "properties",
        "additionalProperties", "items", "enum", "minimum", "minLength", "pattern", "definitions", "anyOf", "oneOf",
        "minProperties", "maxProperties",
    ]

    /// Loads the schema at `path`.
    public init(path: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw FerryProcessError(description: "\(path): the schema is not a JSON object")
        }
        self.root = root
    }

    /// Every violation of `instance` (parsed JSON), as `path: problem` lines; empty when valid.
    public func violations(of instance: Any) -> [String] {
        var problems: [String] = []
        check(instance, against: root, at: "$", into: &problems)
        return problems
    }

    /// Every violation of the JSON document at `path`.
    public func violations(ofFile path: String) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return violations(of: try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
    }

    private func check(_ value: Any, against schema: [String: Any], at path: String, into problems: inout [String]) {
        for key in schema.keys where !Self.known.contains(key) {
            problems.append("\(path): the schema uses '\(key)', which this validator does not implement")
        }
        if let reference = schema["$ref"] as? String {
            guard let target = resolve(reference) else {
                problems.append("\(path): unresolvable $ref \(reference)")
                return
            }
            check(value, against: target, at: path, into: &problems)
        }
        for keyword in ["anyOf", "oneOf"] {
            guard let branches = schema[keyword] as? [[String: Any]] else { continue }
            var failures: [[String]] = []
            for branch in branches {
                var branchProblems: [String] = []
                check(value, against: branch, at: path, into: &branchProblems)
                failures.append(branchProblems)
            }
            let passing = failures.filter(\.isEmpty).count
            if passing == 0 {
                // The branch that got furthest (fewest problems) says best what is wrong.
                let closest = failures.min { $0.count < $1.count } ?? []
                problems.append(
                    "\(path): \(Self.describe(value)) matches none of \(keyword)'s \(branches.count) schemas"
                        + (closest.isEmpty ? "" : " (closest: \(closest.joined(separator: "; ")))"))
            } else if keyword == "oneOf", passing > 1 {
                problems.append("\(path): \(Self.describe(value)) matches \(passing) of oneOf's schemas, not one")
            }
        }
        if let type = schema["type"] {
            let names = (type as? [String]) ?? [type as? String ?? ""]
            if !names.contains(where: { Self.value(value, is: $0) }) {
                problems.append("\(path): expected \(names.joined(separator: " or ")), found \(Self.describe(value))")
                return
            }
        }
        if let options = schema["enum"] as? [Any], !options.contains(where: { Self.equal($0, value) }) {
            problems.append("\(path): \(Self.describe(value)) is not one of \(options)")
        }
        if let minimum = schema["minimum"] as? Double, let number = Self.number(value), number < minimum {
            problems.append("\(path): \(number) is less than \(minimum)")
        }
        if let text = value as? String {
            if let minLength = schema["minLength"] as? Int, text.count < minLength {
                problems.append("\(path): '\(text)' is shorter than \(minLength)")
            }
            if let pattern = schema["pattern"] as? String, text.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(path): '\(text)' does not match \(pattern)")
            }
        }
        if let object = value as? [String: Any] {
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                problems.append("\(path): missing required '\(key)'")
            }
            if let minimum = schema["minProperties"] as? Int, object.count < minimum {
                problems.append("\(path): \(object.count) members, fewer than \(minimum)")
            }
            if let maximum = schema["maxProperties"] as? Int, object.count > maximum {
                problems.append(
                    "\(path): \(object.count) members (\(object.keys.sorted().joined(separator: ", "))), more than \(maximum)"
                )
            }
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for (key, member) in object.sorted(by: { $0.key < $1.key }) {
                if let property = properties[key] as? [String: Any] {
                    check(member, against: property, at: "\(path).\(key)", into: &problems)
                } else if let additional = schema["additionalProperties"] as? [String: Any] {
                    check(member, against: additional, at: "\(path).\(key)", into: &problems)
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(path): '\(key)' is not in the schema")
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, element) in array.enumerated() {
                check(element, against: items, at: "\(path)[\(index)]", into: &problems)
            }
        }
    }

    /// The schema a local `$ref` (`#/$defs/name` or `#/definitions/name`) names.
    public func resolve(_ reference: String) -> [String: Any]? {
        for container in ["$defs", "definitions"] where reference.hasPrefix("#/\(container)/") {
            let name = String(reference.dropFirst("#/\(container)/".count))
            return (root[container] as? [String: Any])?[name] as? [String: Any]
        }
        return nil
    }

    static func isBoolean(_ value: Any) -> Bool {
        // JSONSerialization gives booleans as NSNumbers of Objective-C type `c` (char).
        if value is Bool && !(value is NSNumber) { return true }
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    static func number(_ value: Any) -> Double? {
        guard !isBoolean(value), let number = value as? NSNumber else { return nil }
        return number.doubleValue
    }

    static func value(_ value: Any, is type: String) -> Bool {
        switch type {
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "boolean": return isBoolean(value)
        case "null": return value is NSNull
        case "number": return number(value) != nil
        case "integer": return number(value).map { $0 == $0.rounded() } ?? false
        default: return false
        }
    }

    static func equal(_ a: Any, _ b: Any) -> Bool {
        if let a = a as? String, let b = b as? String { return a == b }
        if isBoolean(a) != isBoolean(b) { return false }
        if let a = number(a), let b = number(b) { return a == b }
        if isBoolean(a), let a = a as? Bool, let b = b as? Bool { return a == b }
        return false
    }

    static func describe(_ value: Any) -> String {
        if value is [String: Any] { return "an object" }
        if value is [Any] { return "an array" }
        if let text = value as? String { return "'\(text)'" }
        if isBoolean(value) { return "a boolean" }
        if value is NSNull { return "null" }
        return "\(value)"
    }
}
