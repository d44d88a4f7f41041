import FerryCore
import Foundation

/// A small located XML tree (elements, attributes and their text), read by ``XMLReader``.
struct XMLElementNode {
    var name: String
    var attributes: [String: String]
    var children: [XMLElementNode]
    /// The element's own character data (CDATA included), outside its children.
    var text = ""
    /// Where the element's start tag begins (its `<`).
    var location: InputLocation

    /// The children with this element name, in document order.
    func children(named name: String) -> [XMLElementNode] { children.filter { $0.name == name } }

    /// Parses `data` (the file `path`); throws a located ``FerryError`` with `code` for a document
    /// that is not well-formed XML or not in an encoding ferry reads.
    static func parse(_ data: Data, path: String, code: FerryError.Code) throws -> XMLElementNode {
        var reader = try XMLReader(data: data, path: path, code: code)
        return try reader.read()
    }
}

/// A non-validating XML 1.0 reader for the documents Xcode writes (models' `contents`, mapping
/// models' `xcmapping.xml`): elements, attributes, character data, CDATA sections, comments,
/// processing instructions, character references and the five predefined entities.
///
/// ferry reads these documents itself rather than through Foundation's `XMLParser`, which on Linux
/// traps on a name that is not UTF-8, leaks the document when parsing fails, and fails on documents
/// of about a megabyte. A DOCTYPE is skipped; one with an internal subset (entity declarations,
/// the door to entity-expansion bombs) is refused, as is any entity but the predefined ones.
/// Documents are UTF-8 (as Xcode writes them); UTF-16 with a byte order mark and the encodings
/// Foundation converts (ISO-8859-1, Windows-1252, US-ASCII) are converted first.
struct XMLReader {
    private let bytes: [UInt8]
    private let path: String
    private let code: FerryError.Code
    private var index = 0
    private var line = 1
    private var lineStart = 0

    /// Elements nest at most this deep (Xcode's documents nest fewer than ten).
    static let maximumDepth = 256

    init(data: Data, path: String, code: FerryError.Code) throws {
        self.path = path
        self.code = code
        self.bytes = try Self.utf8Bytes(of: data, path: path, code: code)
    }

    /// The document's root element.
    mutating func read() throws -> XMLElementNode {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        try skipMisc(allowDoctype: true)
        guard index < bytes.count else { throw failure("the document has no root element") }
        guard bytes[index] == UInt8(ascii: "<") else { throw failure("text before the root element") }
        let root = try readElement()
        try skipMisc(allowDoctype: false)
        if index < bytes.count { throw failure("content after the root element") }
        return root
    }

    // MARK: - Encodings

