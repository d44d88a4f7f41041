import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// The binary property list and keyed archive readers, on the real Core Data files in
/// `../shared/data/coredata` (store metadata, mapping-model value expressions) and on hostile
/// bytes.
@Suite(.enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))) struct PropertyListTests {
    static var coreData: URL? { TestPaths.sharedData?.appendingPathComponent("coredata") }

    static func files(named predicate: (String) -> Bool) throws -> [URL] {
        let root = try #require(coreData, "../shared/data/coredata is missing")
        let enumerator = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        return enumerator.compactMap { $0 as? URL }.filter { predicate($0.lastPathComponent) }.sorted {
            $0.path < $1.path
        }
    }

    /// `Z_PLIST` of a store, read from a copy (opening the original could touch its `-shm`).
    static func metadataBytes(of store: URL) throws -> [UInt8] {
        let directory = TemporaryDirectory("ferry-plist")
        let copy = directory.url.appendingPathComponent(store.lastPathComponent)
        try FileManager.default.copyItem(at: store, to: copy)
        let connection = try Connection(path: copy.path, readOnly: true, create: false)
        guard case .blob(let bytes) = try connection.scalar("SELECT Z_PLIST FROM Z_METADATA") else {
            throw FerryError(.internal, "no Z_PLIST in \(store.lastPathComponent)")
        }
        return bytes
    }

    @Test func everyStoreMetadataDecodes() throws {
        let stores = try Self.files { $0.hasSuffix(".sqlite") }
        #expect(stores.count >= 7)
        for store in stores {
            let plist = try BinaryPropertyList.decode(
                try Self.metadataBytes(of: store), source: store.lastPathComponent)
            #expect(plist["NSStoreType"]?.string == "SQLite", "\(store.lastPathComponent)")
            #expect(plist["NSStoreModelVersionHashesVersion"]?.integer == 3)
            let hashes = try #require(plist["NSStoreModelVersionHashes"]?.dictionary, "\(store.lastPathComponent)")
            #expect(hashes.count >= 1)
            for entry in hashes.entries {
                #expect(entry.value.data?.count == 32, "\(store.lastPathComponent) \(entry.key)")
            }
            #expect(plist["_NSAutoVacuumLevel"]?.string == "2")
            #expect((plist["NSPersistenceFrameworkVersion"]?.integer ?? 0) > 600)
        }
    }

    @Test func metadataKeepsTheFilesKeyOrderAndKnownValues() throws {
        let store = try #require(
            try Self.files { $0 == "CoreDataMigration_Example_1.sqlite" }.first { $0.path.contains("Revised") })
        let plist = try BinaryPropertyList.decode(try Self.metadataBytes(of: store), source: "v1")
        #expect(plist["NSPersistenceFrameworkVersion"]?.integer == 866)
        #expect(plist["NSStoreModelVersionIdentifiers"]?.array == [.string("")])
        #expect(plist["NSStoreModelVersionHashes"]?.dictionary?.keys == ["Post"])
        #expect(plist.dictionary?.count == 6)
    }

    /// Every `valueexpressiondata` of the real mapping models is a keyed archive of an NSExpression.
    @Test func mappingValueExpressionsAreKeyedArchives() throws {
        let mappings = try Self.files { $0 == "xcmapping.xml" }
        var expressions = 0
        for mapping in mappings {
            let text = try String(contentsOf: mapping, encoding: .utf8)
            let pattern = try NSRegularExpression(pattern: #"name="valueexpressiondata" type="binary">([^<]*)<"#)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let base64 = String(text[Range(match.range(at: 1), in: text)!]).filter { !$0.isWhitespace }
                let bytes = try #require(Data(base64Encoded: base64))
                let archive = try KeyedArchive([UInt8](bytes), source: mapping.lastPathComponent)
                let root = try archive.root()
                #expect(root.isKind(of: "NSExpression"), "\(root.className)")
                expressions += 1
                // wibosco 1→2: hexColor = $source.color.
                if root.className == "NSKeyPathExpression" {
                    #expect(try archive.string(root["NSSelectorName"]) == "valueForKeyPath:")
                    let operand = try #require(try archive.object(root["NSOperand"]))
                    #expect(operand.className == "NSVariableExpression")
                    #expect(try archive.string(operand["NSVariable"]) == "source")
                    let arguments = try archive.array(root["NSArguments"])
                    let path = try #require(try archive.object(arguments.first))
                    #expect(try archive.string(path["NSKeyPath"]) == "color")
                }
            }
        }
        #expect(expressions >= 1)
    }

    // MARK: Hand-made files

    /// A binary plist of `objects` (already encoded object bytes) with 1-byte offsets and refs.
    static func plist(_ objects: [[UInt8]], top: UInt8 = 0) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        let offsetSize = offsets.contains { $0 > 255 } ? 2 : 1
        for offset in offsets {
            if offsetSize == 2 { bytes.append(UInt8(offset >> 8)) }
            bytes.append(UInt8(offset & 0xFF))
        }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), 1]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)]
        bytes += [0, 0, 0, 0, 0, 0, 0, top]
        bytes += [0, 0, 0, 0, 0, 0, UInt8(table >> 8), UInt8(table & 0xFF)]
        return bytes
    }

    @Test func scalarsOfEveryKind() throws {
        let bytes = Self.plist([
            [0xA8, 1, 2, 3, 4, 5, 6, 7, 8],  // array of the next 8 objects
            [0x10, 0xFF],  // 255 (1-byte integers are unsigned)
            [0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE],  // -2
            [0x23] + withUnsafeBytes(of: (1.5).bitPattern.bigEndian, Array.init),
            [0x09],
            [0x33] + withUnsafeBytes(of: (86400.0).bitPattern.bigEndian, Array.init),
            [0x42, 0xDE, 0xAD],
            [0x53] + Array("abc".utf8),
            [0x63, 0x00, 0xE9, 0xD8, 0x3D, 0xDE, 0x00],  // "é" + U+1F600 as a surrogate pair
        ])
        let value = try BinaryPropertyList.decode(bytes, source: "test")
        #expect(
            value
                == .array([
                    .integer(255), .integer(-2), .real(1.5), .bool(true), .date(86400), .data([0xDE, 0xAD]),
                    .string("abc"), .string("é\u{1F600}"),
                ]))
    }

    @Test func longLengthsUseAnIntegerAfterTheMarker() throws {
        let text = String(repeating: "x", count: 20)
        let bytes = Self.plist([[0x5F, 0x10, 20] + Array(text.utf8)])
        #expect(try BinaryPropertyList.decode(bytes, source: "t") == .string(text))
    }

    @Test func aCycleIsAnErrorNotACrash() throws {
        // An array that contains itself.
        let bytes = Self.plist([[0xA1, 0]])
        #expect(throws: FerryError.self) { try BinaryPropertyList.decode(bytes, source: "cyclic") }
    }

    @Test func sharedObjectsAreDecodedOnce() throws {
        // 30 levels of arrays each holding the next level twice: 2^30 leaves if expanded naively.
        var objects: [[UInt8]] = []
        for level in 0..<30 { objects.append([0xA2, UInt8(level + 1), UInt8(level + 1)]) }
        objects.append([0x10, 7])
        let value = try BinaryPropertyList.decode(Self.plist(objects), source: "shared")
        #expect(value.array?.count == 2)
    }

    @Test func badFilesAreClearErrors() throws {
        let cases: [(String, [UInt8])] = [
            ("not a plist", Array("hello world, this is not a property list at all!".utf8)),
            ("empty", []),
            ("truncated", Array(Self.plist([[0x53] + Array("abc".utf8)]).dropLast(3))),
            ("count past the end", Self.plist([[0x5F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]])),
            ("string past the end", Self.plist([[0x5E, 0x61]])),
            ("reference out of range", Self.plist([[0xA1, 9]])),
            ("non-string key", Self.plist([[0xD1, 1, 1], [0x10, 1]])),
            ("unknown marker", Self.plist([[0x9F]])),
        ]
        for (name, bytes) in cases {
            #expect(throws: FerryError.self, "\(name)") { try BinaryPropertyList.decode(bytes, source: name) }
        }
        let error = try #require(throws: FerryError.self) {
            try BinaryPropertyList.decode(Self.plist([[0xA1, 9]]), source: "Z_METADATA of 'x.sqlite'")
        }
        #expect(error.message.contains("Z_METADATA of 'x.sqlite' is a malformed binary property list"))
    }

    /// Every single-byte change of a real metadata plist either decodes or throws; none traps.
    @Test func mutatedMetadataNeverCrashes() throws {
        let store = try #require(try Self.files { $0.hasSuffix(".sqlite") }.first)
        let original = try Self.metadataBytes(of: store)
        var decoded = 0
        for position in 0..<original.count {
            for replacement: UInt8 in [0x00, 0xFF, original[position] ^ 0x10] {
                var bytes = original
                bytes[position] = replacement
                if (try? BinaryPropertyList.decode(bytes, source: "mutated")) != nil { decoded += 1 }
            }
        }
        #expect(decoded > 0)
    }

    @Test func keyedArchiveReferencesAreChecked() throws {
        // {$top: {root: UID 5}, $objects: ["$null"]}: the root points past $objects.
        let bytes = Self.plist([
            [0xD2, 1, 2, 3, 4],
            [0x54] + Array("$top".utf8),
            [0x58] + Array("$objects".utf8),
            [0xD1, 5, 6],
            [0xA1, 7],
            [0x54] + Array("root".utf8),
            [0x80, 5],
            [0x55] + Array("$null".utf8),
        ])
        let archive = try KeyedArchive(bytes, source: "archive")
        #expect(throws: FerryError.self) { try archive.root() }
    }
}
