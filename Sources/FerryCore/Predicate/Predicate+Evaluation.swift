import Foundation

/// A record a predicate can be evaluated on in memory: it gives the value of each property.
public protocol PredicateEvaluable {
    /// The value of an attribute, or the related record(s) of a relationship. Unknown keys
    /// should answer `.value(.null)`.
    func predicateValue(forKey key: String) -> PredicateValue
}

/// What a record holds under a key.
public enum PredicateValue {
    /// An attribute value.
    case value(Value)
    /// A to-one relationship: the related record, or nil.
    case object((any PredicateEvaluable)?)
    /// A to-many relationship: the related records.
    case objects([any PredicateEvaluable])
}

/// A dictionary-backed record for tests, policies and in-memory filtering.
///
/// ```swift
/// let order = PredicateRecord(["total": .value(.integer(120)), "customer": .toOne(customer)])
/// ```
public struct PredicateRecord: PredicateEvaluable, Sendable, Hashable {
    /// A property of the record.
    public indirect enum Field: Sendable, Hashable {
        /// An attribute value.
        case value(Value)
        /// A to-one relationship: the related record, or nil.
        case toOne(PredicateRecord?)
        /// A to-many relationship: the related records.
        case toMany([PredicateRecord])
    }

    /// The properties by name.
    public var fields: [String: Field]

    /// A record with these properties.
    public init(_ fields: [String: Field] = [:]) { self.fields = fields }

    /// A record with attribute values only.
    public init(values: [String: Value]) { self.fields = values.mapValues { .value($0) } }

    /// The property's value; `.value(.null)` for an unknown key.
    public func predicateValue(forKey key: String) -> PredicateValue {
        switch fields[key] {
        case .value(let value): return .value(value)
        case .toOne(let record): return .object(record)
        case .toMany(let records): return .objects(records)
        case nil: return .value(.null)
        }
    }
}

extension Predicate {
    /// Evaluates the predicate on one record, with the same result the compiled SQL gives for
    /// the same row.
    ///
    /// Literals need not be bound to a model first: a string compared with a date is read as
    /// ISO-8601, a string compared with a UUID ignores case.
    ///
    /// - Throws: `FerryError(.invalidPredicate)` for a `$NAME` variable that was not substituted.
    public func evaluate(on record: some PredicateEvaluable) throws(FerryError) -> Bool {
        var evaluator = PredicateEvaluator(root: record)
        return try evaluator.evaluate(self)
    }
}

/// What an expression evaluates to.
enum Operand {
    case value(Value)
    /// Values of a to-many key path (nil to-one records on the way read as `nil`).
    case values([Value])
    case object((any PredicateEvaluable)?)
    case objects([(any PredicateEvaluable)?])
    case list([Value])

    var isCollection: Bool {
        switch self {
        case .values, .objects: return true
        default: return false
        }
    }

    /// The values to compare element by element.
    var elements: [Value] {
        switch self {
        case .value(let value): return [value]
        case .values(let values), .list(let values): return values
        case .object(let object): return [object == nil ? .null : .integer(1)]
        case .objects(let objects): return objects.map { $0 == nil ? .null : .integer(1) }
        }
    }

    /// A single value (a related object compares as non-nil).
    var scalar: Value {
        switch self {
        case .value(let value): return value
        case .object(let object): return object == nil ? .null : .integer(1)
        default: return .null
        }
    }
}

struct PredicateEvaluator {
    let root: any PredicateEvaluable
    var variables: [String: (any PredicateEvaluable)?] = [:]

    init(root: any PredicateEvaluable) { self.root = root }

    mutating func evaluate(_ predicate: Predicate) throws(FerryError) -> Bool {
        switch predicate {
        case .constant(let flag): return flag
        case .and(let operands):
            for operand in operands where !(try evaluate(operand)) { return false }
            return true
        case .or(let operands):
            for operand in operands where try evaluate(operand) { return true }
            return false
        case .not(let operand): return !(try evaluate(operand))
        case .comparison(let comparison): return try evaluate(comparison)
        }
    }

    private mutating func evaluate(_ comparison: Comparison) throws(FerryError) -> Bool {
        let lhs = try operand(comparison.lhs)
        let rhs = try operand(comparison.rhs)
        let right: [Value]
        switch comparison.op {
        case .in, .between: right = rhs.elements
        default: right = [rhs.scalar]
        }
        func test(_ value: Value) -> Bool {
            PredicateSemantics.compare(value, comparison.op, right, comparison.options)
        }
        switch comparison.modifier {
        case .direct:
            if lhs.isCollection { return lhs.elements.contains(where: test) }
            return test(lhs.scalar)
        case .any: return lhs.elements.contains(where: test)
        case .all: return lhs.elements.allSatisfy(test)
        case .none: return !lhs.elements.contains(where: test)
        }
    }

