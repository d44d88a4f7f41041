import FerryCore
import Testing

@Suite("Expression evaluation")
struct ExpressionEvaluationTests {
    typealias M = ExpressionTestModel

    private func eval(
        _ text: String, _ values: [String: Value] = [:], parameters: [String: Value] = [:]
    ) throws -> Value {
        try M.evaluate(text, values, parameters: parameters)
    }

    @Test("literals: strings with escapes, integers, decimals, booleans, nil")
    func literals() throws {
        let cases: [(String, Value)] = [
            (#""double""#, .string("double")), ("'single'", .string("single")),
            (#""say \"hi\"""#, .string("say \"hi\"")), (#"'it\'s'"#, .string("it's")),
            (#"'tab\tnew\nline\\'"#, .string("tab\tnew\nline\\")), (#"'\u00e9\u{1F600}'"#, .string("é😀")),
            ("'Ana María'", .string("Ana María")), ("42", .integer(42)), ("-7", .integer(-7)),
            ("-9223372036854775808", .integer(Int64.min)), ("1.50", .decimal("1.5")), ("-0.25", .decimal("-0.25")),
            ("1e3", .decimal("1000")), ("123456789012345678901234567890", .decimal("123456789012345678901234567890")),
            ("true", .bool(true)), ("false", .bool(false)), ("nil", .null),
        ]
        for (text, value) in cases {
            #expect(try eval(text) == value, "\(text)")
        }
    }

    @Test("key paths: attributes and to-one relationships, nil when missing")
    func keyPaths() throws {
        #expect(try eval("$source.email", ["email": .string("a@b.c")]) == .string("a@b.c"))
        #expect(try eval("$source.profile.city", ["profile.city": .string("Lyon")]) == .string("Lyon"))
        #expect(try eval("$source.email") == .null)
        let bound = try M.bind(
            "$source.first + ' ' + $source.last + ' <' + $source.profile.city + '> ' + $source.first")
        #expect(bound.keyPaths.map(\.description) == ["first", "last", "profile.city"])
        #expect(bound.keyPaths.map(\.isOptional) == [true, true, true])
        #expect(bound.keyPaths[2].entity == "Profile")
        #expect(try M.bind("$source.name").keyPaths[0].isOptional == false)
    }

    @Test("string concatenation with + and concat; nil propagates through + but not concat")
    func concatenation() throws {
        let values: [String: Value] = ["first": .string("Ana"), "last": .string("López")]
        #expect(try eval("$source.first + \" \" + $source.last", values) == .string("Ana López"))
        #expect(try eval("$source.first + \" \" + $source.last", ["first": .string("Ana")]) == .null)
        #expect(try eval("concat($source.first, ' ', $source.last)", ["first": .string("Ana")]) == .string("Ana "))
        #expect(
            try eval(
                "concat('#', $source.visits, ' ', $source.vip, ' ', $source.balance)",
                ["visits": .integer(3), "vip": .bool(true), "balance": .decimal("2.5")]) == .string("#3 true 2.5"))
        #expect(try eval("concat($source.joined)", ["joined": .date(0)]) == .string("1970-01-01T00:00:00.000Z"))
        #expect(try M.bind("concat($source.first)").resultType == ExpressionType(.string))
    }

    @Test("integer arithmetic stays integer; precedence and parentheses")
    func integers() throws {
        #expect(try eval("1 + 2 * 3") == .integer(7))
        #expect(try eval("(1 + 2) * 3") == .integer(9))
        #expect(try eval("7 / 2") == .integer(3))
        #expect(try eval("-7 / 2") == .integer(-3))
        #expect(try eval("7 % 3") == .integer(1))
        #expect(try eval("-7 % 3") == .integer(-1))
        #expect(try eval("10 - 2 - 3") == .integer(5))
        #expect(try eval("-$source.visits", ["visits": .integer(5)]) == .integer(-5))
        #expect(try eval("$source.visits * 2", ["visits": .integer(21)]) == .integer(42))
        #expect(try eval("$source.age + 1") == .null)
        #expect(try M.bind("$source.visits + 1").resultType == ExpressionType(.integer))
        #expect(try M.bind("$source.age + 1").resultType == ExpressionType(.integer, optional: true))
    }

    @Test("exact decimal arithmetic")
    func decimals() throws {
        #expect(try eval("0.1 + 0.2") == .decimal("0.3"))
        #expect(try eval("0.1 + 0.2 == 0.3") == .bool(true))
        #expect(try eval("1.10 - 0.1") == .decimal("1"))
        #expect(try eval("0.1 - 0.3") == .decimal("-0.2"))
        #expect(try eval("1.5 * 1.5") == .decimal("2.25"))
        #expect(try eval("-1.5 * 2") == .decimal("-3"))
        #expect(try eval("123456789012345678901234567890.5 + 0.5") == .decimal("123456789012345678901234567891"))
        #expect(
            try eval("123456789012345678901234567890 * 1000000000000")
                == .decimal("123456789012345678901234567890000000000000"))
        #expect(
            try eval("99999999999999999999.99999999 * 99999999999999999999.99999999")
                == .decimal("9999999999999999999999999998000000000000.0000000000000001"))
        #expect(try eval("0.000000000000000000000000000001 + 1") == .decimal("1.000000000000000000000000000001"))
        #expect(try eval("99999999999999999.9 + 0.1") == .decimal("100000000000000000"))
        #expect(try eval("922337203685477580.7 + 922337203685477580.7") == .decimal("1844674407370955161.4"))
        #expect(
            try eval("9999999999999999.99 * 9999999999999999.99") == .decimal("99999999999999999800000000000000.0001"))
        #expect(try eval("0.001 - 0.0015") == .decimal("-0.0005"))
        #expect(try eval("-0.5 + 0.5") == .decimal("0"))
        #expect(try eval("-0.5 * 0") == .decimal("0"))
        #expect(try eval("1 / 3.0") == .decimal("0.3333333333333333"))
        #expect(try eval("2 / 3.0") == .decimal("0.6666666666666667"))
        #expect(try eval("-2 / 3.0") == .decimal("-0.6666666666666667"))
        #expect(try eval("10 / 4.0") == .decimal("2.5"))
        #expect(try eval("1 / 0.0000000000000000001") == .decimal("10000000000000000000"))
        #expect(try eval("0.00000000000000001 / 3") == .decimal("0"))
        #expect(try eval("0.00000000000000005 / 1") == .decimal("0.0000000000000001"))
        #expect(try eval("7.5 % 2") == .decimal("1.5"))
        #expect(try eval("-7.5 % 2") == .decimal("-1.5"))
        #expect(try eval("$source.balance * 2", ["balance": .decimal("10.05")]) == .decimal("20.1"))
        #expect(
            try eval("$source.balance + $source.visits", ["balance": .decimal("0.5"), "visits": .integer(2)])
                == .decimal("2.5"))
        #expect(try M.bind("$source.balance + 1").resultType == ExpressionType(.decimal, optional: true))
    }

    @Test("doubles: only through double values; mixed with others gives double")
    func doubles() throws {
        #expect(try eval("$source.score * 2", ["score": .double(1.25)]) == .double(2.5))
        #expect(try eval("double('2.5') + 1") == .double(3.5))
        #expect(try eval("double(1) / 4") == .double(0.25))
        #expect(try eval("-double(2)") == .double(-2))
        #expect(try M.bind("$source.score + 1.5").resultType == ExpressionType(.double, optional: true))
    }

    @Test("comparisons, logic and nil")
    func comparisons() throws {
        #expect(try eval("1 < 2") == .bool(true))
        #expect(try eval("2 <= 2") == .bool(true))
        #expect(try eval("3 > 2.5") == .bool(true))
        #expect(try eval("3 >= 3.0") == .bool(true))
        #expect(try eval("1 == 1.0") == .bool(true))
        #expect(try eval("1 != 2") == .bool(true))
        #expect(try eval("'a' < 'b'") == .bool(true))
        #expect(try eval("'é' == '\\u0065\\u0301'") == .bool(true))
        #expect(try eval("$source.joined < date('2024-01-01')", ["joined": .date(0)]) == .bool(true))
        #expect(try eval("$source.email == nil") == .bool(true))
        #expect(try eval("$source.email != nil") == .bool(false))
        #expect(try eval("$source.age < 5") == .bool(false))
        #expect(try eval("not ($source.age < 5)") == .bool(true))
        #expect(try eval("true and false") == .bool(false))
        #expect(try eval("true or false") == .bool(true))
        #expect(try eval("not true or true") == .bool(true))
        #expect(try eval("1 < 2 and 2 < 3 or false") == .bool(true))
        #expect(
            try eval("$source.vip and $source.visits > 10", ["vip": .bool(true), "visits": .integer(11)]) == .bool(true)
        )
        #expect(try eval("$source.vip == true") == .bool(false))
        #expect(try eval("$source.vip or true") == .bool(true))
    }

    @Test("conditionals: if() and ?: with widened branch types")
    func conditionals() throws {
        #expect(try eval("if($source.visits > 10, 'gold', 'plain')", ["visits": .integer(11)]) == .string("gold"))
        #expect(try eval("$source.visits > 10 ? 'gold' : 'plain'", ["visits": .integer(3)]) == .string("plain"))
        #expect(try eval("$source.vip ? 1 : 2") == .integer(2))
        #expect(try eval("true ? 1 : 2.5") == .decimal("1"))
        #expect(try eval("false ? 1 : nil") == .null)
        #expect(try eval("1 > 2 ? 'a' : 2 > 1 ? 'b' : 'c'") == .string("b"))
        #expect(try M.bind("$source.vip ? 1 : nil").resultType == ExpressionType(.integer, optional: true))
        #expect(try M.bind("$source.vip ? 1 : $source.score").resultType == ExpressionType(.double, optional: true))
    }

    @Test("string functions")
    func strings() throws {
        #expect(try eval("lowercase('ÀNA ß')") == .string("àna ß"))
        #expect(try eval("uppercase('straße')") == .string("STRASSE"))
        #expect(try eval("trim('  a b \\n')") == .string("a b"))
        #expect(try eval("length('Ana María')") == .integer(9))
        #expect(try eval("length('e\\u0301')") == .integer(1))
        #expect(
            try eval("lowercase(trim($source.email))", ["email": .string(" Ann@Example.COM ")])
                == .string("ann@example.com"))
        #expect(try eval("lowercase($source.email)") == .null)
        #expect(try eval("substring('Ana María', 4)") == .string("María"))
        #expect(try eval("substring('Ana María', 0, 3)") == .string("Ana"))
        #expect(try eval("substring('Ana María', -5, 3)") == .string("Mar"))
        #expect(try eval("substring('abc', 5, 2)") == .string(""))
        #expect(try eval("substring('abc', -10, 2)") == .string("ab"))
        #expect(try eval("substring('abc', 1, 100)") == .string("bc"))
        #expect(try eval("replace('a-b-c', '-', '+')") == .string("a+b+c"))
        #expect(try eval("replace('abc', '', '+')") == .string("abc"))
        #expect(try eval("regex_replace('+33 (0)6 12-34', '[^0-9+]', '')") == .string("+33061234"))
        #expect(
            try eval("regex_replace('2024-01-31', '(\\\\d+)-(\\\\d+)-(\\\\d+)', '$3/$2/$1')") == .string("31/01/2024"))
        #expect(try eval("coalesce($source.email, $source.code, 'none')", ["code": .string("C1")]) == .string("C1"))
        #expect(try eval("coalesce($source.email, 'none')") == .string("none"))
        #expect(try eval("coalesce($source.age, 1.5)", ["age": .integer(3)]) == .decimal("3"))
        #expect(try M.bind("coalesce($source.email, 'none')").resultType == ExpressionType(.string))
        #expect(
            try M.bind("coalesce($source.email, $source.code)").resultType == ExpressionType(.string, optional: true))
    }

    @Test("split, before and after: a full name into first and last")
    func splitting() throws {
        let name: [String: Value] = ["name": .string("Ana María López")]
        #expect(try eval("split($source.name, ' ', 0)", name) == .string("Ana"))
        #expect(try eval("split($source.name, ' ', 1)", name) == .string("María"))
        #expect(try eval("split($source.name, ' ', -1)", name) == .string("López"))
        #expect(try eval("split($source.name, ' ', 3)", name) == .null)
        #expect(try eval("split($source.name, ' ', -4)", name) == .null)
        #expect(try eval("after($source.name, ' ')", name) == .string("María López"))
        #expect(try eval("before($source.name, ' ')", name) == .string("Ana"))
        #expect(try eval("before_last($source.name, ' ')", name) == .string("Ana María"))
        #expect(try eval("after_last($source.name, ' ')", name) == .string("López"))
        #expect(try eval("after($source.name, ', ')", name) == .null)
        #expect(try eval("split($source.name, ' ')", name) == .json(#"["Ana","María","López"]"#))
        #expect(try eval(#"split('a,"b",,c\n', ',')"#) == .json(#"["a","\"b\"","","c\n"]"#))
        let cher: [String: Value] = ["name": .string("Cher")]
        #expect(try eval("split($source.name, ' ', 0)", cher) == .string("Cher"))
        #expect(try eval("after($source.name, ' ')", cher) == .null)
        #expect(try eval("coalesce(after($source.name, ' '), '')", cher) == .string(""))
    }

    @Test("conversions")
    func conversions() throws {
        let cases: [(String, Value)] = [
            ("int(' 42 ')", .integer(42)), ("int('12.0')", .integer(12)), ("int(2.9)", .integer(2)),
            ("int(-2.9)", .integer(-2)),
            ("int(true)", .integer(1)), ("int(double('3.7'))", .integer(3)),
            ("int(date('1970-01-01T00:00:01Z'))", .integer(1000)),
            ("decimal('1.50')", .decimal("1.5")), ("decimal(3)", .decimal("3")),
            ("decimal(double('0.1'))", .decimal("0.1")),
            ("decimal('1e-3')", .decimal("0.001")), ("double('1e3')", .double(1000)), ("double(1.5)", .double(1.5)),
            ("string(42)", .string("42")), ("string(1.50)", .string("1.5")), ("string(true)", .string("true")),
            ("string(date('2024-01-31'))", .string("2024-01-31T00:00:00.000Z")), ("string(nil)", .null),
            ("bool('yes')", .bool(true)), ("bool('OFF')", .bool(false)), ("bool(0)", .bool(false)),
            ("bool(2.5)", .bool(true)),
            ("date('2024-01-31T12:30:00+02:00')", .date(1_706_697_000_000)),
            ("date('31/01/2024', 'dd/MM/yyyy')", .date(1_706_659_200_000)),
            ("date('1706659200', 'unix')", .date(1_706_659_200_000)),
            ("date(1706659200, 'unix')", .date(1_706_659_200_000)),
            ("date(1706659200000)", .date(1_706_659_200_000)),
            ("uuid('6F1C2D3E-0000-4000-8000-000000000002')", .uuid("6f1c2d3e-0000-4000-8000-000000000002")),
            ("abs(-3)", .integer(3)), ("abs(-3.25)", .decimal("3.25")), ("abs(double(-1))", .double(1)),
            ("round(2.345, 2)", .decimal("2.35")), ("round(-2.345, 2)", .decimal("-2.35")),
            ("round(2.5)", .decimal("3")),
            ("round(0.04, 1)", .decimal("0")), ("round(9.99, 1)", .decimal("10")), ("round(7, 2)", .integer(7)),
            ("round(double('2.5'))", .double(3)), ("round(double('1.005'), 1)", .double(1)),
            ("min(3, 1, 2)", .integer(1)), ("max(3, 1.5)", .decimal("3")), ("max('a', 'b')", .string("b")),
            ("min($source.age, 4)", .integer(4)),
            ("max(date('2024-01-01'), date('2023-01-01'))", .date(1_704_067_200_000)),
        ]
        for (text, value) in cases {
            #expect(try eval(text) == value, "\(text)")
        }
    }

    @Test("dates: now() is fixed per run, format_date patterns")
    func dates() throws {
        #expect(try eval("now()") == .date(M.now))
        #expect(try eval("now() == now()") == .bool(true))
        let date: [String: Value] = ["joined": .date(1_706_697_045_007)]  // 2024-01-31T10:30:45.007Z, a Wednesday
        let cases: [(String, String)] = [
            ("yyyy-MM-dd", "2024-01-31"), ("dd/MM/yy HH:mm:ss.SSS", "31/01/24 10:30:45.007"), ("d M yyyy", "31 1 2024"),
            ("EEE, d MMM yyyy", "Wed, 31 Jan 2024"), ("EEEE d MMMM", "Wednesday 31 January"), ("h:mm a", "10:30 AM"),
            ("yyyy-MM-dd'T'HH:mmXXX", "2024-01-31T10:30+00:00"), ("HH'h'mm X", "10h30 Z"),
            ("iso8601", "2024-01-31T10:30:45.007Z"),
            ("unix", "1706697045.007"), ("unix_ms", "1706697045007"), ("''yy''", "'24'"),
        ]
        for (pattern, text) in cases {
            #expect(try eval("format_date($source.joined, \"\(pattern)\")", date) == .string(text), "\(pattern)")
        }
        #expect(
            try eval("format_date(date('1969-12-31T23:00:00Z'), 'yyyy-MM-dd HH EEE hh a')")
                == .string("1969-12-31 23 Wed 11 PM"))
        #expect(try eval("format_date($source.joined, 'yyyy')") == .null)
    }

    @Test("uuid() is a fresh random version-4 UUID per evaluation")
    func uuids() throws {
        let bound = try M.bind("uuid()")
        let context = DictionaryExpressionContext([:], for: bound)
        guard case .uuid(let a) = try bound.evaluate(on: context), case .uuid(let b) = try bound.evaluate(on: context)
        else {
            Issue.record("uuid() did not give a UUID")
            return
        }
        #expect(a != b)
        #expect(a.count == 36 && a == a.lowercased())
        #expect(Array(a)[14] == "4")
    }

    @Test("parameters are constants of their own types")
    func parameters() throws {
        let parameters: [String: Value] = ["region": .string("EU"), "rate": .decimal("0.2"), "limit": .integer(10)]
        #expect(
            try eval("$region + '-' + $source.code", ["code": .string("7")], parameters: parameters) == .string("EU-7"))
        #expect(
            try eval("$source.balance * $rate", ["balance": .decimal("10.5")], parameters: parameters)
                == .decimal("2.1"))
        #expect(try eval("$source.visits > $limit", ["visits": .integer(11)], parameters: parameters) == .bool(true))
    }

    @Test("multi-line expressions report lines and columns from the base")
    func multiLine() throws {
        let text = "concat(\n  $source.first,\n  $source.lsat)"
        #expect(throws: FerryError.self) { try M.bind(text) }
        do {
            _ = try M.bind(text)
        } catch {
            #expect("\(error)" == "2-to-3.yml:9:11: error: Customer has no attribute 'lsat'; did you mean 'last'?")
        }
    }
}

