/// The results of one run of checks on one store: a suite of ``CheckResult``s.
///
/// In `ferry check` (CI mode) there is one report per snapshot; `VerificationReport.junitXML(_:)`
/// writes any number of them as the `<testsuite>`s of one JUnit file.
public struct VerificationReport: Sendable, Hashable, Codable {
    /// The suite's name: the store path, or the snapshot's name in CI mode.
    public var name: String
    /// The store that was checked.
    public var store: String
    /// When the checks started (UTC ISO-8601 with milliseconds).
    public var timestamp: String
    /// How long all the checks took.
    public var elapsedSeconds: Double
    /// The checks' results, in the order they ran.
    public var results: [CheckResult]

    /// A report on `store`, named `name`, whose checks started at `timestamp`.
    public init(name: String, store: String, timestamp: String, elapsedSeconds: Double = 0, results: [CheckResult] = [])
    {
        self.name = name
        self.store = store
        self.timestamp = timestamp
        self.elapsedSeconds = elapsedSeconds
        self.results = results
    }

    /// Number of checks.
    public var tests: Int { results.count }
    /// Number of checks that passed.
    public var passed: Int { results.filter { $0.outcome == .passed }.count }
    /// Number of checks that failed.
    public var failures: Int { results.filter { $0.outcome == .failed }.count }
    /// Number of checks that could not run.
    public var errors: Int { results.filter { $0.outcome == .error }.count }
    /// Number of checks with nothing to check.
    public var skipped: Int { results.filter { $0.outcome == .skipped }.count }
    /// True when no check failed or errored.
    public var succeeded: Bool { failures == 0 && errors == 0 }

    /// The failed and errored results.
    public var failedResults: [CheckResult] { results.filter(\.isFailure) }

    enum CodingKeys: String, CodingKey {
        case name, store, timestamp, results, tests, passed, failures, errors, skipped, succeeded
        case elapsedSeconds = "elapsed_seconds"
    }

    /// Decodes a report as encoded (its derived counts are recomputed, not read).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        store = try container.decode(String.self, forKey: .store)
        timestamp = try container.decode(String.self, forKey: .timestamp)
        elapsedSeconds = try container.decode(Double.self, forKey: .elapsedSeconds)
        results = try container.decode([CheckResult].self, forKey: .results)
    }

    /// Encodes the results and, for readers' convenience, the counts derived from them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(store, forKey: .store)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(elapsedSeconds, forKey: .elapsedSeconds)
        try container.encode(tests, forKey: .tests)
        try container.encode(passed, forKey: .passed)
        try container.encode(failures, forKey: .failures)
        try container.encode(errors, forKey: .errors)
        try container.encode(skipped, forKey: .skipped)
        try container.encode(succeeded, forKey: .succeeded)
        try container.encode(results, forKey: .results)
    }

    /// The error that fails a run when some check failed (code `verification`), or nil.
    public var failure: FerryError? {
        let failed = failedResults
        guard let first = failed.first else { return nil }
        let notes = failed.map { "\($0.name): \($0.message)" }
        return FerryError(
            .verification,
            "\(failed.count) of \(tests) check\(tests == 1 ? "" : "s") failed on '\(store)' (first: \(first.name))",
            notes: notes)
    }
}
