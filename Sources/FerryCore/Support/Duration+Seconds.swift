extension Duration {
    /// The duration in seconds, as a `Double` (for reports and rates).
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in whole milliseconds (for SQLite's busy timeout).
    package var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// The duration in seconds as a short text: `30 s`, `0.5 s`.
    package var formattedSeconds: String {
        let value = seconds
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
