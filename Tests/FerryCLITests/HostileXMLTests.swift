import FerryTestSupport
import Foundation
import Testing

/// Xcode documents (model versions' `contents`, mapping models' `xcmapping.xml`) with bytes that
/// are not UTF-8: Foundation's XMLParser trapped (SIGILL, exit 132) on such a name. Each is now a
/// located error with the definitions' exit code, whichever command reads the document.
@Suite("hostile Xcode XML: bytes that are not UTF-8", .serialized)
struct HostileXMLTests {
    static let model = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Author" representedClassName="Author" syncable="YES">
                <attribute name="id" attributeType="Integer 64" usesScalarValueType="YES"/>
                <attribute name="NAME" optional="YES" attributeType="String"/>
            </entity>
        </model>

        """

    /// The model with `NAME` replaced by `bytes` (in an attribute value) or `<attribute` by
    /// `<attr` + bytes (in an element name), written as `Bad.xcdatamodel/contents`.
    func writeModel(in directory: TemporaryDirectory, replacing target: String, with bytes: [UInt8]) throws -> String {
        let folder = directory.url.appendingPathComponent("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let text = Self.model
        let range = try #require(text.range(of: target))
        let data =
            Data(text[..<range.lowerBound].utf8) + Data(bytes) + Data(text[range.upperBound...].utf8)
        try data.write(to: folder.appendingPathComponent("contents"))
        return folder.path
    }

    static let cases: [(target: String, bytes: [UInt8], label: String)] = [
        (
            "<attribute name=\"NAME\"", Array("<attr".utf8) + [0xFF, 0xFE] + Array("bute name=\"x\"".utf8),
            "element name"
        ),
        ("name=\"NAME\"", Array("na".utf8) + [0xC3] + Array("me=\"x\"".utf8), "attribute name"),
        ("NAME", [0x4E, 0xC0, 0xAF], "attribute value (overlong encoding)"),
        ("NAME", [0xED, 0xA0, 0x80], "attribute value (a UTF-16 surrogate)"),
    ]

    @Test("model show, validate-style loading by import --model and model diff: a located error, never a crash")
    func modelDocuments() throws {
        for (target, bytes, label) in Self.cases {
            let directory = TemporaryDirectory("ferry-cli-hostile-xml")
            let model = try writeModel(in: directory, replacing: target, with: bytes)
            try "id\n1\n".write(to: directory.url.appendingPathComponent("a.csv"), atomically: true, encoding: .utf8)
            for arguments in [
                ["model", "show", model],
                ["model", "diff", model, model],
                ["import", "a.csv", "--store", "a.sqlite", "--model", model, "--entity", "Author", "--quiet"],
            ] {
                let result = try runFerry(arguments, cwd: directory.path)
                #expect(!result.wasSignaled, "\(label), \(arguments): \(result)")
                #expect(result.exitCode == 64, "\(label), \(arguments): \(result)")
                #expect(
                    result.stderr.contains("Bad.xcdatamodel/contents:5:")
                        && result.stderr.contains("malformed XML: a byte that is not UTF-8"),
                    "\(label), \(arguments): \(result.stderr)")
                #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("a.sqlite").path))
            }
        }
    }

    @Test("mapping show on an xcmapping.xml with a name that is not UTF-8: a located error, never a crash")
    func mappingDocument() throws {
        let directory = TemporaryDirectory("ferry-cli-hostile-xml")
        let package = directory.url.appendingPathComponent("Bad.xcmappingmodel")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let document =
            Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<database>\n    <obj".utf8) + Data([0xFF])
            + Data(" type=\"x\"/>\n</database>\n".utf8)
        try document.write(to: package.appendingPathComponent("xcmapping.xml"))
        let result = try runFerry(["mapping", "show", package.path], cwd: directory.path)
        #expect(!result.wasSignaled, "\(result)")
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("Bad.xcmappingmodel/xcmapping.xml:3:9:"), "\(result.stderr)")
        #expect(result.stderr.contains("malformed XML: a byte that is not UTF-8"), "\(result.stderr)")
    }

    @Test("a document that declares another encoding is converted by the parser, not refused")
    func declaredLatin1() throws {
        let directory = TemporaryDirectory("ferry-cli-hostile-xml")
        let folder = directory.url.appendingPathComponent("Latin.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let text = Self.model.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"ISO-8859-1\"")
            .replacingOccurrences(of: "representedClassName=\"Author\"", with: "representedClassName=\"Aut\u{E9}ur\"")
        try #require(text.data(using: .isoLatin1)).write(to: folder.appendingPathComponent("contents"))
        let result = try runFerry(["model", "show", folder.path], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("Author"), "\(result.stdout)")
    }
}