    /// The document as UTF-8 bytes: converted from UTF-16 (by its byte order mark) or from the
    /// encoding its XML declaration names, and checked to be UTF-8 throughout.
    private static func utf8Bytes(of data: Data, path: String, code: FerryError.Code) throws -> [UInt8] {
        if data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE]) {
            guard let text = String(data: data, encoding: .utf16) else {
                throw FerryError(
                    code, "malformed XML: the document is not UTF-16 as its byte order mark says",
                    at: InputLocation(file: path, line: 1, column: 1))
            }
            return Array(text.utf8)
        }
        if let declared = declaredEncoding(in: data), !["utf-8", "utf8"].contains(declared.lowercased()) {
            let encodings: [String: String.Encoding] = [
                "iso-8859-1": .isoLatin1, "latin1": .isoLatin1, "iso_8859-1": .isoLatin1,
                "windows-1252": .windowsCP1252, "cp1252": .windowsCP1252,
                "us-ascii": .ascii, "ascii": .ascii,
            ]
            guard let encoding = encodings[declared.lowercased()], let text = String(data: data, encoding: encoding)
            else {
                throw FerryError(
                    code,
                    "malformed XML: the document's encoding '\(declared)' is not one ferry reads (UTF-8, UTF-16, ISO-8859-1, Windows-1252, US-ASCII)",
                    at: InputLocation(file: path, line: 1, column: 1))
            }
            return Array(text.utf8)
        }
        if let (line, column) = firstInvalidUTF8(in: data) {
            throw FerryError(
                code, "malformed XML: a byte that is not UTF-8 (the document's encoding)",
                at: InputLocation(file: path, line: line, column: column))
        }
        return Array(data)
    }

    /// The line and column (in characters) of the first byte that is not UTF-8, or nil.
    static func firstInvalidUTF8(in data: Data) -> (line: Int, column: Int)? {
        var line = 1
        var column = 1
        var bytes = data.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let encoded):
                if encoded.count == 1 && encoded.first == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
            case .emptyInput:
                return nil
            case .error:
                return (line, column)
            }
        }
    }

    /// The `encoding` of the XML declaration (`<?xml version="1.0" encoding="…"?>`), if any.
    private static func declaredEncoding(in data: Data) -> String? {
        let head = String(decoding: data.prefix(200), as: UTF8.self)
        let start = head.hasPrefix("\u{FEFF}") ? head.dropFirst() : head[...]
        guard start.hasPrefix("<?xml"), let end = start.range(of: "?>") else { return nil }
        let declaration = start[..<end.lowerBound]
        guard let key = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    // MARK: - Locations

    /// The location of `offset` (line and column in characters).
    private func location(at offset: Int) -> InputLocation {
        var column = 1
        var position = lineStart
        while position < offset && position < bytes.count {
            if bytes[position] & 0xC0 != 0x80 { column += 1 }
            position += 1
        }
        return InputLocation(file: path, line: line, column: column)
    }

    private func failure(_ reason: String) -> FerryError {
        FerryError(code, "malformed XML: \(reason)", at: location(at: index))
    }

    // MARK: - Scanning

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func isAhead(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return text.withUTF8Buffer { literal in
            for offset in 0..<count where bytes[index + offset] != literal[offset] { return false }
            return true
        }
    }

    /// Moves past one byte, counting lines.
    private mutating func advance() {
        if bytes[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        index += 1
    }

    private mutating func advance(by count: Int) {
        for _ in 0..<count where index < bytes.count { advance() }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    private mutating func skipSpaces() {
        while let byte = current, Self.isSpace(byte) { advance() }
    }

    /// Moves past `terminator`, failing with `unterminated` at the construct's start
    /// (`startLocation`) when the document ends first; returns the bytes before it.
    private mutating func scan(
        until terminator: StaticString, unterminated: String, startedAt startLocation: InputLocation
    ) throws -> ArraySlice<UInt8> {
        let start = index
        while index < bytes.count {
            if isAhead(terminator) {
                let content = bytes[start..<index]
                advance(by: terminator.utf8CodeUnitCount)
                return content
            }
            advance()
        }
        throw FerryError(code, "malformed XML: \(unterminated)", at: startLocation)
    }

    /// Skips whitespace, comments and processing instructions (and one DOCTYPE in the prolog).
    private mutating func skipMisc(allowDoctype: Bool) throws {
        while true {
            skipSpaces()
            if isAhead("<!--") {
                let start = location(at: index)
                advance(by: 4)
                _ = try scan(until: "-->", unterminated: "a comment that never ends (no '-->')", startedAt: start)
            } else if isAhead("<?") {
                try skipProcessingInstruction()
            } else if isAhead("<!DOCTYPE") {
                guard allowDoctype else { throw failure("a DOCTYPE after the root element") }
                try skipDoctype()
            } else {
                return
            }
        }
    }

    private mutating func skipProcessingInstruction() throws {
        let start = location(at: index)
        advance(by: 2)
        _ = try scan(until: "?>", unterminated: "a processing instruction that never ends (no '?>')", startedAt: start)
    }

    private mutating func skipDoctype() throws {
        let start = location(at: index)
        advance(by: 9)
        while let byte = current {
            switch byte {
            case UInt8(ascii: ">"):
                advance()
                return
            case UInt8(ascii: "["):
                throw failure(
                    "a DOCTYPE with an internal subset (entity declarations are not read; Xcode never writes them)")
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                advance()
                while let inner = current, inner != byte { advance() }
                if current != nil { advance() }
            default:
                advance()
            }
        }
        throw FerryError(code, "malformed XML: a DOCTYPE that never ends (no '>')", at: start)
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }

    private mutating func readName(_ what: String) throws -> String {
        guard let first = current, Self.isNameStart(first) else {
            throw failure(current == nil ? "the document ends where \(what) was expected" : "\(what) expected")
        }
        let start = index
        while let byte = current, Self.isNameByte(byte) { advance() }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    // MARK: - Elements

    /// Reads the element starting at `<`, its content and its end tag, without recursion (a
    /// stack of open elements), so that nesting depth costs no call stack.
    private mutating func readElement() throws -> XMLElementNode {
        var open: [XMLElementNode] = []
        var element = try readStartTag()
        if element.isEmpty { return element.node }
        open.append(element.node)
        while true {
            guard index < bytes.count else {
                let name = open.last?.name ?? ""
                throw failure("the document ends inside <\(name)> (no </\(name)>)")
            }
            if bytes[index] != UInt8(ascii: "<") {
                open[open.count - 1].text += try readText()
            } else if isAhead("</") {
                let endLocation = location(at: index)
                advance(by: 2)
                let name = try readName("an element name")
                skipSpaces()
                guard current == UInt8(ascii: ">") else { throw failure("'>' expected to end </\(name)>") }
                advance()
                guard let closed = open.popLast() else { throw failure("an end tag with no start tag") }
                guard closed.name == name else {
                    throw FerryError(
                        code,
                        "malformed XML: </\(name)> ends <\(closed.name)> (started at line \(closed.location.line))",
                        at: endLocation)
                }
                if open.isEmpty { return closed }
                open[open.count - 1].children.append(closed)
            } else if isAhead("<!--") {
                let start = location(at: index)
                advance(by: 4)
                _ = try scan(until: "-->", unterminated: "a comment that never ends (no '-->')", startedAt: start)
            } else if isAhead("<![CDATA[") {
                let start = location(at: index)
                advance(by: 9)
                let content = try scan(
                    until: "]]>", unterminated: "a CDATA section that never ends (no ']]>')", startedAt: start)
                open[open.count - 1].text += Self.normalizingLineEnds(String(decoding: content, as: UTF8.self))
            } else if isAhead("<?") {
                try skipProcessingInstruction()
            } else if isAhead("<!") {
                throw failure("a declaration inside an element")
            } else {
                guard open.count < Self.maximumDepth else {
                    throw failure("elements nest more than \(Self.maximumDepth) deep")
                }
                element = try readStartTag()
                if element.isEmpty {
                    open[open.count - 1].children.append(element.node)
                } else {
                    open.append(element.node)
                }
            }
        }
    }

    /// Reads a start tag (`<name attr="value" …>` or `…/>`).
    private mutating func readStartTag() throws -> (node: XMLElementNode, isEmpty: Bool) {
        let start = location(at: index)
        advance()
        let name = try readName("an element name")
        var attributes: [String: String] = [:]
        while true {
            let hadSpace = current.map(Self.isSpace) ?? false
            skipSpaces()
            guard let byte = current else { throw failure("the document ends inside the start tag of <\(name)>") }
            if byte == UInt8(ascii: ">") {
                advance()
                return (XMLElementNode(name: name, attributes: attributes, children: [], location: start), false)
            }
            if byte == UInt8(ascii: "/") {
                advance()
                guard current == UInt8(ascii: ">") else { throw failure("'>' expected after '/' in <\(name)>") }
                advance()
                return (XMLElementNode(name: name, attributes: attributes, children: [], location: start), true)
            }
            guard hadSpace else { throw failure("a space expected before an attribute of <\(name)>") }
            let attributeLocation = location(at: index)
            let attribute = try readName("an attribute name or the end of <\(name)>")
            skipSpaces()
            guard current == UInt8(ascii: "=") else { throw failure("'=' expected after attribute '\(attribute)'") }
            advance()
            skipSpaces()
            let value = try readAttributeValue(attribute)
            guard attributes.updateValue(value, forKey: attribute) == nil else {
                throw FerryError(
                    code, "malformed XML: attribute '\(attribute)' appears twice in <\(name)>", at: attributeLocation)
            }
        }
    }

    private mutating func readAttributeValue(_ attribute: String) throws -> String {
        guard let quote = current, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") else {
            throw failure("a quoted value expected for attribute '\(attribute)'")
        }
        advance()
        var value = ""
        var runStart = index
        while true {
            guard let byte = current else { throw failure("the document ends inside attribute '\(attribute)'") }
            switch byte {
            case quote:
                value += String(decoding: bytes[runStart..<index], as: UTF8.self)
                advance()
                return value
            case UInt8(ascii: "<"):
                throw failure("'<' inside the value of attribute '\(attribute)'")
            case UInt8(ascii: "&"):
                value += String(decoding: bytes[runStart..<index], as: UTF8.self)
                value += try readReference()
                runStart = index
            case 0x09, 0x0A, 0x0D:
                // Attribute-value normalization: each whitespace character is a space (a CR LF pair one).
                value += String(decoding: bytes[runStart..<index], as: UTF8.self)
                let isPair = byte == 0x0D && index + 1 < bytes.count && bytes[index + 1] == 0x0A
                advance(by: isPair ? 2 : 1)
                value += " "
                runStart = index
            default:
                advance()
            }
        }
    }

    /// Character data up to the next markup, references replaced and line ends normalized.
    private mutating func readText() throws -> String {
        var text = ""
        var runStart = index
        while let byte = current, byte != UInt8(ascii: "<") {
            if byte == UInt8(ascii: "&") {
                text += String(decoding: bytes[runStart..<index], as: UTF8.self)
                text += try readReference()
                runStart = index
            } else {
                advance()
            }
        }
        text += String(decoding: bytes[runStart..<index], as: UTF8.self)
        return Self.normalizingLineEnds(text)
    }

    private static func normalizingLineEnds(_ text: String) -> String {
        text.contains("\r")
            ? text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n") : text
    }

    /// Reads `&name;` or `&#…;` at `&` and returns what it stands for.
    private mutating func readReference() throws -> String {
        let start = index
        advance()
        var body: [UInt8] = []
        while let byte = current, byte != UInt8(ascii: ";") {
            guard body.count < 32, !Self.isSpace(byte), byte != UInt8(ascii: "<"), byte != UInt8(ascii: "&") else {
                index = start
                throw failure("'&' that starts no reference (write &amp; for an ampersand)")
            }
            body.append(byte)
            advance()
        }
        guard current == UInt8(ascii: ";") else {
            index = start
            throw failure("'&' that starts no reference (write &amp; for an ampersand)")
        }
        advance()
        let name = String(decoding: body, as: UTF8.self)
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "apos": return "'"
        case "quot": return "\""
        default: break
        }
        if name.hasPrefix("#") {
            let digits = name.dropFirst()
            let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            if let value, value != 0, let scalar = Unicode.Scalar(value) {
                return String(Character(scalar))
            }
            index = start
            throw failure("'&\(name);' is not a character XML allows")
        }
        index = start
        throw failure("unknown entity '&\(name);' (only &lt; &gt; &amp; &apos; &quot; and character references)")
    }
}
