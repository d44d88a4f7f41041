import FerryCore
import Foundation

/// What a store is expected to hold: the body of a `verify` step and of an expectations file
/// (`ferry verify --expect FILE.yml`, later `ferry check`). See docs/files.md.
///
/// ```yaml
/// checks: all                       # all (default), cheap, none
/// counts:
///   Customer: 197                   # exactly
///   Order: {at_least: 400}          # also at_most, between: [1, 10], equals: imported
/// assertions:
///   - {entity: Customer, where: "email == nil", count: 0}
///   - {entity: Order, where: "status == 'cancelled'", at_most: "5%"}
/// records:
///   - {entity: Customer, key: {id: 1001}, expect: {name: "Zoë Ångström"}}
/// ```
public struct Expectations: Sendable {
    /// An expected count, or "what the earlier import steps of this run accounted for".
    public enum Count: Sendable, Hashable {
        /// A count, range or percentage (`197`, `{at_least: 400}`, `{between: [1, 10]}`).
        case expectation(CountExpectation)
        /// `equals: imported`: inserted + updated by the earlier import steps of the entity.
        case imported
        /// `equals: synced`: what the earlier import steps accounted for plus the rows that
        /// rejected records of a sync kept (neither updated nor deleted); with `max_kept: N`
        /// (`maxKept`), at most N such rows.
        case synced(maxKept: Int?)
    }

    /// The expected number of objects of one entity (`counts:`).
    public struct EntityCount: Sendable, Hashable {
        /// The entity counted.
        public var entity: String
        /// The count expected.
        public var count: Count
        /// Where the entry is in the file.
        public var location: InputLocation?
    }

    /// How many objects of an entity a predicate may select (`assertions:`).
    public struct Assertion: Sendable, Hashable {
        /// The entity the predicate runs on.
        public var entity: String
        /// The predicate's text (`where:`), parsed when the checks are built.
        public var predicate: String
        /// How many objects it may select.
        public var expectation: CountExpectation
        /// Where the entry is in the file.
        public var location: InputLocation?
        /// Where the predicate text is.
        public var predicateLocation: InputLocation?
    }

    /// A record found by key whose attributes must have the given values (as written, coerced
    /// to the attributes' types when the model is known).
    public struct Record: Sendable, Hashable {
        /// One attribute and its expected value, as written.
        public struct Field: Sendable, Hashable {
            /// The attribute's name.
            public var attribute: String
            /// nil for YAML null.
            public var text: String?
            /// Where the field is in the file.
            public var location: InputLocation?
        }
        /// The entity of the record.
        public var entity: String
        /// The attributes and values that find the record (`key:`).
        public var key: [Field]
        /// The attributes and the values they must have (`expect:`).
        public var expect: [Field]
        /// Where the entry is in the file.
        public var location: InputLocation?
    }

    /// The built-in checks to run (`checks:`: `all`, `cheap` or `none`).
    public var checks: CheckLevel = .all
    /// True when `checks:` was written (a command-line `--checks` wins only over the default).
    public var checksGiven = false
    /// The expected entity counts.
    public var counts: [EntityCount] = []
    /// The predicate assertions.
    public var assertions: [Assertion] = []
    /// The expected records.
    public var records: [Record] = []
    /// Where the expectations are in their file.
    public var location: InputLocation?

    /// No expectations: all built-in checks, nothing else.
    public init() {}

