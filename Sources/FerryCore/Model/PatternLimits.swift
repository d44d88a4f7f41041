/// How long and how nested an attribute's validation `pattern` may be.
///
/// Swift's regular expression parser recurses into nested character classes (`[a[b[c]]]`) and
/// class set operations (`[a--[b--[c]]]`), so a few thousand levels crash the process while the
/// pattern is compiled. Models are checked against these limits before any pattern is compiled,
/// the same in every build. See docs/files.md, "Validation rules".
package enum PatternLimits {
    /// The longest pattern, in characters.
    package static let maximumLength = 1_000
    /// The deepest nesting of groups `(…)` and character classes `[…]`.
    package static let maximumDepth = 32

    /// Why `pattern` is beyond the limits, or nil when it is within them.
    package static func problem(with pattern: String) -> String? {
        if pattern.count > maximumLength {
            return "pattern is too long: \(pattern.count) characters; at most \(maximumLength) are allowed"
        }
        if nestingDepth(of: pattern) > maximumDepth {
            return "pattern is nested too deeply: more than \(maximumDepth) levels of groups and character classes"
        }
        return nil
    }

    /// The deepest nesting of `(` and `[`, skipping escaped characters and `\Q…\E` quotes. Inside
    /// a class only `[` opens (a nested class) and `]` closes; outside, `(` and `[` open and `)` closes.
    static func nestingDepth(of pattern: String) -> Int {
        var open: [Character] = []
        var deepest = 0
        var characters = pattern.makeIterator()
        while let character = characters.next() {
            switch character {
            case "\\":
                guard let escaped = characters.next() else { break }
                if escaped == "Q" {
                    // A quoted run: everything up to `\E` is literal.
                    var previous: Character = " "
                    while let quoted = characters.next() {
                        if previous == "\\", quoted == "E" { break }
                        previous = quoted
                    }
                }
            case "[":
                open.append("[")
            case "]" where open.last == "[":
                open.removeLast()
            case "(" where open.last != "[":
                open.append("(")
            case ")" where open.last == "(":
                open.removeLast()
            default:
                break
            }
            deepest = max(deepest, open.count)
        }
        return deepest
    }
}
