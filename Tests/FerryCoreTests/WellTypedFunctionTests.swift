import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// `ferry_well_typed(codes, v1, …)`, the types check's per-row test: every storage class, NULL,
/// the edges of each well-formedness rule, invalid UTF-8 and embedded NULs.
@Suite("ferry_well_typed: the types check's SQL function")
struct WellTypedFunctionTests {
    let dir = TemporaryDirectory("ferry-well-typed")
    let connection: Connection

    init() throws {
        connection = try Connection(path: dir.file("functions.sqlite"))
        try Verifier.registerFunctions(on: connection)
    }

    /// The function's result for one value (an SQL expression) tested as `code`.
    func typed(_ code: String, _ value: String) throws -> Int64? {
        try connection.scalar("SELECT ferry_well_typed('\(code)', \(value))")?.int64
    }

    /// The codes for which `value` is well-typed, out of every code.
    func accepted(_ value: String) throws -> String {
        try String("silbfdtuxo".filter { try typed(String($0), value) == 1 })
    }

    @Test("NULL is well-typed for every type; each storage class only for its own types")
    func storageClasses() throws {
        #expect(try accepted("NULL") == "silbfdtuxo")
        #expect(try accepted("0") == "silb")
        #expect(try accepted("1") == "silb")
        #expect(try accepted("1.5") == "f")
        #expect(try accepted("1.0") == "f")
        #expect(try accepted("'text'") == "x")
        #expect(try accepted("'12'") == "dx")
        #expect(try accepted("X'3132'") == "o")
        #expect(try accepted("X''") == "o")
        #expect(try accepted("''") == "x")
    }

    @Test("integer ranges: int16, int32, booleans 0 and 1")
    func integerRanges() throws {
        #expect(try accepted("-32768") == "sil")
        #expect(try accepted("32767") == "sil")
        #expect(try accepted("32768") == "il")
        #expect(try accepted("-32769") == "il")
        #expect(try accepted("2147483647") == "il")
        #expect(try accepted("-2147483649") == "l")
        #expect(try accepted("9223372036854775807") == "l")
        #expect(try accepted("2") == "sil")
        #expect(try accepted("-1") == "sil")
    }

    @Test("decimals: a sign, digits and at most one inner point")
    func decimals() throws {
        for good in ["'0'", "'-12.5'", "'123456789012345678901234567890'", "'0.000'", "'-0'", "'007'"] {
            #expect(try typed("d", good) == 1, "\(good)")
        }
        for bad in [
            "''", "'-'", "'.'", "'.5'", "'-.5'", "'5.'", "'1.2.3'", "'1-2'", "'--1'", "'+1'", "'12e3'", "' 1'", "'1 '",
            "'١'", "'1,5'",
        ] {
            #expect(try typed("d", bad) == 0, "\(bad)")
        }
    }

    @Test("dates: the YYYY-MM-DDTHH:MM:SS.sssZ shape with the pattern's digit ranges")
    func dates() throws {
        for good in ["'2024-02-29T00:00:00.000Z'", "'0000-19-39T29:59:69.999Z'", "'9999-00-00T00:00:00.000Z'"] {
            #expect(try typed("t", good) == 1, "\(good)")
        }
        for bad in [
            "'2024-02-29'", "'2024-02-29T00:00:00Z'", "'2024-02-29T00:00:00.000z'", "'2024-02-29 00:00:00.000Z'",
            "'2024-20-01T00:00:00.000Z'", "'2024-01-40T00:00:00.000Z'", "'2024-01-01T30:00:00.000Z'",
            "'2024-01-01T00:60:00.000Z'",
            "'2024-01-01T00:00:70.000Z'", "'2024-01-01T00:00:00,000Z'", "'2024-01-01T00:00:00.000Z '",
            "'x2024-01-01T00:00:00.000Z'",
            "'202４-01-01T00:00:00.000Z'", "1706745600000",
        ] {
            #expect(try typed("t", bad) == 0, "\(bad)")
        }
    }