    /// The checks these expectations ask for on `model`, with every problem located
    /// (`invalidDefinition`). `imported` gives, per entity, what earlier import steps of the
    /// run accounted for (inserted + updated) and which steps those were.
    public func checks(
        model: ObjectModel, imported: [String: (count: Int, steps: [Int])] = [:], kept: [String: Int] = [:]
    ) -> (checks: [Check], problems: [FerryError]) {
        var problems: [FerryError] = []
        var explicit: [Check] = []
        func fail(_ message: String, _ location: InputLocation?) {
            problems.append(FerryError(.invalidDefinition, message, at: location ?? self.location))
        }
        func entity(_ name: String, _ location: InputLocation?) -> EntityDescription? {
            if let entity = model.entity(named: name) { return entity }
            fail(
                "unknown entity '\(name)' in model '\(model.name)'\(Suggestions.didYouMean(name, in: model.entityNames))",
                location)
            return nil
        }
        for count in counts {
            guard entity(count.entity, count.location) != nil else { continue }
            let maxKept: Int?
            switch count.count {
            case .expectation(let expectation):
                explicit.append(.count(entity: count.entity, expectation: expectation))
                continue
            case .imported: maxKept = nil
            case .synced(let limit): maxKept = limit
            }
            let word = count.count == .imported ? "imported" : "synced"
            guard let done = imported[count.entity] else {
                fail(
                    "'\(count.entity): {equals: \(word)}' needs an earlier import step of \(count.entity) in the job",
                    count.location)
                continue
            }
            let steps = "step\(done.steps.count == 1 ? "" : "s") \(done.steps.map(String.init).joined(separator: ", "))"
            guard count.count != .imported else {
                explicit.append(
                    .count(entity: count.entity, expectation: .exactly(done.count), basis: "imported by \(steps)"))
                continue
            }
            // A sync's rejected records keep their rows: they are counted, and max_kept bounds them.
            let keptRows = kept[count.entity] ?? 0
            explicit.append(
                .count(
                    entity: count.entity, expectation: .exactly(done.count + keptRows),
                    basis: "synced by \(steps): \(done.count) imported + \(keptRows) kept by rejected records"))
            if let maxKept {
                explicit.append(
                    .count(
                        entity: count.entity, expectation: .between(done.count, done.count + maxKept),
                        basis:
                            "max_kept \(maxKept): \(done.count) imported by \(steps), \(keptRows) kept by rejected records"
                    ))
            }
        }
        for assertion in assertions {
            guard let described = entity(assertion.entity, assertion.location) else { continue }
            do {
                _ = try Predicate(format: assertion.predicate, location: assertion.predicateLocation).bound(
                    to: described, model: model)
                explicit.append(
                    .assertion(
                        PredicateAssertion(
                            entity: assertion.entity, predicate: assertion.predicate,
                            expectation: assertion.expectation, location: assertion.predicateLocation)))
            } catch {
                problems.append(error)
            }
        }
        for record in records {
            guard let described = entity(record.entity, record.location) else { continue }
            func values(_ fields: [Record.Field]) -> [AttributeValue]? {
                var result: [AttributeValue] = []
                var ok = true
                for field in fields {
                    guard let attribute = described.attribute(named: field.attribute) else {
                        fail(
                            "'\(described.name)' has no attribute '\(field.attribute)'\(Suggestions.didYouMean(field.attribute, in: described.attributes.map(\.name)))",
                            field.location)
                        ok = false
                        continue
                    }
                    guard let text = field.text else {
                        result.append(AttributeValue(attribute.name, .null))
                        continue
                    }
                    // A date in the stored form with more than milliseconds (a Core Data date) is
                    // kept exactly; other text is coerced as an import would.
                    if attribute.type == .date, let instant = DateCoding.parseStored(text), !instant.isWholeMilliseconds
                    {
                        result.append(AttributeValue(attribute.name, .date(instant)))
                        continue
                    }
                    switch Coercion.coerce(text, to: attribute.type) {
                    case .success(let value): result.append(AttributeValue(attribute.name, value))
                    case .failure(let failure):
                        fail(
                            "'\(text)' is not a valid \(attribute.type.rawValue) for '\(described.name).\(attribute.name)': \(failure.reason)",
                            field.location)
                        ok = false
                    }
                }
                return ok ? result : nil
            }
            guard let key = values(record.key), let expect = values(record.expect) else { continue }
            explicit.append(
                .record(RecordExpectation(entity: record.entity, key: key, expected: expect, location: record.location))
            )
        }
        return (Verifier.merge(Verifier.builtInChecks(for: model, level: checks), with: explicit), problems)
    }
}

/// Reads expectations files (`ferry verify --expect FILE.yml`) with located errors, like ``JobLoader``.
public struct ExpectationsLoader: Sendable {
    /// A loader.
    public init() {}

    package static let keys = ["checks", "counts", "assertions", "records"]
    package static let countKeys = ["exactly", "at_least", "at_most", "between", "equals", "max_kept"]
    package static let assertionKeys = ["entity", "where", "count", "at_least", "at_most", "between"]
    package static let recordKeys = ["entity", "key", "expect"]

