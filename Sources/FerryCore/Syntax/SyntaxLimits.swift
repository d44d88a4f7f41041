/// How deep and how long a predicate or a value expression may be, in every build.
///
/// ferry's parsers, checkers and SQL generators walk these trees recursively, and SQLite parses
/// the SQL made from them with a fixed parser stack (a little over 30 levels of parenthesised
/// `AND`, fewer of nested function calls) and a maximum expression depth of 1,000. The limits sit
/// well below all of these, so hostile input gets a located error instead of a crash or a raw
/// `SQLite error 1: parser stack overflow`, the same in debug and release builds.
package enum SyntaxLimits {
    /// The deepest nesting allowed: each parenthesis, `NOT`, unary minus, function call, list,
    /// `CAST` and each further operator of a chain of binary operators (`a + b + c` is two
    /// levels) is one level; a `SUBQUERY` is ``subqueryWeight`` levels. See docs/predicates.md and docs/expressions.md.
    package static let maximumDepth = 16

    /// The most tokens (names, literals, operators, punctuation) one predicate or expression may have.
    package static let maximumTokens = 10_000

    /// The most comparisons (and `TRUEPREDICATE`/`FALSEPREDICATE`) one predicate may have: SQLite
    /// nests `a OR b OR …` one level per operand and stops at 1,000.
    package static let maximumComparisons = 500

    /// The most arguments one function call may have (SQLite's own limit is 127).
    package static let maximumArguments = 100

    /// How many levels a `SUBQUERY` counts for: its SQL (`(SELECT COUNT(…) FROM … WHERE …)`)
    /// takes about four times the SQLite parser stack of a parenthesis.
    package static let subqueryWeight = 4

    /// The message for input nested deeper than ``maximumDepth``: `language` is "predicate" or
    /// "expression", `constructs` what nests in it.
    package static func tooDeep(_ language: String, _ constructs: String) -> String {
        "\(language) is nested too deeply: more than \(maximumDepth) levels of \(constructs)"
    }

    /// The message for input with more than ``maximumTokens`` tokens.
    package static func tooLong(_ language: String) -> String {
        "\(language) is too long: more than \(maximumTokens) tokens"
    }

    /// The message for a predicate with more than ``maximumComparisons`` comparisons.
    package static var tooManyComparisons: String {
        "predicate is too long: more than \(maximumComparisons) comparisons; use IN {…} for a list of values"
    }

    /// The message for a call of `function` with more than ``maximumArguments`` arguments.
    package static func tooManyArguments(_ function: String) -> String {
        "\(function)() has too many arguments: more than \(maximumArguments)"
    }
}

/// The nesting depth of a recursive-descent parser, checked against ``SyntaxLimits/maximumDepth``.
package struct NestingDepth {
    package private(set) var levels = 0

    package init() {}

    /// Enters `count` more levels; false when that goes beyond the limit (the levels are entered anyway,
    /// so every `enter` pairs with one `leave`).
    package mutating func enter(_ count: Int = 1) -> Bool {
        levels += count
        return levels <= SyntaxLimits.maximumDepth
    }

    /// Leaves `count` levels entered before.
    package mutating func leave(_ count: Int = 1) {
        levels -= count
    }
}