    @Test("UUIDs: 8-4-4-4-12 lowercase hexadecimal digits")
    func uuids() throws {
        #expect(try typed("u", "'6f1c2d3e-0000-4000-8000-00000000000a'") == 1)
        #expect(try typed("u", "'00000000-0000-0000-0000-000000000000'") == 1)
        for bad in [
            "'6F1C2D3E-0000-4000-8000-000000000002'", "'6f1c2d3e-0000-4000-8000-00000000000'",
            "'6f1c2d3e-0000-4000-8000-0000000000021'",
            "'6f1c2d3e00000-4000-8000-000000000002'", "'6f1c2d3e-0000-4000-8000-00000000000g'",
            "'{6f1c2d3e-0000-4000-8000-000000000002}'",
            "'6f1c2d3e-0000-4000-8000_000000000002'", "X'00'",
        ] {
            #expect(try typed("u", bad) == 0, "\(bad)")
        }
    }

    @Test("invalid UTF-8 and embedded NULs make decimals, dates and UUIDs malformed, but are still text")
    func bytes() throws {
        // CAST of a BLOB to TEXT keeps its bytes as they are.
        let badByte = "CAST(X'31FF' AS TEXT)"
        #expect(try accepted(badByte) == "x")
        #expect(try accepted("CAST(X'3100' AS TEXT)") == "x")  // "1\0"
        #expect(try accepted("CAST(X'2D00' AS TEXT)") == "x")  // "-\0"
        let uuid = Array("6f1c2d3e-0000-4000-8000-000000000002".utf8)
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02X", $0) }.joined() }
        #expect(try typed("u", "CAST(X'\(hex(uuid))' AS TEXT)") == 1)
        #expect(try typed("u", "CAST(X'\(hex(Array(uuid.dropLast()) + [0xFF]))' AS TEXT)") == 0)
        #expect(try typed("u", "CAST(X'\(hex(Array(uuid.dropLast()) + [0x00]))' AS TEXT)") == 0)
        let date = Array("2024-02-29T00:00:00.000Z".utf8)
        #expect(try typed("t", "CAST(X'\(hex(date))' AS TEXT)") == 1)
        #expect(try typed("t", "CAST(X'\(hex(Array(date.dropLast()) + [0x00]))' AS TEXT)") == 0)
        #expect(try typed("t", "CAST(X'\(hex(Array(date.dropLast()) + [0xDA]))' AS TEXT)") == 0)
    }

    /// The SQL the types check used before `ferry_well_typed`: true for malformed texts.
    static let formerGLOB: [String: String] = [
        "d":
            "s = '' OR s = '-' OR s GLOB '*[^0-9.-]*' OR s GLOB '?*-*' OR s GLOB '*.*.*' OR s GLOB '*.' OR s GLOB '.*' OR s GLOB '-.*'",
        // Dates: the former pattern, with further fractional digits (a Core Data date between two
        // milliseconds, which ferry writes with the digits that keep it exact).
        "t":
            "NOT (substr(s, 1, 23) GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9].[0-9][0-9][0-9]' AND s GLOB '?*Z' AND length(s) >= 24 AND substr(s, 24, length(s) - 24) NOT GLOB '*[^0-9]*')",
        "u": "s NOT GLOB '\([8, 4, 4, 4, 12].map { String(repeating: "[0-9a-f]", count: $0) }.joined(separator: "-"))'",
    ]

    /// Texts where `ferry_well_typed(code, s)` and the former GLOB test disagree.
    func disagreements(_ code: String, _ texts: [String]) throws -> [String] {
        try connection.executeScript("DROP TABLE IF EXISTS texts; CREATE TABLE texts(s TEXT)")
        try connection.transaction {
            for text in texts { try connection.execute("INSERT INTO texts VALUES (?)", [.text(text)]) }
        }
        let formerGLOB = try #require(Self.formerGLOB[code])
        return try connection.rows("SELECT s FROM texts WHERE ferry_well_typed('\(code)', s) = (\(formerGLOB))")
            .compactMap { $0.first?.text }
    }

