import Foundation

/// A strict check of the HTML ferry writes: every element closed in order (void elements and
/// self-closed SVG elements aside), comments and the DOCTYPE skipped, `style` and `script`
/// read as raw text, and no reference to anything on the network.
public enum HTMLCheck {
    /// HTML's void elements: they have no end tag.
    static let void: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
    ]

    /// What is wrong with `html`, one line per problem; empty when it is well formed.
    public static func problems(in html: String) -> [String] {
        var problems: [String] = []
        for scheme in ["http://", "https://"] where html.contains(scheme) {
            problems.append("the page refers to the network (\(scheme))")
        }
        var stack: [String] = []
        var rest = Substring(html)
        while let open = rest.firstIndex(of: "<") {
            rest = rest[open...]
            if rest.hasPrefix("<!--") {
                guard let end = rest.range(of: "-->") else { return problems + ["an unterminated comment"] }
                rest = rest[end.upperBound...]
                continue
            }
            guard let close = rest.firstIndex(of: ">") else { return problems + ["an unterminated tag"] }
            let tag = rest[rest.index(after: open)..<close]
            rest = rest[rest.index(after: close)...]
            if tag.hasPrefix("!") || tag.hasPrefix("?") { continue }
            if tag.hasPrefix("/") {
                let name = tag.dropFirst().trimmingCharacters(in: .whitespaces).lowercased()
                guard let last = stack.popLast() else {
                    problems.append("</\(name)> closes nothing")
                    continue
                }
                if last != name { problems.append("</\(name)> closes <\(last)>") }
                continue
            }
            let name = String(tag.prefix { !$0.isWhitespace && $0 != "/" }).lowercased()
            if tag.filter({ $0 == "\"" }).count % 2 != 0 { problems.append("<\(name)> has an unbalanced quote") }
            if tag.hasSuffix("/") || void.contains(name) { continue }
            if name == "style" || name == "script" {
                guard let end = rest.range(of: "</\(name)>") else { return problems + ["<\(name)> is not closed"] }
                rest = rest[end.upperBound...]
                continue
            }
            stack.append(name)
        }
        if !stack.isEmpty { problems.append("not closed: \(stack.joined(separator: ", "))") }
        return problems
    }
}
