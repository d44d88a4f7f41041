import FerryCore
import Foundation

/// An `NSExpression` as a mapping model stores it (`valueexpressiondata`, a keyed archive;
/// COREDATA.md §4.3), decoded into the few forms mapping models use. Anything else is kept as
/// ``other(className:type:)`` so that the translation can refuse it by name.
indirect enum XcodeExpression: Sendable, Hashable, CustomStringConvertible {
    /// `NSConstantValueExpression`: a string, a number, a boolean or nil.
    case constant(PropertyListValue?)
    /// `NSVariableExpression`: `$source`, `$manager`, …
    case variable(String)
    /// `NSSelfExpression` (`SELF`).
    case evaluatedObject
    /// A key path applied to an operand: `$source.color`, `$source.rel.@distinctUnionOfSets.x`.
    case keyPath(operand: XcodeExpression, path: String)
    /// `FUNCTION(operand, "selector", arguments…)`.
    case function(operand: XcodeExpression, selector: String, arguments: [XcodeExpression])
    /// A form ferry does not decode (aggregates, subqueries, set operations, blocks…).
    case other(className: String, type: Int64?)

    /// Core Data's format-string spelling, as Xcode's mapping editor shows it.
    var description: String {
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
            return "FUNCTION(\(([operand.description, Self.quoted(selector)] + arguments.map(\.description)).joined(separator: ", ")))"
        case .other(let className, let type): return "<\(className)\(type.map { " type \($0)" } ?? "")>"
        }
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// The key path below `$source` (`color`, `country.continent`), or nil for any other form.
    var sourceKeyPath: String? {
        if case .keyPath(.variable("source"), let path) = self { return path }
        return nil
    }

    /// Decodes an archived expression (the bytes of `valueexpressiondata`); `source` names it in
    /// errors.
    /// - Throws: ``FerryError`` (`invalidInput`) for bytes that are not a keyed archive of an
    ///   expression.
    static func decode(_ bytes: [UInt8], source: String) throws -> XcodeExpression {
        let archive = try KeyedArchive(bytes, source: source)
        var decoder = Decoder(archive: archive)
        return try decoder.expression(archive.root(), depth: 0)
    }

    private struct Decoder {
        let archive: KeyedArchive
        /// Archives made by Xcode nest a handful of levels; a deeper one is hostile.
        static let maximumDepth = 64

        mutating func expression(_ reference: PropertyListValue?, depth: Int) throws -> XcodeExpression {
            guard let object = try archive.object(reference) else { return .constant(nil) }
            return try expression(object, depth: depth)
        }

        mutating func expression(_ object: KeyedArchive.Object, depth: Int) throws -> XcodeExpression {
            guard depth < Self.maximumDepth else {
                throw FerryError(.invalidInput, "\(archive.source): the expression nests more than \(Self.maximumDepth) levels")
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
                var arguments: [XcodeExpression] = []
                for argument in try archive.array(object["NSArguments"]) {
                    arguments.append(try expression(argument, depth: depth + 1))
                }
                if selector == "valueForKeyPath:" || selector == "valueForKey:", arguments.count == 1,
                    case .keyPath(.evaluatedObject, let path) = arguments[0]
                {
                    return .keyPath(operand: operand, path: path)
                }
                if object.className == "NSKeyPathExpression" {
                    throw FerryError(.invalidInput, "\(archive.source): a key path expression with selector '\(selector)' and \(arguments.count) arguments")
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
                if let number = try archive.resolve(object["NS.intval"]) ?? archive.resolve(object["NS.dblval"]) { return number }
                throw FerryError(.invalidInput, "\(archive.source): a constant of class \(object.className)")
            }
            return resolved
        }
    }
}
