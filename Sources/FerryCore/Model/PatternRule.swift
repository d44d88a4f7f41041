import Foundation

/// The `pattern` rule, for import and `ferry verify` alike: the whole stored text of a value
/// must match an ICU regular expression, as Core Data's `NSPredicate` `MATCHES` requires.
///
/// ICU matches code points, not grapheme clusters: `.` matches `é` written precomposed (U+00E9)
/// but not `e` followed by U+0301. The text tested is the value's stored form (see
/// ``PredicateFunctions/subject(_:)``), which is what `ferry verify` reads back: dates as
/// `2024-05-01T12:30:00.000Z`, booleans as `0`/`1`, decimals in canonical text.
///
/// One engine decides both sides: import calls ``matches(_:)``; verify calls the SQL function
/// `ferry_matches` (``PredicateFunctions``), which compiles the same anchored expression through
/// the same cache and matches through the same ``PredicateFunctions/wholeMatch(_:_:)``.
package struct PatternRule: @unchecked Sendable {
    // NSRegularExpression is immutable once made and documented as thread-safe.
    private let regex: NSRegularExpression
    /// The pattern as written in the model.
    package let pattern: String

    /// Compiles `pattern`; nil when it is not a valid ICU regular expression.
    package init?(_ pattern: String) {
        guard let regex = PredicateFunctions.regularExpression(pattern, []) else { return nil }
        self.regex = regex
        self.pattern = pattern
    }

    /// True when ferry's stored form of `value` (its text form, which patterns are written
    /// against) matches the whole pattern. Binary data has no text form: the rule does not apply
    /// to it (verify does not test it either).
    package func matches(_ value: Value) -> Bool {
        guard let subject = PredicateFunctions.subject(FerryValueCoding().encode(value)) else { return true }
        return PredicateFunctions.wholeMatch(regex, subject)
    }
}
