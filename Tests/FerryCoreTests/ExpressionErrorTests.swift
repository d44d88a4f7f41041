import FerryCore
import Testing

@Suite("Expression errors")
struct ExpressionErrorTests {
    typealias M = ExpressionTestModel

    @Test(
        "syntax errors point at the offending token's column",
        arguments: [
            ("", "2-to-3.yml:7:15: error: expected an expression but found end of input"),
            (
                "lowercase($source.email",
                "2-to-3.yml:7:38: error: expected ',' or ')' to close 'lowercase(' at column 24 after 'email' but found end of input"
            ),
            (
                "(1 + 2",
                "2-to-3.yml:7:21: error: expected ')' to close '(' at column 15 after '2' but found end of input"
            ),
            ("1 +", "2-to-3.yml:7:18: error: expected a value after '+' but found end of input"),
            ("1 + * 2", "2-to-3.yml:7:19: error: expected a value after '+' but found '*'"),
            ("1 2", "2-to-3.yml:7:17: error: expected an operator or end of input but found '2'"),
            ("'abc", "2-to-3.yml:7:15: error: unterminated string literal"),
            (#""a\qb""#, "2-to-3.yml:7:17: error: unknown escape sequence '\\q' in string literal"),
            ("12abc", "2-to-3.yml:7:15: error: invalid number '12abc'"),
            ("1 # 2", "2-to-3.yml:7:17: error: unexpected character '#'"),
            ("$source.a = 1", "2-to-3.yml:7:25: error: unexpected '='; write '==' to compare"),
            ("$source.vip && true", "2-to-3.yml:7:27: error: unexpected '&&'; write 'and'"),
            (
                "$source.a || 'x'",
                "2-to-3.yml:7:25: error: unexpected '||'; write 'or' for logic, or join strings with '+' or concat(…)"
            ),
            ("!$source.vip", "2-to-3.yml:7:15: error: unexpected '!'; write 'not'"),
            ("1 < 2 < 3", "2-to-3.yml:7:21: error: comparisons cannot be chained; write 'a < b and b < c'"),
            (
                "$source",
                "2-to-3.yml:7:22: error: expected '.' and an attribute name after '$source', as in $source.name"
            ),
            ("$source.", "2-to-3.yml:7:23: error: expected an attribute name after '.' but found end of input"),
            ("$ 1", "2-to-3.yml:7:15: error: expected a name after '$', such as $source.name or a parameter"),
            (
                "email + 1",
                "2-to-3.yml:7:15: error: unknown name 'email'; source attributes are written $source.email, parameters $email, and functions are called as email(…)"
            ),
            ("$x.y", "2-to-3.yml:7:17: error: parameter '$x' has no properties; only $source has key paths"),
            (
                "true ? 1",
                "2-to-3.yml:7:23: error: expected ':' to match '?' at column 20 after '1' but found end of input"
            ),
            ("if(true, 1)", "2-to-3.yml:7:15: error: if(condition, then, else) takes 3 arguments but was given 2"),
            ("and", "2-to-3.yml:7:15: error: expected a value before 'and'"),
        ])
    func syntax(text: String, expected: String) {
        #expect(M.failure(text) == expected)
    }

    @Test(
        "binding errors: names, key paths, types, arguments",
        arguments: [
            (
                "lowercse($source.email)",
                "2-to-3.yml:7:15: error: unknown function 'lowercse'; did you mean 'lowercase'?"
            ),
            (
                "frobnicate(1)",
                "2-to-3.yml:7:15: error: unknown function 'frobnicate'; see docs/expressions.md for the functions"
            ),
            ("$source.emial", "2-to-3.yml:7:23: error: Customer has no attribute 'emial'; did you mean 'email'?"),
            ("$source.profile.cty", "2-to-3.yml:7:31: error: Profile has no attribute 'cty'; did you mean 'city'?"),
            (
                "$source.profil.city",
                "2-to-3.yml:7:23: error: Customer has no relationship 'profil'; did you mean 'profile'?"
            ),
            (
                "$source.email.domain",
                "2-to-3.yml:7:29: error: 'email' of Customer is an attribute, not a relationship, so 'domain' cannot follow it"
            ),
            (
                "$source.profile",
                "2-to-3.yml:7:23: error: 'profile' of Customer is a relationship; name one of its attributes, as in $source.profile.…"
            ),
            (
                "$source.orders.total",
                "2-to-3.yml:7:23: error: 'orders' of Customer is a to-many relationship; value expressions can only follow to-one relationships"
            ),
            ("$regoin", "2-to-3.yml:7:15: error: unknown parameter '$regoin'; did you mean '$region'?"),
            (
                "$source.first + 1",
                "2-to-3.yml:7:29: error: '+' joins strings, but 1 (integer) is not a string; convert it with string(…) or use concat(…)"
            ),
            (
                "$source.age + $source.email",
                "2-to-3.yml:7:27: error: '+' joins strings, but $source.age (integer) is not a string; convert it with string(…) or use concat(…)"
            ),
            ("$source.age * 'x'", "2-to-3.yml:7:27: error: '*' needs numbers, but 'x' (string) is not a number"),
            ("-$source.email", "2-to-3.yml:7:15: error: '-' needs a number, but $source.email (string) is not one"),
            ("$source.age == 'x'", "2-to-3.yml:7:27: error: cannot compare $source.age (integer) with 'x' (string)"),
            ("$source.vip < true", "2-to-3.yml:7:27: error: '<' cannot order $source.vip (bool); use == or !="),
            ("$source.age < nil", "2-to-3.yml:7:27: error: '<' cannot order nil (nil); use == or !="),
            (
                "not $source.age",
                "2-to-3.yml:7:19: error: not must be a bool, but $source.age (integer) is not; compare it, as in x == 0"
            ),
            (
                "$source.age and true",
                "2-to-3.yml:7:15: error: 'and' must be a bool, but $source.age (integer) is not; compare it, as in x == 0"
            ),
            (
                "if($source.age, 1, 2)",
                "2-to-3.yml:7:18: error: the condition must be a bool, but $source.age (integer) is not; compare it, as in x == 0"
            ),
            (
                "$source.vip ? 'a' : 1",
                "2-to-3.yml:7:27: error: the branches of the conditional have different types: string and 1 (integer)"
            ),
            (
                "coalesce($source.email, 0)",
                "2-to-3.yml:7:15: error: the arguments of coalesce() have different types: string and 0 (integer)"
            ),
            (
                "lowercase($source.age)",
                "2-to-3.yml:7:25: error: lowercase() needs a string as argument 1, but $source.age (integer) is not; convert it with string(…)"
            ),
            ("lowercase('a', 'b')", "2-to-3.yml:7:15: error: lowercase() takes 1 argument (text) but was given 2"),
            (
                "split($source.name)",
                "2-to-3.yml:7:15: error: split() takes 2 or 3 arguments (text, separator[, index]) but was given 1"
            ),
            (
                "split($source.name, ' ', '0')",
                "2-to-3.yml:7:40: error: split() needs an integer as argument 3, but '0' (string) is not"
            ),
            ("split($source.name, '', 0)", "2-to-3.yml:7:35: error: split() needs a non-empty separator"),
            ("min(1)", "2-to-3.yml:7:15: error: min() takes 2 or more arguments (value, value, …) but was given 1"),
            ("max(true, false)", "2-to-3.yml:7:15: error: max() cannot order bool values"),
            ("now(1)", "2-to-3.yml:7:15: error: now() takes 0 arguments () but was given 1"),
            (
                "date($source.code, $source.email)",
                "2-to-3.yml:7:34: error: date() needs a date format as argument 2 written as a string literal"
            ),
            (
                "date($source.code, 'dd/QQ/yyyy')",
                "2-to-3.yml:7:34: error: unsupported letter 'Q' in date pattern 'dd/QQ/yyyy'"
            ),
            (
                "format_date($source.joined, 'yyyy-qq')",
                "2-to-3.yml:7:43: error: unsupported letter 'q' in date format 'yyyy-qq'"
            ),
            (
                "format_date($source.code, 'yyyy')",
                "2-to-3.yml:7:27: error: format_date() needs a date as argument 1, but $source.code (string) is not; parse it with date(…)"
            ),
            ("regex_replace($source.code, '[a-', '')", "2-to-3.yml:7:43: error: invalid regular expression '[a-'"),
            ("int($source.avatar)", "2-to-3.yml:7:15: error: int() cannot convert $source.avatar (binary)"),
            (
                "round($source.balance, 1.5)",
                "2-to-3.yml:7:38: error: round() needs an integer as argument 2, but 1.5 (decimal) is not"
            ),
        ])
    func binding(text: String, expected: String) {
        #expect(M.failure(text, parameters: ["region": .string("EU")]) == expected)
    }

    @Test("constant sub-expressions are evaluated at bind time, so their failures are bind errors")
    func constantFolding() {
        #expect(
            M.failure("int('abc') + $source.visits")
                == "2-to-3.yml:7:15: error: cannot evaluate int('abc'): 'abc' is not an integer")
        #expect(M.failure("1 / 0") == "2-to-3.yml:7:17: error: cannot evaluate 1 / 0: division by zero")
        #expect(
            M.failure("date('31/02/2024', 'dd/MM/yyyy')")
                == "2-to-3.yml:7:15: error: cannot evaluate date('31/02/2024', 'dd/MM/yyyy'): '31/02/2024' is not a date in format dd/MM/yyyy"
        )
    }

    @Test(
        "runtime errors name the sub-expression and the source object",
        arguments: [
            (
                "int($source.code)", ["code": Value.string("abc")],
                "2-to-3.yml:7:15: error: cannot evaluate int($source.code) for Customer 42: 'abc' is not an integer"
            ),
            (
                "int($source.code)", ["code": .string("99999999999999999999")],
                "2-to-3.yml:7:15: error: cannot evaluate int($source.code) for Customer 42: 99999999999999999999 is out of range for an integer"
            ),
            (
                "$source.visits / $source.age", ["visits": .integer(1), "age": .integer(0)],
                "2-to-3.yml:7:30: error: cannot evaluate $source.visits / $source.age for Customer 42: division by zero"
            ),
            (
                "$source.visits % 0", ["visits": .integer(1)],
                "2-to-3.yml:7:30: error: cannot evaluate $source.visits % 0 for Customer 42: division by zero"
            ),
            (
                "$source.balance / 0", ["balance": .decimal("1")],
                "2-to-3.yml:7:31: error: cannot evaluate $source.balance / 0 for Customer 42: division by zero"
            ),
            (
                "$source.score / 0", ["score": .double(1)],
                "2-to-3.yml:7:29: error: cannot evaluate $source.score / 0 for Customer 42: division by zero"
            ),
            (
                "$source.visits * 9223372036854775807", ["visits": .integer(2)],
                "2-to-3.yml:7:30: error: cannot evaluate $source.visits * 9223372036854775807 for Customer 42: integer overflow"
            ),
            (
                "-$source.visits", ["visits": .integer(Int64.min)],
                "2-to-3.yml:7:15: error: cannot evaluate -$source.visits for Customer 42: integer overflow"
            ),
            (
                "date($source.code)", ["code": .string("2024-13-01")],
                "2-to-3.yml:7:15: error: cannot evaluate date($source.code) for Customer 42: '2024-13-01' is not an ISO-8601 date"
            ),
            (
                "date($source.code, 'dd/MM/yyyy')", ["code": .string("2024-01-01")],
                "2-to-3.yml:7:15: error: cannot evaluate date($source.code, 'dd/MM/yyyy') for Customer 42: '2024-01-01' is not a date in format dd/MM/yyyy"
            ),
            (
                "bool($source.code)", ["code": .string("maybe")],
                "2-to-3.yml:7:15: error: cannot evaluate bool($source.code) for Customer 42: 'maybe' is not a boolean (expected one of 0, 1, f, false, n, no, off, on, t, true, y, yes)"
            ),
            (
                "uuid($source.code)", ["code": .string("nope")],
                "2-to-3.yml:7:15: error: cannot evaluate uuid($source.code) for Customer 42: 'nope' is not a UUID"
            ),
            (
                "decimal($source.code)", ["code": .string("1,5")],
                "2-to-3.yml:7:15: error: cannot evaluate decimal($source.code) for Customer 42: '1,5' is not a decimal number"
            ),
            (
                "round($source.balance, $source.visits)", ["balance": .decimal("1"), "visits": .integer(-1)],
                "2-to-3.yml:7:15: error: cannot evaluate round($source.balance, $source.visits) for Customer 42: round() needs 0 to 1000 places, not -1"
            ),
            (
                "substring($source.code, 0, $source.visits)", ["code": .string("a"), "visits": .integer(-1)],
                "2-to-3.yml:7:15: error: cannot evaluate substring($source.code, 0, $source.visits) for Customer 42: the length -1 is negative"
            ),
            (
                "$source.first + $source.last", ["first": .integer(1), "last": .string("x")],
                "2-to-3.yml:7:29: error: cannot evaluate $source.first + $source.last for Customer 42: '+' needs two strings but found integer and string"
            ),
        ])
    func runtime(text: String, values: [String: Value], expected: String) {
        #expect(M.failure(text, values) == expected)
    }

    @Test("an expression without a source entity cannot read $source")
    func noSource() throws {
        let expression = try Expression.parse("uuid()", location: M.base)
        #expect(try expression.bind(source: nil, model: M.model).resultType == ExpressionType(.uuid))
        #expect(throws: FerryError.self) {
            try Expression.parse("$source.name", location: M.base).bind(source: nil, model: M.model)
        }
        do {
            _ = try Expression.parse("$source.name", location: M.base).bind(source: nil, model: M.model)
        } catch {
            #expect(
                error.description
                    == "2-to-3.yml:7:15: error: this mapping has no source entity, so '$source' cannot be used")
            #expect(error.code == .invalidExpression)
        }
    }

    @Test("parse errors without a location use <expression>")
    func defaultLocation() {
        do {
            _ = try Expression.parse("1 +")
        } catch {
            #expect(error.description == "<expression>:1:4: error: expected a value after '+' but found end of input")
        }
    }
}
