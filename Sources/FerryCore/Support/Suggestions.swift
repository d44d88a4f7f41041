/// "Did you mean …?" suggestions for misspelled names (keys, entities, attributes, step kinds).
package enum Suggestions {
    /// The candidate closest to `name` by edit distance (ignoring case), when it is close enough
    /// to be a likely typo: at most a third of the longer name's length (at least 1), and less than
    /// the shorter name's length.
    package static func closest(to name: String, in candidates: some Sequence<String>) -> String? {
        let target = Array(name.lowercased().unicodeScalars)
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let other = Array(candidate.lowercased().unicodeScalars)
            let distance = editDistance(target, other)
            let limit = max(1, max(target.count, other.count) / 3)
            // Never suggest a name that shares nothing with the typo (`4` for `1`).
            guard distance <= limit, distance < min(target.count, other.count) else { continue }
            if best == nil || distance < best?.distance ?? Int.max { best = (candidate, distance) }
        }
        return best?.name
    }

    /// `; did you mean 'x'?` for the closest candidate, or an empty string.
    package static func didYouMean(_ name: String, in candidates: some Sequence<String>) -> String {
        guard let match = closest(to: name, in: candidates) else { return "" }
        return "; did you mean '\(match)'?"
    }

    /// Levenshtein distance, counting a swap of two adjacent letters as one edit.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previous2[j - 2] + 1)
                }
                current[j] = value
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