    /// Loads an expectations file; `equals: imported` is refused (there is no run to refer to).
    public func load(path: String) throws -> Expectations {
        let reader = DefinitionReader(code: .invalidDefinition)
        let root: YAMLNode?
        do {
            root = try YAMLNode.load(path: path, code: .invalidDefinition)
        } catch {
            throw FerryErrors([error])
        }
        guard let root else { return Expectations() }
        guard let mapping = reader.mapping(root, for: "the expectations file") else { throw FerryErrors(reader.errors) }
        let expectations = Self.read(mapping, reader: reader, allowImported: false, context: "the expectations file")
        if !reader.errors.isEmpty { throw FerryErrors(reader.errors) }
        return expectations
    }

    /// Reads the expectation keys of a mapping (an expectations file or a `verify` step).
    static func read(
        _ mapping: YAMLMapping, reader: DefinitionReader, allowImported: Bool, context: String, extraKeys: [String] = []
    ) -> Expectations {
        reader.checkKeys(mapping, allowed: keys + extraKeys, in: context)
        var result = Expectations()
        result.location = mapping.location
        if let node = mapping["checks"], let level = reader.choice(node, for: "checks", as: CheckLevel.self) {
            result.checks = level
            result.checksGiven = true
        }
        if let node = mapping["counts"], let counts = reader.mapping(node, for: "counts") {
            for entry in counts.entries {
                if let count = readCount(entry, reader: reader, allowImported: allowImported) {
                    result.counts.append(
                        Expectations.EntityCount(entity: entry.key, count: count, location: entry.keyLocation))
                }
            }
        }
        if let node = mapping["assertions"], let items = reader.list(node, for: "assertions") {
            for item in items {
                if let assertion = readAssertion(item, reader: reader) { result.assertions.append(assertion) }
            }
        }
        if let node = mapping["records"], let items = reader.list(node, for: "records") {
            for item in items {
                if let record = readRecord(item, reader: reader) { result.records.append(record) }
            }
        }
        return result
    }

    private static func readCount(
        _ entry: YAMLMapping.Entry, reader: DefinitionReader, allowImported: Bool
    ) -> Expectations.Count? {
        if case .scalar = entry.value.content {
            return reader.int(entry.value, for: entry.key).map { .expectation(.exactly($0)) }
        }
        guard let mapping = reader.mapping(entry.value, for: entry.key) else { return nil }
        reader.checkKeys(mapping, allowed: countKeys, in: "count of '\(entry.key)'")
        var maxKept: Int?
        if let node = mapping["max_kept"] {
            guard let value = reader.int(node, for: "max_kept", minimum: 0) else { return nil }
            guard case .scalar("synced", _)? = mapping["equals"]?.content else {
                reader.fail(
                    "'max_kept' goes with 'equals: synced'", at: mapping.keyLocation("max_kept") ?? mapping.location)
                return nil
            }
            maxKept = value
        }
        let entries = mapping.entries.filter { $0.key != "max_kept" }
        guard entries.count == 1, let only = entries.first else {
            reader.fail(
                "count of '\(entry.key)' needs exactly one of exactly, at_least, at_most, between, equals",
                at: mapping.location)
            return nil
        }
        if only.key == "equals" {
            guard let text = reader.string(only.value, for: "equals") else { return nil }
            guard text == "imported" || text == "synced" else {
                reader.fail(
                    "'equals' takes 'imported' (what earlier import steps accounted for) or 'synced' (that plus the rows rejected records of a sync kept), not '\(text)'; write a number as '\(entry.key): N'",
                    at: only.value.location)
                return nil
            }
            guard allowImported else {
                reader.fail(
                    "'equals: \(text)' refers to import steps of a job; it only works in a job's verify step",
                    at: only.value.location)
                return nil
            }
            return text == "imported" ? .imported : .synced(maxKept: maxKept)
        }
        return readExpectation(only, reader: reader, allowPercent: false).map { .expectation($0) }
    }

