import Foundation
import Synchronization

/// The SQL functions compiled predicates call, implemented in Swift so that `[c]`, `[d]`, `LIKE`
/// and `MATCHES` follow Foundation's Unicode rules (SQLite's own `LIKE` and `lower()` only know
/// ASCII), and give exactly the answers of in-memory evaluation.
///
/// Register them on every connection that runs predicate SQL:
///
/// ```swift
/// try PredicateFunctions.register(on: connection)
/// ```
///
/// | Function | Result |
/// | --- | --- |
/// | `ferry_fold(text, flags)` | `text` case- (flag 1) and/or diacritic-folded (flag 2), NFC; NULL for NULL |
/// | `ferry_beginswith(text, prefix, flags)` | 1 when folded `text` starts with folded `prefix`, else 0 |
/// | `ferry_endswith(text, suffix, flags)` | 1 when it ends with it, else 0 |
/// | `ferry_contains(text, part, flags)` | 1 when it contains it, else 0 |
/// | `ferry_like(text, pattern, flags)` | 1 when the whole text matches the `*`/`?` pattern, else 0 |
/// | `ferry_matches(text, regex, flags)` | 1 when the whole text matches the ICU regular expression, else 0 |
///
/// Every function returns 0 (never NULL) when `text` or the pattern is NULL, so that `NOT`
/// keeps two-valued logic.
package enum PredicateFunctions {
    /// One SQL function: its name, argument count and Swift implementation.
    package struct Function: Sendable {
        package let name: String
        package let argumentCount: Int
        package let body: @Sendable ([DatabaseValue]) -> DatabaseValue
    }

    /// Every function compiled predicates may call.
    package static let all: [Function] = [
        Function(name: "ferry_fold", argumentCount: 2) { arguments in
            guard let text = subject(arguments[0]) else { return .null }
            return .text(fold(text, options(arguments[1])))
        },
        stringTest("ferry_beginswith") { text, pattern, options in beginsWith(text, pattern, options) },
        stringTest("ferry_endswith") { text, pattern, options in endsWith(text, pattern, options) },
        stringTest("ferry_contains") { text, pattern, options in contains(text, pattern, options) },
        stringTest("ferry_like") { text, pattern, options in like(text, pattern, options) },
        stringTest("ferry_matches") { text, pattern, options in matches(text, pattern, options) },
    ]

    /// Registers every function on a connection.
    package static func register(on connection: Connection) throws {
        for function in all {
            try connection.registerFunction(function.name, argumentCount: function.argumentCount, function.body)
        }
    }

    private static func stringTest(
        _ name: String, _ test: @escaping @Sendable (String, String, StringOptions) -> Bool
    ) -> Function {
        Function(name: name, argumentCount: 3) { arguments in
            guard let text = subject(arguments[0]), let pattern = subject(arguments[1]) else { return .integer(0) }
            return .integer(test(text, pattern, options(arguments[2])) ? 1 : 0)
        }
    }

    /// The text a string function (and the `pattern` rule) tests for a stored value: text as
    /// is, numbers in Swift's spelling; nil for NULL and binary data.
    static func subject(_ value: DatabaseValue) -> String? {
        switch value {
        case .text(let text): return text
        case .integer(let integer): return String(integer)
        case .real(let real): return String(real)
        case .null, .blob: return nil
        }
    }

    private static func options(_ value: DatabaseValue) -> StringOptions {
        StringOptions(rawValue: Int(value.int64 ?? 0))
    }

    // MARK: - String semantics shared with in-memory evaluation

    /// Folds text for `[c]` / `[d]` with Foundation (`ß` → `ss`, `É` → `e`), then composes it
    /// (NFC) so that precomposed and decomposed accents compare equal. Without options the text
    /// is returned unchanged: plain comparisons are exact, byte for byte, as in SQLite.
    package static func fold(_ text: String, _ options: StringOptions) -> String {
        if options.isEmpty { return text }
        var compareOptions: String.CompareOptions = []
        if options.contains(.caseInsensitive) { compareOptions.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { compareOptions.insert(.diacriticInsensitive) }
        return text.folding(options: compareOptions, locale: nil).precomposedStringWithCanonicalMapping
    }

    static func beginsWith(_ text: String, _ prefix: String, _ options: StringOptions) -> Bool {
        let t = Array(fold(text, options).utf8)
        let p = Array(fold(prefix, options).utf8)
        return t.count >= p.count && t[0..<p.count].elementsEqual(p)
    }

    static func endsWith(_ text: String, _ suffix: String, _ options: StringOptions) -> Bool {
        let t = Array(fold(text, options).utf8)
        let s = Array(fold(suffix, options).utf8)
        return t.count >= s.count && t[(t.count - s.count)...].elementsEqual(s)
    }

    static func contains(_ text: String, _ part: String, _ options: StringOptions) -> Bool {
        let t = Array(fold(text, options).utf8)
        let p = Array(fold(part, options).utf8)
        if p.isEmpty { return true }
        guard t.count >= p.count else { return false }
        for start in 0...(t.count - p.count) where t[start] == p[0] {
            if t[start..<(start + p.count)].elementsEqual(p) { return true }
        }
        return false
    }

    /// `LIKE`: `*` matches any run of characters, `?` one character, `\` escapes the next one;
    /// the whole text must match.
    static func like(_ text: String, _ pattern: String, _ options: StringOptions) -> Bool {
        let t = Array(fold(text, options))
        let p = Array(fold(pattern, options))
        var ti = 0
        var pi = 0
        var starP = -1
        var starT = 0
        while ti < t.count {
            if pi < p.count {
                let c = p[pi]
                if c == "*" {
                    starP = pi
                    starT = ti
                    pi += 1
                    continue
                }
                if c == "?" {
                    ti += 1
                    pi += 1
                    continue
                }
                var literal = c
                var width = 1
                if c == "\\", pi + 1 < p.count {
                    literal = p[pi + 1]
                    width = 2
                }
                if literal == t[ti] {
                    ti += 1
                    pi += width
                    continue
                }
            }
            guard starP >= 0 else { return false }
            pi = starP + 1
            starT += 1
            ti = starT
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }

    /// `MATCHES`: the whole text must match the ICU regular expression. `[c]` matches
    /// case-insensitively, `[d]` folds diacritics of text and pattern first. An invalid
    /// expression matches nothing.
    static func matches(_ text: String, _ pattern: String, _ options: StringOptions) -> Bool {
        guard let regex = regularExpression(pattern, options) else { return false }
        return wholeMatch(regex, options.contains(.diacriticInsensitive) ? fold(text, .diacriticInsensitive) : text)
    }

    /// True when an expression from ``regularExpression(_:_:)`` (anchored at both ends) matches
    /// `text`: ferry's one regular-expression match, for `MATCHES` and the `pattern` rule.
    static func wholeMatch(_ regex: NSRegularExpression, _ text: String) -> Bool {
        regex.firstMatch(in: text, options: [], range: NSRange(text.startIndex..<text.endIndex, in: text)) != nil
    }

    /// The compiled expression, or nil when `pattern` is not a valid ICU regular expression.
    static func regularExpression(_ pattern: String, _ options: StringOptions) -> NSRegularExpression? {
        let key = "\(options.rawValue):\(pattern)"
        if let cached = regexCache.withLock({ $0[key] }) { return cached.regex }
        let source = options.contains(.diacriticInsensitive) ? fold(pattern, .diacriticInsensitive) : pattern
        var regexOptions: NSRegularExpression.Options = []
        if options.contains(.caseInsensitive) { regexOptions.insert(.caseInsensitive) }
        // The expression must compile on its own too: `a)|(b` would otherwise compile once wrapped.
        let regex =
            isValidRegularExpression(source)
            ? try? NSRegularExpression(pattern: "\\A(?:" + source + ")\\z", options: regexOptions) : nil
        regexCache.withLock { cache in
            if cache.count > 256 { cache.removeAll() }
            cache[key] = CachedRegex(regex: regex)
        }
        return regex
    }

    /// Tells whether `pattern` compiles, for checking literal patterns before any row is read.
    static func isValidRegularExpression(_ pattern: String) -> Bool {
        (try? NSRegularExpression(pattern: pattern, options: [])) != nil
    }

    private struct CachedRegex: @unchecked Sendable {
        // NSRegularExpression is immutable once made and documented as thread-safe.
        let regex: NSRegularExpression?
    }

    private static let regexCache = Mutex<[String: CachedRegex]>([:])
}
