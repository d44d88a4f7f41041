import FerryCore
import Foundation
import Yams

/// A YAML node with the location of its first character: the only view of YAML the rest of
/// FerryPipeline sees (no Yams type leaves this folder).
struct YAMLNode {
    enum Content {
        /// A scalar's text; `isNull` for a plain `~`, `null` or empty value.
        case scalar(String, isNull: Bool)
        case mapping([(key: YAMLNode, value: YAMLNode)])
        case sequence([YAMLNode])
    }

    var content: Content
    var location: InputLocation
    /// True for a single- or double-quoted scalar (its text starts one column after `location`).
    var isQuoted = false
    /// Bytes between `location` and the scalar's text: 1 for a quoted scalar, else 0.
    var textOffset = 0

    /// Where the scalar's text starts (after an opening quote).
    var textLocation: InputLocation {
        var start = location
        start.column += textOffset
        return start
    }

    /// Parses the first document of a YAML text; nil for an empty document. Syntax errors come
    /// out as `file:line:column: error: …` with the offending line and a caret as notes; a text
    /// beyond ``YAMLLimits`` (size, nesting, aliases) is refused before any tree is built.
    static func parse(_ text: String, file: String, code: FerryError.Code) throws(FerryError) -> YAMLNode? {
        let bytes = Array(text.utf8)
        if bytes.count > YAMLLimits.maximumBytes {
            throw FerryError(
                code, "YAML file is too large: more than \(YAMLLimits.maximumBytes >> 20) MiB",
                at: location(ofByte: YAMLLimits.maximumBytes, in: bytes, file: file))
        }
        try YAMLPreflight.check(bytes, file: file, code: code)
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw convert(error, file: file, text: text, code: code)
        } catch {
            throw FerryError(code, "cannot read YAML: \(error)", at: InputLocation(file: file))
        }
        guard let root else { return nil }
        return try YAMLNode(root, file: file, code: code)
    }

    /// Reads a YAML file (no more than ``YAMLLimits/maximumBytes`` of it); nil for an empty document.
    static func load(path: String, code: FerryError.Code) throws(FerryError) -> YAMLNode? {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            data = try handle.read(upToCount: YAMLLimits.maximumBytes + 1) ?? Data()
        } catch {
            throw FerryError(
                code, "cannot read '\(path)': \(FileErrorReason.describe(error))", at: InputLocation(file: path))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw FerryError(code, "'\(path)' is not UTF-8 text", at: InputLocation(file: path))
        }
        return try parse(text, file: path, code: code)
    }

    /// The line and column of byte `offset` (columns count characters, as libyaml's do).
    private static func location(ofByte offset: Int, in bytes: [UInt8], file: String) -> InputLocation {
        let prefix = bytes[..<min(offset, bytes.count)]
        let lineStart = (prefix.lastIndex(of: 0x0A) ?? -1) + 1
        let line = prefix.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        let column = prefix[lineStart...].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
        return InputLocation(file: file, line: line, column: column)
    }

    private init(_ node: Node, file: String, code: FerryError.Code) throws(FerryError) {
        let mark = node.mark
        location = InputLocation(file: file, line: mark?.line ?? 0, column: mark?.column ?? 0)
        switch node {
        case .scalar(let scalar):
            let isNull = scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(scalar.string)
            content = .scalar(scalar.string, isNull: isNull)
            isQuoted = scalar.style == .singleQuoted || scalar.style == .doubleQuoted
            textOffset = scalar.style == .singleQuoted || scalar.style == .doubleQuoted ? 1 : 0
        case .mapping(let mapping):
            var pairs: [(key: YAMLNode, value: YAMLNode)] = []
            for (key, value) in mapping {
                pairs.append((try YAMLNode(key, file: file, code: code), try YAMLNode(value, file: file, code: code)))
            }
            content = .mapping(pairs)
        case .sequence(let sequence):
            var items: [YAMLNode] = []
            for item in sequence { items.append(try YAMLNode(item, file: file, code: code)) }
            content = .sequence(items)
        case .alias:
            throw FerryError(code, "YAML aliases are not supported in ferry files", at: location)
        }
    }

    private static func convert(_ error: YamlError, file: String, text: String, code: FerryError.Code) -> FerryError {
        func located(_ problem: String, _ context: YamlError.Context?, _ mark: Mark) -> FerryError {
            // libyaml's own nesting limit (1,000 levels) can stop the scanner before YAMLPreflight sees the 65th.
            if problem.hasPrefix("Maximum nesting level reached") {
                let message =
                    "YAML is nested too deeply: more than \(YAMLLimits.maximumDepth) levels of mappings and lists"
                return FerryError(code, message, at: InputLocation(file: file, line: mark.line, column: mark.column))
            }
            var message = problem
            if let context {
                message += " (\(context.text) at line \(context.mark.line), column \(context.mark.column))"
            }
            let snippet = mark.snippet(from: text).split(separator: "\n", omittingEmptySubsequences: false).map(
                String.init)
            return FerryError(
                code, message, at: InputLocation(file: file, line: mark.line, column: mark.column), notes: snippet)
        }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            return located(problem, context, mark)
        case .duplicatedKeysInMapping(let duplicates, let context):
            let names = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            return FerryError(
                code, "duplicate key \(names) in a mapping",
                at: InputLocation(file: file, line: context.mark.line, column: context.mark.column))
        case .reader(let problem, let offset, _, _):
            var location = InputLocation(file: file)
            if let offset {
                let prefix = text.prefix(offset)
                location.line = prefix.reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
                location.column = prefix.reversed().prefix { $0 != "\n" }.count + 1
            }
            return FerryError(code, problem, at: location)
        default:
            return FerryError(code, "cannot read YAML: \(error)", at: InputLocation(file: file))
        }
    }

    /// `a mapping`, `a list`, `'text'` or `null`: how a found value is named in messages.
    var kindDescription: String {
        switch content {
        case .scalar(let text, let isNull): return isNull ? "null" : "'\(text)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        }
    }

    var isNull: Bool {
        if case .scalar(_, true) = content { return true }
        return false
    }
}