    @Test(
        "decimals, dates and UUIDs: the same verdict as the former GLOB patterns (dates with further fractional digits too)"
    )
    func sameAsGLOB() throws {
        // Every text of up to 5 characters over "0", "9", ".", "-", "a", "é".
        var decimals: [String] = [""]
        var layer: [String] = [""]
        for _ in 1...5 {
            layer = layer.flatMap { prefix in ["0", "9", ".", "-", "a", "é"].map { prefix + $0 } }
            decimals += layer
        }
        #expect(try disagreements("d", decimals) == [])
        // A valid date and UUID with each character replaced, removed or doubled.
        func variants(of valid: String) -> [String] {
            let characters = Array(valid)
            var texts = [valid]
            for index in characters.indices {
                for replacement in Array("0123456789abfgzAFTZ:-. é/") {
                    var copy = characters
                    copy[index] = replacement
                    texts.append(String(copy))
                }
                var shorter = characters
                shorter.remove(at: index)
                var longer = characters
                longer.insert(characters[index], at: index)
                texts += [String(shorter), String(longer)]
            }
            return texts
        }
        let dates =
            variants(of: "2024-02-29T00:00:00.000Z") + variants(of: "1999-19-39T29:59:69.999Z")
            + variants(of: "2019-01-14T19:29:10.058821Z")
        #expect(try disagreements("t", dates) == [])
        let uuids =
            variants(of: "6f1c2d3e-0000-4000-8000-00000000000a") + variants(of: "abcdef01-2345-6789-abcd-ef0123456789")
        #expect(try disagreements("u", uuids) == [])
    }

    @Test("many values: 1 only when every one is well-typed")
    func manyValues() throws {
        #expect(
            try connection.scalar("SELECT ferry_well_typed('lux', 1, '6f1c2d3e-0000-4000-8000-000000000002', 'a')")?
                .int64 == 1)
        #expect(try connection.scalar("SELECT ferry_well_typed('lux', 1, NULL, NULL)")?.int64 == 1)
        #expect(try connection.scalar("SELECT ferry_well_typed('lux', 1, 'nope', 'a')")?.int64 == 0)
        #expect(try connection.scalar("SELECT ferry_well_typed('lux', 1, NULL, 2)")?.int64 == 0)
        #expect(try connection.scalar("SELECT ferry_well_typed('')")?.int64 == 1)
    }

    @Test("a wrong number of type codes or an unknown code is an SQL error")
    func misuse() throws {
        for (sql, message) in [
            ("SELECT ferry_well_typed('ll', 1)", "ferry_well_typed: expected one type code per value"),
            ("SELECT ferry_well_typed('l', 1, 2)", "ferry_well_typed: expected one type code per value"),
            ("SELECT ferry_well_typed(NULL, 1)", "ferry_well_typed: expected one type code per value"),
            ("SELECT ferry_well_typed('q', 1)", "ferry_well_typed: unknown type code"),
        ] {
            let error = #expect(throws: FerryError.self) { try connection.scalar(sql) }
            #expect(error?.message == "store '\(connection.path)': \(message)", "\(sql)")
        }
        // NULL is well-typed before its code is read.
        #expect(try connection.scalar("SELECT ferry_well_typed('q', NULL)")?.int64 == 1)
    }

    @Test("the types check over more columns than one call takes: each column counted on its own")
    func wideEntity() throws {
        let attributes = (0..<130).map {
            AttributeDescription(name: "a\($0)", type: $0.isMultiple(of: 2) ? .int64 : .uuid)
        }
        let model = ObjectModel(
            name: "W", version: "1", entities: [EntityDescription(name: "Wide", attributes: attributes)])
        let store = try BrokenStore(model: model)
        let uuid = "'6f1c2d3e-0000-4000-8000-000000000002'"
        let values = (0..<130).map { $0.isMultiple(of: 2) ? "\($0)" : uuid }
        try store.raw(
            "INSERT INTO Wide(ferry_pk, \((0..<130).map { "a\($0)" }.joined(separator: ", "))) VALUES (1, \(values.joined(separator: ", ")))"
        )
        #expect(try store.result(.types(entity: "Wide")).message == "1 rows, 130 attributes well-typed")
        try store.raw("INSERT INTO Wide(ferry_pk, a3, a120, a129) VALUES (2, 'x', 'y', \(uuid)), (3, NULL, 1.5, 'Z')")
        let result = try store.result(.types(entity: "Wide"))
        #expect(result.outcome == .failed)
        #expect(
            result.message
                == "a3 is not a lowercase UUID in 1 row; a120 is not an int64 in 2 rows; a129 is not a lowercase UUID in 1 row"
        )
        #expect(result.measured["violations"] == 4)
        #expect(
            result.offending.map(\.description) == [
                "Wide ferry_pk=2: a3 is not a lowercase UUID", "Wide ferry_pk=2: a120 is not an int64",
                "Wide ferry_pk=3: a120 is not an int64",
                "Wide ferry_pk=3: a129 is not a lowercase UUID",
            ])
    }
}