    private mutating func operand(_ expression: PredicateExpression) throws(FerryError) -> Operand {
        switch expression {
        case .constant(let value, _): return .value(value)
        case .list(let items, _):
            var values: [Value] = []
            for item in items { values.append(try operand(item).scalar) }
            return .list(values)
        case .variable(let name, let mark):
            guard let object = variables[name] else { throw unknownVariable(name, mark) }
            return .object(object)
        case .keyPath(let path):
            return try resolve(path)
        case .subquery(let subquery):
            return try filter(subquery)
        case .aggregate(let function, let collection, let property, _):
            var base = try operand(collection)
            if !property.isEmpty { base = follow(base, property) }
            return .value(aggregate(function, base))
        }
    }

    private func unknownVariable(_ name: String, _ mark: SourceMark) -> FerryError {
        FerryError(
            .invalidPredicate, "variable '$\(name)' has no value; substitute it before evaluating", at: mark.location)
    }

    private func resolve(_ path: PredicateKeyPath) throws(FerryError) -> Operand {
        let start: Operand
        switch path.root {
        case .object: start = .object(root)
        case .variable(let name):
            guard let object = variables[name] else { throw unknownVariable(name, path.marks.first ?? SourceMark()) }
            start = .object(object)
        }
        return follow(start, path.components)
    }

    /// Walks key path components from an object or objects.
    private func follow(_ start: Operand, _ components: [String]) -> Operand {
        var current = start
        for component in components {
            switch current {
            case .object(let object):
                guard let object else {
                    current = .object(nil)
                    continue
                }
                switch object.predicateValue(forKey: component) {
                case .value(let value): current = .value(value)
                case .object(let related): current = .object(related)
                case .objects(let related): current = .objects(related.map { $0 })
                }
            case .objects(let objects):
                var values: [Value] = []
                var related: [(any PredicateEvaluable)?] = []
                var sawValue = false
                for object in objects {
                    guard let object else {
                        related.append(nil)
                        values.append(.null)
                        continue
                    }
                    switch object.predicateValue(forKey: component) {
                    case .value(let value):
                        sawValue = true
                        values.append(value)
                    case .object(let one): related.append(one)
                    case .objects(let many): related.append(contentsOf: many.map { $0 })
                    }
                }
                current = sawValue ? .values(values) : .objects(related)
            case .value, .values, .list:
                // An attribute has no properties: the rest of the path is nil.
                return current.isCollection ? .values(current.elements.map { _ in .null }) : .value(.null)
            }
        }
        return current
    }

    private mutating func filter(_ subquery: Subquery) throws(FerryError) -> Operand {
        let collection = try operand(subquery.collection)
        let candidates: [(any PredicateEvaluable)?]
        switch collection {
        case .objects(let objects): candidates = objects.filter { $0 != nil }
        case .object(let object): candidates = object == nil ? [] : [object]
        default: candidates = []
        }
        let saved = variables[subquery.variable]
        defer { variables[subquery.variable] = saved }
        var kept: [(any PredicateEvaluable)?] = []
        for candidate in candidates {
            variables[subquery.variable] = .some(candidate)
            if try evaluate(subquery.predicate) { kept.append(candidate) }
        }
        return .objects(kept)
    }

    private func aggregate(_ function: AggregateFunction, _ base: Operand) -> Value {
        let values: [Value]
        switch base {
        case .objects(let objects):
            if function == .count { return .integer(Int64(objects.count(where: { $0 != nil }))) }
            values = []
        case .object(let object):
            if function == .count { return .integer(object == nil ? 0 : 1) }
            values = []
        case .values(let all), .list(let all): values = all.filter { !$0.isNull }
        case .value(let value): values = value.isNull ? [] : [value]
        }
        return PredicateSemantics.aggregate(function, values)
    }
}

// MARK: - Value semantics

/// How values compare, shared by in-memory evaluation and SQL compilation so both agree:
/// numbers numerically (decimals as `Double`, as SQL's `CAST(… AS REAL)`), text byte for byte
/// (SQLite's BINARY collation) after `[c]`/`[d]` folding, dates by instant, `nil` equal only to
/// `nil` and never ordered.
enum PredicateSemantics {
    static func compare(_ lhs: Value, _ op: ComparisonOperator, _ rhs: [Value], _ options: StringOptions) -> Bool {
        switch op {
        case .equal: return rhs.first.map { equal(lhs, $0, options) } ?? false
        case .notEqual: return rhs.first.map { !equal(lhs, $0, options) } ?? false
        case .less: return rhs.first.flatMap { order(lhs, $0, options) }.map { $0 < 0 } ?? false
        case .lessOrEqual: return rhs.first.flatMap { order(lhs, $0, options) }.map { $0 <= 0 } ?? false
        case .greater: return rhs.first.flatMap { order(lhs, $0, options) }.map { $0 > 0 } ?? false
        case .greaterOrEqual: return rhs.first.flatMap { order(lhs, $0, options) }.map { $0 >= 0 } ?? false
        case .between:
            guard rhs.count == 2, let low = order(lhs, rhs[0], options), let high = order(lhs, rhs[1], options) else {
                return false
            }
            return low >= 0 && high <= 0
        case .in: return rhs.contains { equal(lhs, $0, options) }
        case .beginsWith, .endsWith, .contains, .like, .matches:
            guard let text = Self.text(lhs), let pattern = rhs.first.flatMap(Self.text) else { return false }
            switch op {
            case .beginsWith: return PredicateFunctions.beginsWith(text, pattern, options)
            case .endsWith: return PredicateFunctions.endsWith(text, pattern, options)
            case .contains: return PredicateFunctions.contains(text, pattern, options)
            case .like: return PredicateFunctions.like(text, pattern, options)
            default: return PredicateFunctions.matches(text, pattern, options)
            }
        }
    }

