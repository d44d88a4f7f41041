import CFerryCompression
import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryFormats

// MARK: - Writing compressed and encoded files (with the same libraries, one-shot)

enum Compressing {
    static func gzip(_ bytes: [UInt8], to path: String) throws {
        guard let file = gzopen(path, "wb") else { throw FerryError(.io, "gzopen failed") }
        var copy = bytes
        let written = copy.withUnsafeMutableBytes { gzwrite(file, $0.baseAddress, UInt32($0.count)) }
        gzclose(file)
        guard written == bytes.count || bytes.isEmpty else { throw FerryError(.io, "gzwrite failed") }
    }

    static func zstd(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let size = output.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes { ZSTD_compress(out.baseAddress, out.count, $0.baseAddress, $0.count, 3) }
        }
        return Array(output.prefix(size))
    }

    static func bzip2(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: bytes.count + bytes.count / 100 + 600)
        var size = UInt32(output.count)
        var input = bytes
        _ = output.withUnsafeMutableBytes { out in
            input.withUnsafeMutableBytes {
                BZ2_bzBuffToBuffCompress(
                    out.baseAddress?.assumingMemoryBound(to: CChar.self), &size,
                    $0.baseAddress?.assumingMemoryBound(to: CChar.self), UInt32($0.count), 9, 0, 0)
            }
        }
        return Array(output.prefix(Int(size)))
    }

    static func xz(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: bytes.count + 1024)
        var position = 0
        _ = output.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes {
                lzma_easy_buffer_encode(
                    6, LZMA_CHECK_CRC64, nil, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count,
                    out.baseAddress?.assumingMemoryBound(to: UInt8.self), &position, out.count)
            }
        }
        return Array(output.prefix(position))
    }

    /// Writes `bytes` compressed as `compression` to `path`.
    static func write(_ bytes: [UInt8], _ compression: Compression, to path: String) throws {
        switch compression {
        case .gzip: try gzip(bytes, to: path)
        case .zstd: try Data(zstd(bytes)).write(to: URL(fileURLWithPath: path))
        case .bzip2: try Data(bzip2(bytes)).write(to: URL(fileURLWithPath: path))
        case .xz: try Data(xz(bytes)).write(to: URL(fileURLWithPath: path))
        }
    }
}

/// UTF-16/32 bytes of a string, with or without a byte order mark.
private func encoded(_ text: String, _ encoding: String.Encoding, bom: [UInt8] = []) -> [UInt8] {
    bom + Array(text.data(using: encoding) ?? Data())
}

/// Every record of a CSV input as `line:column value…` or its problem, then the error that
/// stopped the reader (if any).
private func csvRecords(
    _ path: String, encoding: TextEncoding? = nil, chunkSize: Int, options: CSVOptions = CSVOptions()
) -> [String] {
    var lines: [String] = []
    do {
        let reader = CSVReader(
            input: try InputFile(path: path, encoding: encoding), options: options, chunkSize: chunkSize)
        try reader.prepare()
        lines.append("names: \(reader.fieldNames)")
        while let record = try reader.next() {
            if let problem = record.problem {
                lines.append(
                    "#\(record.number) problem \(problem.location?.line ?? 0):\(problem.location?.column ?? 0) \(problem.message)"
                )
                continue
            }
            lines.append(
                "#\(record.number) \(record.line): "
                    + record.fields.map { field in
                        guard let field else { return "absent" }
                        if case .text(let text) = field.value { return "\(field.line):\(field.column)=\(text)" }
                        return "\(field.line):\(field.column)=\(field.value)"
                    }.joined(separator: " "))
        }
    } catch {
        lines.append("error: \(error)")
    }
    return lines
}

/// A CSV text with quoted line breaks, non-ASCII text, a ragged record and an unclosed quote at the end.
private let sampleCSV: String = {
    var text = "id,name,note\r\n"
    for id in 1...300 {
        text += "\(id),Zoë \(id),\"line one\nline two, \"\"quoted\"\"\"\r\n"
        if id == 150 { text += "150b,too,many,fields\r\n" }
    }
    return text + "301,Åsa,\"never closed\n"
}()