@Suite("Expressions: split agrees with Swift's split")
struct ExpressionSplitAgreementTests {
    @Test("split(text, separator, index) on random text, byte path and Character path alike")
    func randomSplits() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [String] = [
            "a", "b", " ", "-", "--", "é", "e\u{301}", "\u{301}", "\u{200D}", "\u{0600}", "ë", "\r\n", "\n", "ab", "Å",
            "\u{0903}",
        ]
        let separators = [" ", "-", "--", "ab", "\n", "é", "a"]
        let bound = try [Int64](-4...4).map { index in
            try (
                index,
                Expression.parse("split($source.name, $source.code, \(index))").bind(
                    source: ExpressionTestModel.customer, model: ExpressionTestModel.model)
            )
        }
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator) ?? ""
            }.joined()
            let separator = separators.randomElement(using: &generator) ?? " "
            let parts = text.split(separator: separator, omittingEmptySubsequences: false)
            for (index, expression) in bound {
                let resolved = index < 0 ? parts.count + Int(index) : Int(index)
                let expected: Value = resolved >= 0 && resolved < parts.count ? .string(String(parts[resolved])) : .null
                let got = try expression.evaluate(
                    on: DictionaryExpressionContext(
                        ["name": .string(text), "code": .string(separator)], for: expression))
                #expect(got == expected, "split(\(text.debugDescription), \(separator.debugDescription), \(index))")
            }
        }
    }
}
