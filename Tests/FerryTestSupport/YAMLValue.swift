import Foundation
import Yams

/// YAML documents as the values a YAML editor's JSON Schema validation sees (YAML 1.2's core
/// schema, as the YAML language server reads them): quoted scalars are text, plain scalars are
/// null, booleans, integers or floats when they look like one, else text. Keys stay as written.
public enum YAMLValue {
    /// The document at `path` as `JSONSchema.violations(of:)` takes it; NSNull for an empty file.
    public static func load(path: String) throws -> Any {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let node = try Yams.compose(yaml: text) else { return NSNull() }
        return value(of: node)
    }

    static func value(of node: Node) -> Any {
        switch node {
        case .scalar(let scalar):
            return scalar.style == .plain ? plain(scalar.string) : scalar.string
        case .mapping(let mapping):
            var object: [String: Any] = [:]
            for (key, member) in mapping {
                object[key.scalar?.string ?? "\(key)"] = value(of: member)
            }
            return object
        case .sequence(let sequence):
            return sequence.map { value(of: $0) }
        case .alias:
            return NSNull()
        }
    }

    /// YAML 1.2 core schema resolution of a plain scalar.
    static func plain(_ text: String) -> Any {
        switch text {
        case "", "~", "null", "Null", "NULL": return NSNull()
        case "true", "True", "TRUE": return NSNumber(value: true)
        case "false", "False", "FALSE": return NSNumber(value: false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return NSNumber(value: Double.infinity)
        case "-.inf", "-.Inf", "-.INF": return NSNumber(value: -Double.infinity)
        case ".nan", ".NaN", ".NAN": return NSNumber(value: Double.nan)
        default: break
        }
        if text.wholeMatch(of: /[-+]?[0-9]+/) != nil, let number = Int(text) { return NSNumber(value: number) }
        if text.wholeMatch(of: /0o[0-7]+/) != nil, let number = Int(text.dropFirst(2), radix: 8) {
            return NSNumber(value: number)
        }
        if text.wholeMatch(of: /0x[0-9a-fA-F]+/) != nil, let number = Int(text.dropFirst(2), radix: 16) {
            return NSNumber(value: number)
        }
        if text.wholeMatch(of: /[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?/) != nil, let number = Double(text)
        {
            return NSNumber(value: number)
        }
        return text
    }
}