@Suite("Compressed input: decompressed as it is read, located in the decompressed text")
struct CompressedInputTests {
    @Test("every compression reads exactly like the plain file, at any chunk size", arguments: Compression.allCases)
    func sameRecords(compression: Compression) throws {
        let dir = TemporaryDirectory()
        let plain = try dir.write("plain.csv", sampleCSV)
        let packed = dir.file("packed.csv.\(compression.rawValue)")
        try Compressing.write(Array(sampleCSV.utf8), compression, to: packed)
        let expected = csvRecords(plain, chunkSize: 1 << 18)
        #expect(expected.count == 303)
        #expect(expected[151] == "#151 problem 302:15 expected 3 fields but found 4")
        #expect(
            expected.last
                == "#302 problem 603:10 quoted field is not closed before the end of the input (reading went on at the next line)"
        )
        for chunkSize in [1, 2, 7, 64, 4096, 1 << 18] {
            #expect(csvRecords(packed, chunkSize: chunkSize) == expected, "\(compression) chunk \(chunkSize)")
        }
        #expect(try InputFile(path: packed).compression == compression)
    }

    @Test("concatenated gzip members read as one stream; an empty compressed file reads as empty")
    func concatenated() throws {
        let dir = TemporaryDirectory()
        let first = dir.file("a.gz")
        let second = dir.file("b.gz")
        try Compressing.gzip(Array("id,name\n1,a\n".utf8), to: first)
        try Compressing.gzip(Array("2,b\n".utf8), to: second)
        let joined = dir.file("joined.csv.gz")
        var both = try Data(contentsOf: URL(fileURLWithPath: first))
        both.append(try Data(contentsOf: URL(fileURLWithPath: second)))
        try both.write(to: URL(fileURLWithPath: joined))
        #expect(
            csvRecords(joined, chunkSize: 3) == ["names: [\"id\", \"name\"]", "#1 2: 2:1=1 2:3=a", "#2 3: 3:1=2 3:3=b"])
        let empty = dir.file("empty.csv.xz")
        try Compressing.write([], .xz, to: empty)
        #expect(csvRecords(empty, chunkSize: 5) == ["names: []"])
    }

    @Test(
        "a cut-off or corrupt compressed file is an error naming the file, never a hang or a crash",
        arguments: Compression.allCases)
    func damaged(compression: Compression) throws {
        let dir = TemporaryDirectory()
        let whole = dir.file("whole")
        try Compressing.write(Array(sampleCSV.utf8), compression, to: whole)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = dir.file("cut.csv")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        let cutLast = csvRecords(cut, chunkSize: 4096).last ?? ""
        #expect(cutLast.hasPrefix("error: \(cut): error: "), "\(compression): \(cutLast)")
        var damaged = bytes
        for index in stride(from: 20, to: damaged.count - 8, by: 7) { damaged[index] ^= 0x5A }
        let corrupt = dir.file("corrupt.csv")
        try damaged.write(to: URL(fileURLWithPath: corrupt))
        let corruptLast = csvRecords(corrupt, chunkSize: 4096).last ?? ""
        #expect(corruptLast.hasPrefix("error: \(corrupt): error: "), "\(compression): \(corruptLast)")
    }

    @Test("JSON and NDJSON read through decompression too")
    func jsonCompressed() throws {
        let dir = TemporaryDirectory()
        let json = dir.file("rows.json.zst")
        try Compressing.write(
            Array(#"{"rows": [{"id": 1, "name": "Zoë"}, {"id": 2, "name": "Åsa"}]}"#.utf8), .zstd, to: json)
        let array = try JSONArrayReader(path: json, pointer: "/rows", chunkSize: 1)
        var names: [FieldValue?] = []
        while let record = try array.next() { names.append(record[array.fieldIndex(of: "name")]?.value) }
        #expect(names == [.text("Zoë"), .text("Åsa")])

        let ndjson = dir.file("rows.ndjson.bz2")
        try Compressing.write(Array("{\"id\": 1}\n{\"id\": \n{\"id\": 3}\n".utf8), .bzip2, to: ndjson)
        let lines = try NDJSONReader(path: ndjson, chunkSize: 2)
        var seen: [String] = []
        while let record = try lines.next() {
            seen.append(
                record.problem.map { "problem \($0.location?.line ?? 0)" }
                    ?? "\(record[lines.fieldIndex(of: "id")]?.value ?? .null)")
        }
        #expect(seen == ["number(\"1\")", "problem 2", "number(\"3\")"])
    }
}

@Suite("Text encodings: converted to UTF-8 as read; an invalid byte is a located reject")
struct EncodedInputTests {
    static let text = "id,name,city\n1,Zoë,Zürich\n2,\"Åsa, Jr\",Malmö\n3,€uro,Köln\n"

    @Test(
        "UTF-16 and UTF-32 with a byte order mark are detected; declared encodings are converted",
        arguments: [1, 3, 64, 1 << 18])
    func detectedAndDeclared(chunkSize: Int) throws {
        let dir = TemporaryDirectory()
        let expected = csvRecords(try dir.write("utf8.csv", Self.text), chunkSize: chunkSize)
        #expect(expected.count == 4)
        let files: [(String, [UInt8], TextEncoding?)] = [
            ("utf16le.csv", encoded(Self.text, .utf16LittleEndian, bom: [0xFF, 0xFE]), nil),
            ("utf16be.csv", encoded(Self.text, .utf16BigEndian, bom: [0xFE, 0xFF]), nil),
            ("utf32le.csv", encoded(Self.text, .utf32LittleEndian, bom: [0xFF, 0xFE, 0, 0]), nil),
            ("utf32be.csv", encoded(Self.text, .utf32BigEndian, bom: [0, 0, 0xFE, 0xFF]), nil),
            ("declared16.csv", encoded(Self.text, .utf16LittleEndian), try TextEncoding(named: "utf-16le")),
            ("cp1252.csv", encoded(Self.text, .windowsCP1252), try TextEncoding(named: "windows-1252")),
            ("utf8bom.csv", [0xEF, 0xBB, 0xBF] + Array(Self.text.utf8), nil),
        ]
        for (name, bytes, encoding) in files {
            let path = try dir.write(name, bytes: bytes)
            #expect(csvRecords(path, encoding: encoding, chunkSize: chunkSize) == expected, "\(name)")
        }
        // Latin-1 has no €: the rest of the text converts the same.
        let latin = Self.text.replacingOccurrences(of: "€", with: "E")
        let latinPath = try dir.write("latin1.csv", bytes: encoded(latin, .isoLatin1))
        #expect(
            csvRecords(latinPath, encoding: try TextEncoding(named: "latin1"), chunkSize: chunkSize)
                == csvRecords(try dir.write("latin-utf8.csv", latin), chunkSize: chunkSize))
    }

    @Test(
        "a byte invalid in the declared encoding rejects its record at its line and column; reading goes on",
        arguments: [1, 2, 5, 1 << 18])
    func invalidBytes(chunkSize: Int) throws {
        let dir = TemporaryDirectory()
        // 0x81 is not a Windows-1252 character; an unpaired UTF-16 surrogate is not UTF-16.
        let cp1252 = try dir.write(
            "bad1252.csv", bytes: Array("id,name\n1,ok\n2,a".utf8) + [0x81] + Array("b\n3,fine\n".utf8))
        #expect(
            csvRecords(cp1252, encoding: try TextEncoding(named: "windows-1252"), chunkSize: chunkSize) == [
                "names: [\"id\", \"name\"]", "#1 2: 2:1=1 2:3=ok",
                "#2 problem 3:4 text that is not valid windows-1252 in field 'name'", "#3 4: 4:1=3 4:3=fine",
            ])
        var utf16 = encoded("id,name\n1,a", .utf16LittleEndian, bom: [0xFF, 0xFE])
        utf16 += [0x00, 0xD8]  // a lone high surrogate
        utf16 += encoded("b\n2,c\n", .utf16LittleEndian)
        let surrogate = try dir.write("bad16.csv", bytes: utf16)
        #expect(
            csvRecords(surrogate, chunkSize: chunkSize) == [
                "names: [\"id\", \"name\"]", "#1 problem 2:4 text that is not valid utf-16le in field 'name'",
                "#2 3: 3:1=2 3:3=c",
            ])
        // A UTF-16 file cut in the middle of a character: the last record is rejected, not lost silently.
        let cut = try dir.write(
            "cut16.csv", bytes: encoded("id\n1\n2", .utf16LittleEndian, bom: [0xFF, 0xFE]) + [0x33])
        #expect(
            csvRecords(cut, chunkSize: chunkSize).last == "#2 problem 3:2 text that is not valid utf-16le in field 'id'"
        )
    }

    @Test("an unknown encoding is a usage error")
    func unknown() {
        #expect(throws: FerryError.self) { try TextEncoding(named: "klingon-8") }
        #expect((try? TextEncoding(named: "ISO-8859-15")) != nil)
    }

    @Test("a gzip-compressed UTF-16 file: both decoders stacked")
    func stacked() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("both.csv.gz")
        try Compressing.gzip(encoded(Self.text, .utf16LittleEndian, bom: [0xFF, 0xFE]), to: path)
        #expect(csvRecords(path, chunkSize: 2) == csvRecords(try dir.write("utf8.csv", Self.text), chunkSize: 2))
    }
}
