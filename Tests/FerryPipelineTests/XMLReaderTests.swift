import FerryCore
import Foundation
import Testing

@testable import FerryPipeline

/// ferry's own XML reader (Xcode's models and mapping models): what it reads, and every way a
/// document can be malformed is an error at its line and column, never a crash, a leak or a hang.
@Suite("XML reader")
struct XMLReaderTests {
    func parse(_ text: String) throws -> XMLElementNode {
        try XMLElementNode.parse(Data(text.utf8), path: "doc.xml", code: .invalidModel)
    }

    /// The rendered error of parsing `text`, or nil when it parses.
    func error(_ text: String) -> String? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("elements, attributes, text, CDATA, comments, processing instructions and references")
    func wellFormed() throws {
        let root = try parse(
            """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <!-- a comment before the root -->
            <!DOCTYPE model>
            <model a="1 &lt; 2 &amp;&amp; &#x41;&#66;" b='single "quoted"'>
                <entity name="Car"><?pi ignored?><!-- inside --></entity>
                <text>x &gt; y<![CDATA[<raw & kept>]]></text>
                <multi c="one
            two	three"/>
            </model>
            <!-- after -->
            """)
        #expect(root.name == "model")
        #expect(root.attributes["a"] == "1 < 2 && AB")
        #expect(root.attributes["b"] == "single \"quoted\"")
        #expect(root.children.map(\.name) == ["entity", "text", "multi"])
        #expect(root.children[0].location.line == 5)
        #expect(root.children[0].location.column == 5)
        #expect(root.children[1].text == "x > y<raw & kept>")
        #expect(root.children[2].attributes["c"] == "one two three")
    }

    @Test("UTF-16 with a byte order mark and a declared ISO-8859-1 are converted")
    func encodings() throws {
        let text = "<?xml version=\"1.0\"?><model name=\"Caf\u{E9}\"/>"
        let utf16 = try #require(text.data(using: .utf16))
        #expect(try XMLElementNode.parse(utf16, path: "u.xml", code: .invalidModel).attributes["name"] == "Caf\u{E9}")
        let latin = try #require(
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><model name=\"Caf\u{E9}\"/>".data(using: .isoLatin1))
        #expect(try XMLElementNode.parse(latin, path: "l.xml", code: .invalidModel).attributes["name"] == "Caf\u{E9}")
        let unknown = Data("<?xml version=\"1.0\" encoding=\"EBCDIC\"?><model/>".utf8)
        #expect(throws: FerryError.self) { try XMLElementNode.parse(unknown, path: "e.xml", code: .invalidModel) }
    }

    @Test(
        "every malformation is an error at its line and column",
        arguments: [
            ("<model>\n  <entity>\n</model>", "doc.xml:3:1", "</model> ends <entity>"),
            ("<model>\n  <entity name=\"x\"", "doc.xml:2:", "ends inside the start tag"),
            ("<model a=\"1\" a=\"2\"/>", "doc.xml:1:14", "appears twice"),
            ("<model a=1/>", "doc.xml:1:10", "a quoted value expected"),
            ("<model>&nbsp;</model>", "doc.xml:1:8", "unknown entity '&nbsp;'"),
            ("<model>a & b</model>", "doc.xml:1:10", "starts no reference"),
            ("<model>&#0;</model>", "doc.xml:1:8", "not a character"),
            ("<model>&#xD800;</model>", "doc.xml:1:8", "not a character"),
            ("<!DOCTYPE m [<!ENTITY a \"aaaa\">]><model>&a;</model>", "doc.xml:1:13", "internal subset"),
            ("<model/><other/>", "doc.xml:1:9", "content after the root element"),
            ("text<model/>", "doc.xml:1:1", "text before the root element"),
            ("", "doc.xml:1:1", "no root element"),
            ("<model><!-- never ends", "doc.xml:1:8", "a comment that never ends"),
            ("<model><![CDATA[ never ends", "doc.xml:1:8", "CDATA section that never ends"),
            ("<model>\n  <é a=\"<\"/></model>", "doc.xml:2:9", "'<' inside the value"),
            ("<model>\n<entity></model>", "doc.xml:2:9", "</model> ends <entity>"),
            ("<model", "doc.xml:1:7", "ends inside the start tag"),
            ("<model><1/></model>", "doc.xml:1:9", "an element name expected"),
        ])
    func malformed(text: String, location: String, reason: String) throws {
        let rendered = try #require(error(text), "parsed: \(text)")
        #expect(rendered.hasPrefix(location), "\(rendered)")
        #expect(rendered.contains("malformed XML: "), "\(rendered)")
        #expect(rendered.contains(reason), "\(rendered)")
    }

    @Test("bytes that are not UTF-8 are located; nesting deeper than the limit is refused without recursion")
    func hostile() throws {
        let bad = Data("<model>\n  <a b=\"".utf8) + Data([0xC3, 0x28]) + Data("\"/></model>".utf8)
        #expect(throws: FerryError.self) { try XMLElementNode.parse(bad, path: "b.xml", code: .invalidModel) }
        do {
            _ = try XMLElementNode.parse(bad, path: "b.xml", code: .invalidModel)
        } catch {
            #expect("\(error)".hasPrefix("b.xml:2:9"), "\(error)")
        }
        let deep = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        #expect(error(deep)?.contains("nest more than \(XMLReader.maximumDepth) deep") == true)
        let fine = String(repeating: "<a>", count: 200) + String(repeating: "</a>", count: 200)
        #expect(error(fine) == nil)
    }

    @Test("a document of several megabytes (Foundation's XMLParser failed at about one on Linux)")
    func large() throws {
        var text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<model>\n"
        for index in 0..<40_000 {
            text += "    <entity name=\"Entity\(index)\" representedClassName=\"Entity\(index)\" syncable=\"YES\"/>\n"
        }
        text += "</model>\n"
        #expect(text.utf8.count > 3_000_000)
        let root = try parse(text)
        #expect(root.children.count == 40_000)
        #expect(root.children.last?.attributes["name"] == "Entity39999")
        #expect(root.children.last?.location.line == 40_002)
    }
}
