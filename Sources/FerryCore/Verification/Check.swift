/// One verification check to run on a store: what a ``Verifier`` is asked to prove.
///
/// Checks that look at one entity produce one ``CheckResult`` per entity (or per constraint or
/// relationship, for ``uniqueness(entity:)`` and ``relationships(entity:)``).
///
/// ```swift
/// let checks = Verifier.builtInChecks(for: model, level: .all)
///     + [.count(entity: "Customer", expectation: .exactly(197)),
///        .assertion(PredicateAssertion(entity: "Customer", predicate: "email == nil", expectation: .exactly(0)))]
/// let report = Verifier(model: model).run(checks, on: store)
/// ```
public enum Check: Sendable, Hashable {
    /// The entity's row count, compared with an expectation (or only measured when nil).
    /// `basis` says where an expected number came from (e.g. "imported by step 1").
    case count(entity: String, expectation: CountExpectation?, basis: String? = nil)
    /// `PRAGMA integrity_check`, or `PRAGMA quick_check` when `quick` (skips index contents).
    case integrity(quick: Bool)
    /// `PRAGMA foreign_key_check` for the whole store, or for the keys of one entity's table.
    case foreignKeys(entity: String?)
    /// Every uniqueness constraint of the entity holds (one result per constraint).
    case uniqueness(entity: String)
    /// Non-optional attributes and non-optional to-one relationships are set.
    case required(entity: String)
    /// Values keep the model's min/max, min/max length and pattern rules.
    case validationRules(entity: String)
    /// Every value has the SQLite storage class ferry stores for its attribute type, in range
    /// and well-formed (dates, decimals, UUIDs, JSON).
    case types(entity: String)
    /// Every stored link of the entity's relationships has both ends; one-to-one links are not
    /// shared (one result per stored relationship).
    case relationships(entity: String)
    /// To-many relationships hold between their min and max counts (one result per relationship).
    case toManyCounts(entity: String)
    /// The store's recorded model hash equals its recorded model's hash and entity hashes, and
    /// `expected`'s hash when given.
    case modelHash(expected: ObjectModel?)
    /// How many rows match a predicate.
    case assertion(PredicateAssertion)
    /// One record, found by a unique key, has the expected values.
    case record(RecordExpectation)
    /// An entity's ``EntityChecksum`` over `attributes` equals `expected` (values carried
    /// unchanged across a migration).
    case checksum(entity: String, attributes: [String], expected: EntityChecksum)

    /// The check's kind as reports name it: `count`, `integrity_check`, `quick_check`,
    /// `foreign_key_check`, `unique`, `required`, `validation`, `types`, `relationship`,
    /// `to_many_count`, `model_hash`, `assertion`, `record`, `checksum`.
    public var kind: String {
        switch self {
        case .count: return "count"
        case .integrity(let quick): return quick ? "quick_check" : "integrity_check"
        case .foreignKeys: return "foreign_key_check"
        case .uniqueness: return "unique"
        case .required: return "required"
        case .validationRules: return "validation"
        case .types: return "types"
        case .relationships: return "relationship"
        case .toManyCounts: return "to_many_count"
        case .modelHash: return "model_hash"
        case .assertion: return "assertion"
        case .record: return "record"
        case .checksum: return "checksum"
        }
    }
}

/// Which built-in checks to run.
public enum CheckLevel: String, Sendable, Hashable, CaseIterable, Codable {
    /// Every check: counts, `integrity_check`, foreign keys, model hash, and per entity
    /// uniqueness, required attributes, types, validation rules, relationships, to-many counts.
    case all
    /// Counts, `quick_check`, foreign keys and the model hash: fast on large stores.
    case cheap
    /// No built-in checks (only the counts, assertions and records asked for).
    case none
}

