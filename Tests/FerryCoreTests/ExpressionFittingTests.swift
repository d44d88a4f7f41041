import FerryCore
import Foundation
import Testing

@Suite("Expression result types, SQL and speed")
struct ExpressionFittingTests {
    typealias M = ExpressionTestModel

    private func fitFailure(_ text: String, _ attribute: AttributeDescription) -> String? {
        do {
            try M.bind(text).check(resultFits: attribute)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("results that fit a destination attribute are converted to its canonical form")
    func fitting() throws {
        let cases: [(String, AttributeType, Value)] = [
            ("$source.visits", .decimal, .decimal("5")), ("$source.visits", .double, .double(5)),
            ("$source.visits", .int16, .integer(5)),
            ("int('7')", .int64, .integer(7)), ("'https://x.org/a'", .uri, .uri("https://x.org/a")),
            ("'[1,2]'", .json, .json("[1,2]")),
            ("uuid('6F1C2D3E-0000-4000-8000-000000000002')", .string, .string("6f1c2d3e-0000-4000-8000-000000000002")),
            ("double('1.5')", .float, .double(1.5)), ("split('a b', ' ')", .json, .json(#"["a","b"]"#)),
        ]
        for (text, type, expected) in cases {
            let bound = try M.bind(text).fitted(to: AttributeDescription(name: "x", type: type))
            let value = try bound.evaluate(on: DictionaryExpressionContext(["visits": .integer(5)], for: bound))
            #expect(value == expected, "\(text) → \(type)")
            #expect(bound.resultType.kind == ExpressionType(attributeType: type, optional: false).kind)
        }
        try M.bind("nil").check(resultFits: .string)
        try M.bind("$source.email").check(
            resultFits: AttributeDescription(name: "email", type: .string, isOptional: false))
    }

    @Test("results that do not fit are errors at the expression, naming the attribute and the conversion")
    func mismatches() throws {
        let age = AttributeDescription(name: "age", type: .int64)
        #expect(
            fitFailure("$source.code", age)
                == "2-to-3.yml:7:15: error: '$source.code' is string, but attribute 'age' is int64; convert it with int(…)"
        )
        #expect(
            fitFailure("$source.balance", age)
                == "2-to-3.yml:7:15: error: '$source.balance' is decimal, but attribute 'age' is int64; convert it with int(…)"
        )
        #expect(
            fitFailure("'2024-01-01'", AttributeDescription(name: "joined", type: .date))
                == "2-to-3.yml:7:15: error: ''2024-01-01'' is string, but attribute 'joined' is date; convert it with date(…)"
        )
        #expect(
            fitFailure("$source.score", AttributeDescription(name: "total", type: .decimal))
                == "2-to-3.yml:7:15: error: '$source.score' is double, but attribute 'total' is decimal; convert it with decimal(…)"
        )
        #expect(
            fitFailure("1", AttributeDescription(name: "raw", type: .binary))
                == "2-to-3.yml:7:15: error: '1' is integer, but attribute 'raw' is binary")
        #expect(
            fitFailure("nil", AttributeDescription(name: "name", type: .string, isOptional: false))
                == "2-to-3.yml:7:15: error: 'nil' is always nil, but attribute 'name' is not optional")
        #expect(
            fitFailure("false ? 'x' : nil", AttributeDescription(name: "name", type: .string, isOptional: false))
                == "2-to-3.yml:7:15: error: 'false ? 'x' : nil' is always nil, but attribute 'name' is not optional")
    }

    @Test("runtime conversion failures name the attribute")
    func runtimeFit() throws {
        let bound = try M.bind("$source.visits * 1000").fitted(to: AttributeDescription(name: "small", type: .int16))
        #expect(throws: FerryError.self) {
            try bound.evaluate(
                on: DictionaryExpressionContext(["visits": .integer(40)], for: bound, objectDescription: "Customer 7"))
        }
        do {
            _ = try bound.evaluate(
                on: DictionaryExpressionContext(["visits": .integer(40)], for: bound, objectDescription: "Customer 7"))
        } catch {
            #expect(
                error.description
                    == "2-to-3.yml:7:15: error: cannot evaluate $source.visits * 1000 for Customer 7: 40000 is out of range for int16 (attribute 'small')"
            )
            #expect(error.code == .validation)
        }
        let uri = try M.bind("$source.code").fitted(to: AttributeDescription(name: "site", type: .uri))
        #expect(throws: FerryError.self) {
            try uri.evaluate(on: DictionaryExpressionContext(["code": .string("not a uri")], for: uri))
        }
    }

    @Test("simple expressions compile to exact SQLite SQL; others give nil")
    func sql() throws {
        func compile(_ text: String, _ type: AttributeType = .string) throws -> ExpressionSQL? {
            let bound = try M.bind(text).fitted(to: AttributeDescription(name: "x", type: type))
            return bound.sql { slot in "s.\"\(bound.keyPaths[slot].attribute.name)\"" }
        }
        #expect(
            try compile("$source.first + ' ' + $source.last")
                == ExpressionSQL(text: #"((s."first" || ?) || s."last")"#, arguments: [.string(" ")]))
        #expect(
            try compile("coalesce($source.email, $source.code, 'none')")
                == ExpressionSQL(text: #"COALESCE(s."email", s."code", ?)"#, arguments: [.string("none")]))
        #expect(
            try compile("concat($source.name, '!')")
                == ExpressionSQL(text: #"(s."name" || ?)"#, arguments: [.string("!")]))
        #expect(try compile("$source.visits", .int64) == ExpressionSQL(text: #"s."visits""#, arguments: []))
        #expect(try compile("nil") == ExpressionSQL(text: "NULL", arguments: []))
        #expect(
            try compile("lowercase($source.email)")
                == ExpressionSQL(text: #"ferry_lowercase(s."email")"#, arguments: []))
        #expect(
            try compile("if($source.visits >= 40, 'senior', 'junior')")
                == ExpressionSQL(
                    text: #"(CASE WHEN COALESCE(s."visits" >= ?, 0) THEN ? ELSE ? END)"#,
                    arguments: [.integer(40), .string("senior"), .string("junior")]))
        #expect(try compile("substring($source.email, 1)") == nil)
        #expect(try compile("concat($source.first, ' ')") == nil)
        #expect(try compile("$source.visits", .int16) == nil)
        #expect(try compile("$source.visits + 1", .int64) == nil)
        #expect(try compile("$source.profile.city") == nil)
    }

    @Test(
        "evaluation speed (set FERRY_BENCHMARK=1 to measure)",
        .enabled(if: ProcessInfo.processInfo.environment["FERRY_BENCHMARK"] != nil))
    func benchmark() throws {
        let cases = [
            #"$source.first + " " + $source.last"#, "lowercase(trim($source.email))", "split($source.name, ' ', 0)",
            "$source.balance * 1.2 + 0.05", "$source.visits * 2 + 1", "if($source.visits > 10, 'gold', 'plain')",
            "coalesce($source.email, 'none')",
        ]
        let values: [String: Value] = [
            "first": .string("Ana"), "last": .string("López"), "email": .string(" Ana@Example.com "),
            "name": .string("Ana María López"), "balance": .decimal("1234.56"), "visits": .integer(12),
        ]
        let iterations = 1_000_000
        for text in cases {
            let bound = try M.bind(text)
            let context = DictionaryExpressionContext(values, for: bound)
            var check = 0
            let clock = ContinuousClock()
            let elapsed = try clock.measure {
                for _ in 0..<iterations {
                    if case .string = try bound.evaluate(on: context) { check &+= 1 }
                }
            }
            let nanoseconds = elapsed.seconds * 1e9
            print("expression benchmark: \(text): \(Int(nanoseconds / Double(iterations))) ns/evaluation (\(check))")
        }
    }
}
