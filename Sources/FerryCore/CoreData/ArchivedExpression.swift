import Foundation

/// Renders an archived `NSExpression` (a derived attribute's derivation, a mapping model's value
/// expression) as NSExpression format text (COREDATA.md §4.3): `pages`, `$source.color`,
/// `FUNCTION($manager, "sel:", "Name", $source.owner)`, `"text"`, `42`.
package enum ArchivedExpression {
    /// How deep expressions may nest.
    static let maxDepth = 64

    /// The expression's text; nil for `$null`. Throws for expression kinds it cannot render.
    package static func text(_ reference: PropertyListValue?, in archive: KeyedArchive) throws -> String? {
        try render(reference, archive, depth: 0)
    }

    private static func render(_ reference: PropertyListValue?, _ archive: KeyedArchive, depth: Int) throws -> String? {
        guard depth < maxDepth else { throw FerryError(.invalidInput, "\(archive.source): an expression nested deeper than \(maxDepth) levels") }
        guard let resolved = try archive.resolve(reference) else { return nil }
        if let text = resolved.string { return quoted(text) }
        if let number = resolved.integer, resolved.dictionary == nil { return String(number) }
        guard let object = try archive.object(reference) else { return nil }
        func sub(_ key: String) throws -> String? { try render(object[key], archive, depth: depth + 1) }
        if object.isKind(of: "NSString") { return try archive.string(reference).map(quoted) }
        if object.isKind(of: "NSNumber") { return try archive.resolve(object["NS.intval"] ?? object["NS.dblval"]).map { "\($0.integer.map(String.init) ?? $0.real.map { String($0) } ?? "")" } }
        switch object.className {
        case "NSConstantValueExpression":
            guard let constant = object["NSConstantValue"] else { return "nil" }
            return try render(constant, archive, depth: depth + 1) ?? "nil"
        case "NSSelfExpression":
            return "SELF"
        case "NSVariableExpression":
            return "$" + (try archive.string(object["NSVariable"]) ?? "")
        case "NSKeyPathSpecifierExpression":
            return try archive.string(object["NSKeyPath"]) ?? ""
        default:
            break
        }
        guard object.isKind(of: "NSFunctionExpression") else {
            throw FerryError(.invalidInput, "\(archive.source): ferry cannot read an archived \(object.className)")
        }
        let selector = try archive.string(object["NSSelectorName"]) ?? ""
        let operand = try sub("NSOperand") ?? "nil"
        let arguments = try archive.array(object["NSArguments"]).map { try render($0, archive, depth: depth + 1) ?? "nil" }
        if selector == "valueForKey:" || selector == "valueForKeyPath:", arguments.count == 1 {
            let path = arguments[0]
            return operand == "SELF" ? path : "\(operand).\(path)"
        }
        let parts = [operand, quoted(selector)] + arguments
        return "FUNCTION(" + parts.joined(separator: ", ") + ")"
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
