/// The result of one check: its outcome, what it measured, a message, how long it took and the
/// first few offending records (identified by key, never by their contents).
public struct CheckResult: Sendable, Hashable, Codable {
    /// How a check ended.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// The store meets the check.
        case passed
        /// The store breaks the check (see `offending`).
        case failed
        /// Nothing to check (e.g. an entity without validation rules).
        case skipped
        /// The check could not run (a SQL error, a predicate that does not fit the store).
        case error
    }

    /// The kind of check (see ``Check/kind``): `count`, `unique`, `assertion`, …
    public var check: String
    /// A name unique within a report: `count Customer`, `unique Customer(email)`.
    public var name: String
    /// The entity checked; nil for store-wide checks (integrity, foreign keys).
    public var entity: String?
    /// How the check ended.
    public var outcome: Outcome
    /// Measured numbers and texts by name (`count`, `expected`, `violations`, `rows`, …).
    public var measured: [String: MeasuredValue]
    /// One line saying what was found.
    public var message: String
    /// How long the check took.
    public var elapsedSeconds: Double
    /// Up to the verifier's limit (default 5) of the records that break the check.
    public var offending: [OffendingRecord]

    /// A result of check kind `check` named `name`.
    public init(
        check: String, name: String, entity: String? = nil, outcome: Outcome, measured: [String: MeasuredValue] = [:],
        message: String, elapsedSeconds: Double = 0, offending: [OffendingRecord] = []
    ) {
        self.check = check
        self.name = name
        self.entity = entity
        self.outcome = outcome
        self.measured = measured
        self.message = message
        self.elapsedSeconds = elapsedSeconds
        self.offending = offending
    }

    /// True for `failed` and `error`.
    public var isFailure: Bool { outcome == .failed || outcome == .error }

    /// The measured values as `name=value` pairs sorted by name, for tables.
    public var measuredSummary: String {
        measured.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    enum CodingKeys: String, CodingKey {
        case check, name, entity, outcome, measured, message, offending
        case elapsedSeconds = "elapsed_seconds"
    }
}

/// A measured number or text in a ``CheckResult``; encoded in JSON as a plain number or string.
public enum MeasuredValue: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByStringLiteral
{
    /// A count.
    case integer(Int)
    /// A fraction or other real number.
    case number(Double)
    /// A text (an expected value, a version).
    case text(String)

    /// An integer literal is a count.
    public init(integerLiteral value: Int) { self = .integer(value) }
    /// A string literal is a text.
    public init(stringLiteral value: String) { self = .text(value) }

    /// Decodes a JSON number (an integer when it is one) or string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    /// Encodes a plain JSON number or string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        }
    }

    /// The value as reports print it.
    public var description: String {
        switch self {
        case .integer(let value): return String(value)
        case .number(let value): return String(value)
        case .text(let value): return value
        }
    }
}

/// A record that breaks a check, named by its primary key (`ferry_pk`, or a Core Data store's
/// `Z_PK`) and the value of the entity's first single-attribute unique key (when it has one).
/// Never the whole row.
public struct OffendingRecord: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The record's entity; nil when it is the check's entity.
    public var entity: String?
    /// The row's primary key (nil for rows without one, e.g. join-table links); in JSON reports
    /// `ferry_pk` whatever the store's layout, with ``keyColumn`` naming the column it is.
    public var primaryKey: Int64?
    /// The store's key column when it is not ferry's `ferry_pk` (`Z_PK` in a Core Data store).
    public var keyColumn: String?
    /// The unique attribute that identifies the record to a user (`id`, `email`).
    public var keyAttribute: String?
    /// The record's value of `keyAttribute`, as text.
    public var keyValue: String?
    /// What is wrong with it (`email is nil`, `age above the maximum`), without its values.
    public var problem: String?

    /// A record named by any of its primary key, key attribute and value, and what is wrong with it.
    public init(
        entity: String? = nil, primaryKey: Int64? = nil, keyAttribute: String? = nil, keyValue: String? = nil,
        problem: String? = nil
    ) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.keyAttribute = keyAttribute
        self.keyValue = keyValue
        self.problem = problem
    }

    /// The name of the key column: `ferry_pk`, or ``keyColumn``.
    package var keyLabel: String { keyColumn ?? FerryLayout.primaryKey }

    /// `Customer ferry_pk 12 (id = 1057): email is nil`: a line of the failures `ferry check`
    /// and a failed migration's verification print.
    package var summaryLine: String {
        var line = "\(entity ?? "") \(keyLabel) \(primaryKey.map(String.init) ?? "?")"
        if let keyAttribute, let keyValue { line += " (\(keyAttribute) = \(keyValue))" }
        if let problem { line += ": \(problem)" }
        return line
    }

    /// `Customer ferry_pk=12 id=1057: email is nil`.
    public var description: String {
        var parts: [String] = []
        if let entity { parts.append(entity) }
        if let primaryKey { parts.append("\(keyLabel)=\(primaryKey)") }
        if let keyAttribute, let keyValue { parts.append("\(keyAttribute)=\(keyValue)") }
        var text = parts.joined(separator: " ")
        if let problem { text += text.isEmpty ? problem : ": \(problem)" }
        return text
    }

    enum CodingKeys: String, CodingKey {
        case entity, problem
        case primaryKey = "ferry_pk"
        case keyColumn = "key_column"
        case keyAttribute = "key_attribute"
        case keyValue = "key_value"
    }
}
