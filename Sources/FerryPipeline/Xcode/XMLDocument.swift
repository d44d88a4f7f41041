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
