import FerryCore
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A small located XML tree (elements, attributes and their text), read with Foundation's
/// `XMLParser`.
struct XMLElementNode {
    var name: String
    var attributes: [String: String]
    var children: [XMLElementNode]
    /// The element's own character data (CDATA included), outside its children.
    var text = ""
    /// Where the element's start tag ends (what `XMLParser` reports).
    var location: InputLocation

    /// The children with this element name, in document order.
    func children(named name: String) -> [XMLElementNode] { children.filter { $0.name == name } }

    /// Parses `data` (the file `path`); throws a located ``FerryError`` for malformed XML.
    static func parse(_ data: Data, path: String, code: FerryError.Code) throws -> XMLElementNode {
        // Foundation's XMLParser traps on a name that is not UTF-8 (libxml2 hands it through and
        // the conversion to String is forced): a document that is UTF-8 by its declaration is
        // checked first, so a bad byte is a located error instead of a crash.
        if let (line, column) = firstInvalidUTF8(in: data) {
            throw FerryError(
                code, "malformed XML: a byte that is not UTF-8 (the document's encoding)",
                at: InputLocation(file: path, line: line, column: column))
        }
        let parser = XMLParser(data: data)
        let builder = TreeBuilder(path: path, parser: parser)
        parser.delegate = builder
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let succeeded = parser.parse()
        guard succeeded, let root = builder.root else {
            let line = builder.failureLine ?? parser.lineNumber
            let column = builder.failureColumn ?? parser.columnNumber
            let reason =
                builder.failureReason
                ?? (parser.parserError.map { Self.describe($0) } ?? "the document has no root element")
            throw FerryError(
                code, "malformed XML: \(reason)",
                at: InputLocation(file: path, line: max(line, 1), column: max(column, 1)))
        }
        return root
    }

    /// The line and column (in characters) of the first byte that is not UTF-8, or nil when the
    /// document is UTF-8 throughout or says it is in another encoding (a UTF-16 byte order mark,
    /// or an XML declaration naming another `encoding`), which libxml2 converts itself.
    static func firstInvalidUTF8(in data: Data) -> (line: Int, column: Int)? {
        if data.starts(with: [0xFE, 0xFF]) || data.starts(with: [0xFF, 0xFE]) { return nil }
        if let encoding = declaredEncoding(in: data),
            !["utf-8", "utf8"].contains(encoding.lowercased())
        {
            return nil
        }
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
        guard head.hasPrefix("<?xml"), let end = head.range(of: "?>") else { return nil }
        let declaration = head[..<end.lowerBound]
        guard let key = declaration.range(of: "encoding") else { return nil }
        let rest = declaration[key.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        return String(rest.dropFirst().prefix { $0 != quote })
    }

    private static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        let text = nsError.localizedDescription
        if text.isEmpty || text.hasPrefix("The operation could not be completed") {
            return "XML parser error \(nsError.code)"
        }
        return text
    }

    private final class TreeBuilder: NSObject, XMLParserDelegate {
        let path: String
        weak var parser: XMLParser?
        var stack: [XMLElementNode] = []
        var root: XMLElementNode?
        var failureLine: Int?
        var failureColumn: Int?
        var failureReason: String?

        init(path: String, parser: XMLParser) {
            self.path = path
            self.parser = parser
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            let location = InputLocation(file: path, line: parser.lineNumber, column: parser.columnNumber)
            stack.append(XMLElementNode(name: elementName, attributes: attributeDict, children: [], location: location))
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?
        ) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            guard !stack.isEmpty else { return }
            stack[stack.count - 1].text += String(decoding: CDATABlock, as: UTF8.self)
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            guard failureReason == nil else { return }
            failureLine = parser.lineNumber
            failureColumn = parser.columnNumber
            failureReason = XMLElementNode.describe(parseError)
        }
    }
}