    /// Text of a text-like value (string, UUID, URI, JSON), nil otherwise.
    static func text(_ value: Value) -> String? {
        switch value {
        case .string(let text), .uri(let text), .json(let text), .uuid(let text): return text
        default: return nil
        }
    }

    static func number(_ value: Value) -> Double? {
        switch value {
        case .integer(let integer): return Double(integer)
        case .double(let double): return double
        case .decimal(let text): return Double(text)
        case .bool(let flag): return flag ? 1 : 0
        default: return nil
        }
    }

    static func integer(_ value: Value) -> Int64? {
        switch value {
        case .integer(let integer): return integer
        case .bool(let flag): return flag ? 1 : 0
        default: return nil
        }
    }

    static func equal(_ lhs: Value, _ rhs: Value, _ options: StringOptions) -> Bool {
        if lhs.isNull || rhs.isNull { return lhs.isNull && rhs.isNull }
        if case .binary(let a) = lhs, case .binary(let b) = rhs { return a == b }
        return order(lhs, rhs, options) == 0
    }

    /// -1, 0 or 1, or nil when the values cannot be ordered (nil, or different kinds).
    static func order(_ lhs: Value, _ rhs: Value, _ options: StringOptions) -> Int? {
        if lhs.isNull || rhs.isNull { return nil }
        if let a = integer(lhs), let b = integer(rhs) { return a < b ? -1 : (a == b ? 0 : 1) }
        if let a = number(lhs), let b = number(rhs) { return a < b ? -1 : (a == b ? 0 : 1) }
        if let a = date(lhs, other: rhs), let b = date(rhs, other: lhs) { return a < b ? -1 : (a == b ? 0 : 1) }
        if var a = text(lhs), var b = text(rhs) {
            if case .uuid = lhs { b = b.lowercased() }
            if case .uuid = rhs { a = a.lowercased() }
            return bytesOrder(
                Array(PredicateFunctions.fold(a, options).utf8), Array(PredicateFunctions.fold(b, options).utf8))
        }
        if case .binary(let a) = lhs, case .binary(let b) = rhs { return bytesOrder(a, b) }
        return nil
    }

    /// A date's instant; a string counts as a date when compared with one.
    private static func date(_ value: Value, other: Value) -> Timestamp? {
        switch value {
        case .date(let instant): return instant
        case .string(let text):
            if case .date = other { return DateCoding.parseISO8601(text).map(Timestamp.init(milliseconds:)) }
            return nil
        default: return nil
        }
    }

    static func bytesOrder(_ a: [UInt8], _ b: [UInt8]) -> Int {
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// `@count`, `@sum` (0 when empty), `@avg`, `@min`, `@max` (nil when empty) over non-nil values.
    static func aggregate(_ function: AggregateFunction, _ values: [Value]) -> Value {
        switch function {
        case .count: return .integer(Int64(values.count))
        case .sum:
            if values.allSatisfy({ integer($0) != nil }) {
                var total: Int64 = 0
                for value in values {
                    let (sum, overflow) = total.addingReportingOverflow(integer(value) ?? 0)
                    if overflow { return .double(values.compactMap(number).reduce(0, +)) }
                    total = sum
                }
                return .integer(total)
            }
            return .double(values.compactMap(number).reduce(0, +))
        case .avg:
            let numbers = values.compactMap(number)
            guard !numbers.isEmpty else { return .null }
            return .double(numbers.reduce(0, +) / Double(numbers.count))
        case .min, .max:
            var best: Value?
            for value in values {
                let candidate: Value
                if case .decimal(let text) = value {
                    candidate = Double(text).map(Value.double) ?? .null
                } else {
                    candidate = value
                }
                guard let current = best else {
                    best = candidate
                    continue
                }
                if let sign = order(candidate, current, []), function == .min ? sign < 0 : sign > 0 { best = candidate }
            }
            return best ?? .null
        }
    }
}
