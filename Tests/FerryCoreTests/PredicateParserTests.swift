import FerryCore
import Testing

@Suite("Predicate parsing")
struct PredicateParserTests {
    static let base = InputLocation(file: "job.yml", line: 12, column: 10)

    private func parse(_ format: String, _ arguments: [PredicateArgument] = []) throws -> Predicate {
        try Predicate(format: format, arguments: arguments, location: Self.base)
    }

    private func compare(
        _ lhs: PredicateExpression, _ op: ComparisonOperator, _ rhs: PredicateExpression,
        _ modifier: ComparisonModifier = .direct, _ options: StringOptions = []
    ) -> Predicate {
        .comparison(Comparison(lhs, op, rhs, modifier: modifier, options: options))
    }

    @Test("every comparison operator and its spellings")
    func operators() throws {
        let spellings: [(String, ComparisonOperator)] = [
            ("==", .equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual), ("<", .less), ("<=", .lessOrEqual),
            ("=<", .lessOrEqual), (">", .greater), (">=", .greaterOrEqual), ("=>", .greaterOrEqual),
            ("BEGINSWITH", .beginsWith), ("endswith", .endsWith), ("Contains", .contains), ("LIKE", .like),
            ("matches", .matches),
        ]
        for (spelling, op) in spellings {
            #expect(try parse("a \(spelling) 1") == compare(.key("a"), op, .value(.integer(1))))
        }
        #expect(
            try parse("a BETWEEN {1, 2}")
                == compare(.key("a"), .between, .list([.value(.integer(1)), .value(.integer(2))], SourceMark())))
        #expect(try parse("a in {}") == compare(.key("a"), .in, .list([], SourceMark())))
    }

    @Test("literals: numbers, strings, escapes, nil, booleans")
    func literals() throws {
        let cases: [(String, Value)] = [
            ("42", .integer(42)), ("-7", .integer(-7)), ("2.5", .double(2.5)), ("1e3", .double(1000)),
            ("-1.5E-1", .double(-0.15)), (".5", .double(0.5)), ("0x1F", .integer(31)), ("0b101", .integer(5)),
            ("0o17", .integer(15)), ("\"say \\\"hi\\\"\"", .string("say \"hi\"")), ("'it\\'s'", .string("it's")),
            ("'tab\\tnew\\nline'", .string("tab\tnew\nline")), ("'\\u00e9\\u{1F600}'", .string("é😀")),
            ("nil", .null), ("NULL", .null), ("YES", .bool(true)), ("true", .bool(true)), ("NO", .bool(false)),
            ("False", .bool(false)), ("'Résumé'", .string("Résumé")),
        ]
        for (text, value) in cases {
            #expect(try parse("a == \(text)") == compare(.key("a"), .equal, .value(value)), "\(text)")
        }
    }

    @Test("CAST to dates uses ISO-8601 text or seconds since 2001-01-01")
    func casts() throws {
        #expect(
            try parse("d > CAST('2024-01-01T00:00:00Z', 'NSDate')")
                == compare(.key("d"), .greater, .value(.date(1_704_067_200_000))))
        #expect(try parse("d > CAST(0, \"NSDate\")") == compare(.key("d"), .greater, .value(.date(978_307_200_000))))
        #expect(try parse("d > CAST(-0.5, 'NSDate')") == compare(.key("d"), .greater, .value(.date(978_307_199_500))))
        #expect(try parse("n == CAST('12', 'NSNumber')") == compare(.key("n"), .equal, .value(.integer(12))))
    }

    @Test("logic: NOT > AND > OR, symbols and keywords alike")
    func precedence() throws {
        let a = compare(.key("a"), .equal, .value(.integer(1)))
        let b = compare(.key("b"), .equal, .value(.integer(2)))
        let c = compare(.key("c"), .equal, .value(.integer(3)))
        #expect(try parse("a == 1 OR b == 2 AND c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("a == 1 || b == 2 && c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("(a == 1 or b == 2) and c == 3") == .and([.or([a, b]), c]))
        #expect(try parse("NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try parse("!!(a == 1)") == .not(.not(a)))
        #expect(try parse("TRUEPREDICATE OR falsepredicate") == .or([.constant(true), .constant(false)]))
    }

    @Test("key paths, modifiers, options, collection operators, SUBQUERY, variables, placeholders")
    func structure() throws {
        #expect(
            try parse("order.customer.email ==[cd] 'x'")
                == compare(
                    .key("order.customer.email"), .equal, .value(.string("x")), .direct,
                    [.caseInsensitive, .diacriticInsensitive]))
        #expect(
            try parse("ANY tags.name CONTAINS[c] 'x'")
                == compare(.key("tags.name"), .contains, .value(.string("x")), .any, .caseInsensitive))
        #expect(
            try parse("some tags.name LIKE[d] 'x'")
                == compare(.key("tags.name"), .like, .value(.string("x")), .any, .diacriticInsensitive))
        #expect(try parse("ALL a.b > 1") == compare(.key("a.b"), .greater, .value(.integer(1)), .all))
        #expect(try parse("NONE a.b > 1") == compare(.key("a.b"), .greater, .value(.integer(1)), .none))
        #expect(
            try parse("name ==[n] 'x'")
                == compare(
                    .key("name"), .equal, .value(.string("x")), .direct, [.caseInsensitive, .diacriticInsensitive]))
        #expect(
            try parse("items.@count > 0")
                == compare(
                    .aggregate(.count, collection: .key("items"), property: [], SourceMark()), .greater,
                    .value(.integer(0))))
        #expect(
            try parse("items.@SUM.quantity > 0")
                == compare(
                    .aggregate(.sum, collection: .key("items"), property: ["quantity"], SourceMark()), .greater,
                    .value(.integer(0))))
        #expect(
            try parse("items.price.@avg > 0")
                == compare(
                    .aggregate(.avg, collection: .key("items.price"), property: [], SourceMark()), .greater,
                    .value(.integer(0))))
        let inner = compare(
            .keyPath(PredicateKeyPath(root: .variable("x"), ["quantity"])), .greater, .value(.integer(2)))
        let subquery = Subquery(collection: .key("items"), variable: "x", predicate: inner)
        #expect(
            try parse("SUBQUERY(items, $x, $x.quantity > 2).@count > 0")
                == compare(
                    .aggregate(.count, collection: .subquery(subquery), property: [], SourceMark()), .greater,
                    .value(.integer(0))))
        #expect(try parse("a IN $list") == compare(.key("a"), .in, .variable("list", SourceMark())))
        #expect(
            try parse("%K == %@", [.keyPath("customer.email"), "x"])
                == compare(.key("customer.email"), .equal, .value(.string("x"))))
        #expect(
            try parse("%K > %d AND b IN %@", ["age", 3, .list([.integer(1)])])
                == .and([
                    compare(.key("age"), .greater, .value(.integer(3))),
                    compare(.key("b"), .in, .list([.value(.integer(1))], SourceMark())),
                ]))
        #expect(
            try parse("#in == 1 AND #AND == 2")
                == .and([
                    compare(.key("in"), .equal, .value(.integer(1))), compare(.key("AND"), .equal, .value(.integer(2))),
                ]))
    }

    static let errors: [(String, [PredicateArgument], String)] = [
        ("name ==", [], "job.yml:12:17: error: expected a value after '==' but found end of input"),
        ("name ==[c]", [], "job.yml:12:20: error: expected a value after '==[c]' but found end of input"),
        ("name", [], "job.yml:12:14: error: expected a comparison operator after 'name' but found end of input"),
        (
            "order.customer foo", [],
            "job.yml:12:25: error: expected a comparison operator after 'order.customer' but found 'foo'"
        ),
        ("age AND 1", [], "job.yml:12:14: error: expected a comparison operator after 'age' but found 'AND'"),
        ("", [], "job.yml:12:10: error: expected a predicate but found end of input"),
        ("name == 'a' AND", [], "job.yml:12:25: error: expected a predicate after 'AND' but found end of input"),
        ("== 1", [], "job.yml:12:10: error: expected a predicate but found '=='"),
        ("name == 'abc", [], "job.yml:12:18: error: unterminated string literal"),
        ("name == 'a\\qb'", [], "job.yml:12:20: error: unknown escape sequence '\\q' in string literal"),
        ("(age > 1", [], "job.yml:12:18: error: expected ')' to close '(' at column 10 but found end of input"),
        ("age > 1 foo", [], "job.yml:12:18: error: expected AND, OR or end of input but found 'foo'"),
        ("age ^ 1", [], "job.yml:12:14: error: unexpected character '^'"),
        ("name == ~", [], "job.yml:12:18: error: unexpected character '~'"),
        ("name == 'a' ~ 'b'", [], "job.yml:12:22: error: unexpected character '~'"),
        ("name ==[x] 'a'", [], "job.yml:12:18: error: unknown comparison option 'x' in '[x]'; expected c, d or n"),
        ("name ==[c 'a'", [], "job.yml:12:20: error: expected ']' after 'c' but found 'a'"),
        ("age > 0x", [], "job.yml:12:16: error: invalid number '0x'"),
        ("age > 12abc", [], "job.yml:12:16: error: invalid number '12abc'"),
        (
            "name == %@", [],
            "job.yml:12:18: error: missing argument for '%@': it is placeholder 1 but 0 arguments were given"
        ),
        ("name == 'a'", ["x"], "job.yml:12:10: error: too many arguments: 1 given but the format uses 0"),
        ("%K == 1", [5], "job.yml:12:10: error: '%K' needs a key path argument, but argument 1 is the value 5"),
        (
            "a == %@", [.keyPath("b")],
            "job.yml:12:15: error: '%@' needs a value, but argument 1 is the key path 'b'; use %K for key paths"
        ),
        ("a == %z", [], "job.yml:12:15: error: unknown placeholder '%z'; expected %@, %K, %d or %f"),
        (
            "items.@foo > 1", [],
            "job.yml:12:16: error: unknown collection operator '@foo'; expected @count, @sum, @avg, @min or @max"
        ),
        ("age BETWEEN {1}", [], "job.yml:12:22: error: BETWEEN needs a list of two values, like {1, 10}, but found 1"),
        ("age BETWEEN 1", [], "job.yml:12:22: error: BETWEEN needs a list of two values, like {1, 10}"),
        ("a IN {1, 2", [], "job.yml:12:20: error: expected ',' or '}' after '2' but found end of input"),
        ("joined > CAST('nope', 'NSDate')", [], "job.yml:12:24: error: 'nope' is not an ISO-8601 date"),
        (
            "x == CAST(1, 'NSFoo')", [],
            "job.yml:12:23: error: CAST to \"NSFoo\" is not supported; use \"NSDate\", \"NSNumber\" or \"NSString\""
        ),
        (
            "x == CAST(9223372036854775807, 'NSDate')", [],
            "job.yml:12:20: error: 9223372036854775807 is out of range for a date"
        ),
        (
            "SUBQUERY(items, x, x > 1).@count > 0", [],
            "job.yml:12:26: error: expected a variable such as $x after ',' but found 'x'"
        ),
        ("a == $", [], "job.yml:12:15: error: expected a variable name after '$'"),
        ("a.", [], "job.yml:12:12: error: expected a key name after '.' but found end of input"),
        ("age > 1 AND\n  name ==", [], "job.yml:13:10: error: expected a value after '==' but found end of input"),
    ]

    @Test("errors name what was expected, at the offending token's line and column", arguments: errors)
    func parseErrors(_ format: String, _ arguments: [PredicateArgument], _ message: String) {
        #expect {
            try Predicate(format: format, arguments: arguments, location: Self.base)
        } throws: { error in
            (error as? FerryError)?.description == message && (error as? FerryError)?.code == .invalidPredicate
        }
        do {
            _ = try Predicate(format: format, arguments: arguments, location: Self.base)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("without a base location, errors point into <predicate>")
    func defaultLocation() {
        do {
            _ = try Predicate(format: "a ==")
            Issue.record("no error")
        } catch {
            #expect(error.description == "<predicate>:1:5: error: expected a value after '==' but found end of input")
        }
    }
}
