import Foundation

/// An archived `NSExpression`: a mapping model's value expression (`valueexpressiondata`, a
/// keyed archive; COREDATA.md §4.3) or a derived attribute's derivation in a cached model,
/// decoded into the forms Core Data's files use. Anything else is kept as
/// ``other(className:type:)`` so that a caller can refuse it by name.
package indirect enum ArchivedExpression: Sendable, Hashable, CustomStringConvertible {
    /// `NSConstantValueExpression`: a string, a number, a boolean or nil.
    case constant(PropertyListValue?)
    /// `NSVariableExpression`: `$source`, `$manager`, …
    case variable(String)
    /// `NSSelfExpression` (`SELF`).
    case evaluatedObject
    /// A key path applied to an operand: `$source.color`, `$source.rel.@distinctUnionOfSets.x`.
    case keyPath(operand: ArchivedExpression, path: String)
    /// `FUNCTION(operand, "selector", arguments…)`.
    case function(operand: ArchivedExpression, selector: String, arguments: [ArchivedExpression])
    /// A form ferry does not decode (aggregates, subqueries, set operations, blocks…).
    case other(className: String, type: Int64?)

    /// Core Data's format-string spelling, as Xcode's mapping editor shows it.
    package var description: String {
        switch self {
        case .constant(nil): return "nil"
        case .constant(.some(let value)):
            switch value {
            case .string(let text): return Self.quoted(text)
            case .integer(let number): return String(number)
            case .unsignedInteger(let number): return String(number)
            case .real(let number): return String(number)
            case .bool(let flag): return flag ? "YES" : "NO"
            default: return "<constant>"
            }
        case .variable(let name): return "$\(name)"
        case .evaluatedObject: return "SELF"
        case .keyPath(.evaluatedObject, let path): return path
        case .keyPath(let operand, let path): return "\(operand).\(path)"
        case .function(let operand, let selector, let arguments):
            return
                "FUNCTION(\(([operand.description, Self.quoted(selector)] + arguments.map(\.description)).joined(separator: ", ")))"
        case .other(let className, let type): return "<\(className)\(type.map { " type \($0)" } ?? "")>"
        }
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Decodes an archived expression (the bytes of `valueexpressiondata`); `source` names it in
    /// errors.
    /// - Throws: ``FerryError`` (`invalidInput`) for bytes that are not a keyed archive of an
    ///   expression.
    package static func decode(_ bytes: [UInt8], source: String) throws -> ArchivedExpression {
        let archive = try KeyedArchive(bytes, source: source)
        var decoder = Decoder(archive: archive)
        return try decoder.expression(archive.root(), depth: 0)
    }

    /// Decodes an expression stored inside another archive (a cached model's derivation); nil
    /// for `$null`.
    package static func decode(_ reference: PropertyListValue?, in archive: KeyedArchive) throws -> ArchivedExpression?
    {
        guard try archive.resolve(reference) != nil else { return nil }
        var decoder = Decoder(archive: archive)
        return try decoder.expression(reference, depth: 0)
    }

    /// The class of the first part of the expression ferry does not decode, or nil when it
    /// decodes every part.
    package var undecodedForm: String? {
        switch self {
        case .constant, .variable, .evaluatedObject: return nil
        case .keyPath(let operand, _): return operand.undecodedForm
        case .function(let operand, _, let arguments):
            return operand.undecodedForm ?? arguments.lazy.compactMap(\.undecodedForm).first
        case .other(let className, _): return className
        }
    }

    private struct Decoder {
        let archive: KeyedArchive
        /// Archives made by Xcode nest a handful of levels; a deeper one is hostile.
        static let maximumDepth = 64

        mutating func expression(_ reference: PropertyListValue?, depth: Int) throws -> ArchivedExpression {
            guard let object = try archive.object(reference) else { return .constant(nil) }
            return try expression(object, depth: depth)
        }

        mutating func expression(_ object: KeyedArchive.Object, depth: Int) throws -> ArchivedExpression {
            guard depth < Self.maximumDepth else {
                throw FerryError(
                    .invalidInput, "\(archive.source): the expression nests more than \(Self.maximumDepth) levels")
            }
            let type = try archive.integer(object["NSExpressionType"])
            switch object.className {
            case "NSConstantValueExpression":
                return .constant(try constant(object["NSConstantValue"]))
            case "NSVariableExpression":
                guard let name = try archive.string(object["NSVariable"]) else {
                    throw FerryError(.invalidInput, "\(archive.source): a variable expression without a name")
                }
                return .variable(name)
            case "NSSelfExpression":
                return .evaluatedObject
            case "NSKeyPathSpecifierExpression":
                guard let path = try archive.string(object["NSKeyPath"]) else {
                    throw FerryError(.invalidInput, "\(archive.source): a key path specifier without a key path")
                }
                return .keyPath(operand: .evaluatedObject, path: path)
            case "NSKeyPathExpression", "NSFunctionExpression":
                let selector = try archive.string(object["NSSelectorName"]) ?? ""
                let operand = try expression(object["NSOperand"], depth: depth + 1)
                var arguments: [ArchivedExpression] = []
                for argument in try archive.array(object["NSArguments"]) {
                    arguments.append(try expression(argument, depth: depth + 1))
                }
                if selector == "valueForKeyPath:" || selector == "valueForKey:", arguments.count == 1,
                    case .keyPath(.evaluatedObject, let path) = arguments[0]
                {
                    return .keyPath(operand: operand, path: path)
                }
                if object.className == "NSKeyPathExpression" {
                    throw FerryError(
                        .invalidInput,
                        "\(archive.source): a key path expression with selector '\(selector)' and \(arguments.count) arguments"
                    )
                }
                return .function(operand: operand, selector: selector, arguments: arguments)
            default:
                return .other(className: object.className, type: type)
            }
        }

        func constant(_ reference: PropertyListValue?) throws -> PropertyListValue? {
            guard let resolved = try archive.resolve(reference) else { return nil }
            if resolved.dictionary != nil, let object = try archive.object(reference) {
                if let text = try? archive.string(reference) { return .string(text) }
                if let number = try archive.resolve(object["NS.intval"]) ?? archive.resolve(object["NS.dblval"]) {
                    return number
                }
                throw FerryError(.invalidInput, "\(archive.source): a constant of class \(object.className)")
            }
            return resolved
        }
    }
}