    /// `count: N`, `at_least: N`, `at_most: N` or `"5%"`, `between: [A, B]`.
    private static func readExpectation(
        _ entry: YAMLMapping.Entry, reader: DefinitionReader, allowPercent: Bool
    ) -> CountExpectation? {
        switch entry.key {
        case "between":
            guard let items = reader.list(entry.value, for: "between") else { return nil }
            guard items.count == 2, let low = reader.int(items[0], for: "between"),
                let high = reader.int(items[1], for: "between")
            else {
                if items.count != 2 {
                    reader.fail("'between' takes two numbers, [low, high]", at: entry.value.location)
                }
                return nil
            }
            guard low <= high else {
                reader.fail("'between' needs low ≤ high, not [\(low), \(high)]", at: entry.value.location)
                return nil
            }
            return .between(low, high)
        case "at_least", "at_most":
            if allowPercent, case .scalar(let text, _) = entry.value.content, text.hasSuffix("%") {
                guard let percent = Double(text.dropLast()), percent >= 0, percent <= 100 else {
                    reader.fail(
                        "expected a percentage from 0% to 100% for '\(entry.key)' but found '\(text)'",
                        at: entry.value.location)
                    return nil
                }
                return entry.key == "at_least" ? .atLeastPercent(percent) : .atMostPercent(percent)
            }
            guard let value = reader.int(entry.value, for: entry.key) else { return nil }
            return entry.key == "at_least" ? .atLeast(value) : .atMost(value)
        default:  // count, exactly
            return reader.int(entry.value, for: entry.key).map { .exactly($0) }
        }
    }

    private static func readAssertion(_ node: YAMLNode, reader: DefinitionReader) -> Expectations.Assertion? {
        guard let mapping = reader.mapping(node, for: "assertions") else { return nil }
        reader.checkKeys(mapping, allowed: assertionKeys, in: "an assertion")
        guard let entityNode = mapping["entity"], let whereNode = mapping["where"] else {
            reader.fail("an assertion needs 'entity' and 'where'", at: node.location)
            return nil
        }
        guard let entity = reader.string(entityNode, for: "entity"),
            let predicate = reader.string(whereNode, for: "where")
        else { return nil }
        let counts = mapping.entries.filter { ["count", "at_least", "at_most", "between"].contains($0.key) }
        guard counts.count == 1, let only = counts.first else {
            reader.fail("an assertion needs exactly one of count, at_least, at_most, between", at: node.location)
            return nil
        }
        guard let expectation = readExpectation(only, reader: reader, allowPercent: true) else { return nil }
        return Expectations.Assertion(
            entity: entity, predicate: predicate, expectation: expectation, location: entityNode.location,
            predicateLocation: whereNode.location)
    }

    private static func readRecord(_ node: YAMLNode, reader: DefinitionReader) -> Expectations.Record? {
        guard let mapping = reader.mapping(node, for: "records") else { return nil }
        reader.checkKeys(mapping, allowed: recordKeys, in: "a record expectation")
        guard let entityNode = mapping["entity"], let keyNode = mapping["key"], let expectNode = mapping["expect"]
        else {
            reader.fail("a record expectation needs 'entity', 'key' and 'expect'", at: node.location)
            return nil
        }
        guard let entity = reader.string(entityNode, for: "entity"),
            let key = fields(keyNode, for: "key", reader: reader),
            let expect = fields(expectNode, for: "expect", reader: reader)
        else { return nil }
        if key.isEmpty {
            reader.fail("'key' needs at least one attribute, e.g. {id: 42}", at: keyNode.location)
            return nil
        }
        return Expectations.Record(entity: entity, key: key, expect: expect, location: entityNode.location)
    }

    private static func fields(
        _ node: YAMLNode, for name: String, reader: DefinitionReader
    ) -> [Expectations.Record.Field]? {
        guard let mapping = reader.mapping(node, for: name) else { return nil }
        var result: [Expectations.Record.Field] = []
        for entry in mapping.entries {
            if entry.value.isNull {
                result.append(.init(attribute: entry.key, text: nil, location: entry.keyLocation))
            } else if case .scalar = entry.value.content, let text = reader.string(entry.value, for: entry.key) {
                result.append(.init(attribute: entry.key, text: text, location: entry.value.location))
            } else if case .scalar = entry.value.content {
                return nil
            } else {
                reader.wrongType("a value", for: entry.key, found: entry.value)
                return nil
            }
        }
        return result
    }
}