/// An expected number of rows.
public enum CountExpectation: Sendable, Hashable, CustomStringConvertible {
    /// Exactly this many.
    case exactly(Int)
    /// This many or more.
    case atLeast(Int)
    /// This many or fewer.
    case atMost(Int)
    /// Inclusive range.
    case between(Int, Int)
    /// At most this percentage (0–100) of the entity's rows (for assertions).
    case atMostPercent(Double)
    /// At least this percentage (0–100) of the entity's rows (for assertions).
    case atLeastPercent(Double)

    /// True when `count` (out of `total` rows of the entity) meets the expectation.
    public func accepts(_ count: Int, total: Int) -> Bool {
        switch self {
        case .exactly(let n): return count == n
        case .atLeast(let n): return count >= n
        case .atMost(let n): return count <= n
        case .between(let low, let high): return count >= low && count <= high
        case .atMostPercent(let p): return Double(count) * 100 <= p * Double(total)
        case .atLeastPercent(let p): return Double(count) * 100 >= p * Double(total)
        }
    }

    /// True for the expectations bounded above: the rows counted are then the offending ones.
    public var isUpperBound: Bool {
        switch self {
        case .exactly, .atMost, .between, .atMostPercent: return true
        case .atLeast, .atLeastPercent: return false
        }
    }

    /// `exactly 197`, `at least 100`, `between 1 and 10`, `at most 1%`.
    public var description: String {
        switch self {
        case .exactly(let n): return "exactly \(n)"
        case .atLeast(let n): return "at least \(n)"
        case .atMost(let n): return "at most \(n)"
        case .between(let low, let high): return "between \(low) and \(high)"
        case .atMostPercent(let p): return "at most \(Self.percent(p))"
        case .atLeastPercent(let p): return "at least \(Self.percent(p))"
        }
    }

    static func percent(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))%" : "\(value)%"
    }
}

/// "`count` rows of `entity` match `predicate`" with an expected count, e.g.
/// `{entity: Customer, where: "email == nil", count: 0}`.
public struct PredicateAssertion: Sendable, Hashable {
    /// The entity the predicate runs on.
    public var entity: String
    /// The predicate in `NSPredicate` format syntax (see docs/predicates.md).
    public var predicate: String
    /// How many rows may match.
    public var expectation: CountExpectation
    /// Where the predicate's first character is, for located predicate errors.
    public var location: InputLocation?

    /// An assertion that `predicate` over `entity` matches a count that meets `expectation`.
    public init(entity: String, predicate: String, expectation: CountExpectation, location: InputLocation? = nil) {
        self.entity = entity
        self.predicate = predicate
        self.expectation = expectation
        self.location = location
    }
}

/// An attribute name with a typed value (record keys and expected values).
public struct AttributeValue: Sendable, Hashable {
    /// The attribute's name.
    public var attribute: String
    /// The value, in the attribute's type.
    public var value: Value

    /// `attribute` with `value`.
    public init(_ attribute: String, _ value: Value) {
        self.attribute = attribute
        self.value = value
    }
}

/// "The `entity` whose `key` attributes have these values has the `expected` values", e.g. the
/// Customer with id 42 has firstName "Ana".
public struct RecordExpectation: Sendable, Hashable {
    /// The entity of the record.
    public var entity: String
    /// The attributes and values that find exactly one record (usually a unique key).
    public var key: [AttributeValue]
    /// The attributes and the values they must have.
    public var expected: [AttributeValue]
    /// Where the expectation was written, for located errors.
    public var location: InputLocation?

    /// An expectation that the `entity` record found by `key` has the `expected` values.
    public init(entity: String, key: [AttributeValue], expected: [AttributeValue], location: InputLocation? = nil) {
        self.entity = entity
        self.key = key
        self.expected = expected
        self.location = location
    }

    /// `id = 42` or `id = 42, region = "EU"`.
    var keyDescription: String {
        key.map { "\($0.attribute) = \(RecordExpectation.render($0.value))" }.joined(separator: ", ")
    }

    static func render(_ value: Value) -> String {
        switch value {
        case .string, .uuid, .uri, .date: return "\"\(value.description)\""
        default: return value.description
        }
    }
}
