extension Predicate {
    /// Checks the predicate against `entity` of `model` and returns it with literals converted
    /// to the types of the attributes they are compared with.
    ///
    /// Key paths must exist (through to-one and to-many relationships); a misspelled key is an
    /// error that suggests the closest name: `Customer has no attribute 'emial'; did you mean
    /// 'email'?`. ISO-8601 strings compared with date attributes become dates, UUID strings
    /// become lowercase UUIDs; a string compared with a number attribute is an error.
    public func bound(to entity: EntityDescription, model: ObjectModel) throws(FerryError) -> Predicate {
        let binder = PredicateBinder(model: model)
        return try binder.bind(self, scope: PredicateScope(entity: entity))
    }

    /// Replaces `$NAME` variables (other than `SUBQUERY` iteration variables) with values or lists.
    ///
    /// ```swift
    /// let p = try Predicate(format: "status IN $allowed").substituting(["allowed": ["paid", "shipped"]])
    /// ```
    public func substituting(_ variables: [String: PredicateArgument]) throws(FerryError) -> Predicate {
        try PredicateSubstitution(variables: variables).apply(self, bound: [])
    }
}

/// The entity a predicate is evaluated on, and the entities of enclosing `SUBQUERY` variables.
struct PredicateScope {
    var entity: EntityDescription
    var variables: [String: EntityDescription] = [:]
}

/// A key path resolved against a model.
struct ResolvedKeyPath {
    struct Step {
        var relationship: RelationshipDescription
        var source: EntityDescription
        var destination: EntityDescription
    }
    /// The entity the path starts from (the predicate's entity or a variable's).
    var start: EntityDescription
    var variable: String?
    var steps: [Step]
    /// The attribute the path ends at, or nil when it ends at an object.
    var attribute: AttributeDescription?

    var isToMany: Bool { steps.contains { $0.relationship.isToMany } }
    /// The entity of the objects the path reaches (before its attribute).
    var endEntity: EntityDescription { steps.last?.destination ?? start }
}

/// What a bound expression is, for type checks.
enum BoundKind {
    /// A literal value.
    case literal(Value)
    /// A list of literals.
    case list([Value])
    /// Values of an attribute type (from a key path or an aggregate), possibly several.
    case typed(AttributeType, name: String, many: Bool)
    /// Related objects (a relationship key path or a variable).
    case object(name: String, many: Bool)

    var isMany: Bool {
        switch self {
        case .typed(_, _, let many), .object(_, let many): return many
        default: return false
        }
    }
}

struct PredicateBinder {
    let model: ObjectModel

    func bind(_ predicate: Predicate, scope: PredicateScope) throws(FerryError) -> Predicate {
        switch predicate {
        case .constant: return predicate
        case .and(let operands):
            var bound: [Predicate] = []
            for operand in operands { bound.append(try bind(operand, scope: scope)) }
            return .and(bound)
        case .or(let operands):
            var bound: [Predicate] = []
            for operand in operands { bound.append(try bind(operand, scope: scope)) }
            return .or(bound)
        case .not(let operand): return .not(try bind(operand, scope: scope))
        case .comparison(let comparison): return .comparison(try bind(comparison, scope: scope))
        }
    }

    // MARK: - Key paths

    func resolve(_ path: PredicateKeyPath, scope: PredicateScope) throws(FerryError) -> ResolvedKeyPath {
        var entity = scope.entity
        var variable: String?
        if case .variable(let name) = path.root {
            guard let variableEntity = scope.variables[name] else {
                throw FerryError(.invalidPredicate, "variable '$\(name)' has no value", at: path.marks.first?.location)
            }
            entity = variableEntity
            variable = name
        }
        var resolved = ResolvedKeyPath(start: entity, variable: variable, steps: [], attribute: nil)
        for (index, name) in path.components.enumerated() {
            let location = path.mark(ofComponent: index).location
            let isLast = index == path.components.count - 1
            if let attribute = resolved.attribute {
                throw FerryError(
                    .invalidPredicate,
                    "'\(attribute.name)' of \(entity.name) is an attribute, not a relationship, so '\(name)' cannot follow it",
                    at: location)
            }
            if let attribute = entity.attribute(named: name) {
                resolved.attribute = attribute
                continue
            }
            if let relationship = entity.relationship(named: name) {
                guard let destination = model.entity(named: relationship.destination) else {
                    throw FerryError(
                        .invalidPredicate,
                        "relationship '\(name)' of \(entity.name) leads to \(relationship.destination), which the model lacks",
                        at: location)
                }
                resolved.steps.append(.init(relationship: relationship, source: entity, destination: destination))
                entity = destination
                continue
            }
            let candidates = isLast ? entity.propertyNames : entity.relationships.map(\.name)
            var message = "\(entity.name) has no \(isLast ? "attribute" : "relationship") '\(name)'"
            if let suggestion = Self.closest(to: name, in: candidates) { message += "; did you mean '\(suggestion)'?" }
            throw FerryError(.invalidPredicate, message, at: location)
        }
        return resolved
    }

    /// The candidate nearest to `name` by edit distance, when near enough to be a typo.
    static func closest(to name: String, in candidates: [String]) -> String? {
        let lowered = name.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate.lowercased())
            if distance <= max(2, name.count / 3), best.map({ distance < $0.1 }) ?? true {
                best = (candidate, distance)
            }
        }
        return best?.0
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    // MARK: - Expressions

    func kind(of expression: PredicateExpression, scope: PredicateScope) throws(FerryError) -> BoundKind {
        switch expression {
        case .constant(let value, _): return .literal(value)
        case .list(let items, _):
            var values: [Value] = []
            for item in items {
                guard case .constant(let value, _) = item else {
                    throw FerryError(.invalidPredicate, "a list may only hold literal values", at: item.mark.location)
                }
                values.append(value)
            }
            return .list(values)
        case .variable(let name, let mark):
            guard scope.variables[name] != nil else {
                throw FerryError(
                    .invalidPredicate, "variable '$\(name)' has no value; substitute it before binding",
                    at: mark.location)
            }
            return .object(name: "$" + name, many: false)
        case .keyPath(let path):
            let resolved = try resolve(path, scope: scope)
            if let attribute = resolved.attribute {
                return .typed(attribute.type, name: describe(path, resolved), many: resolved.isToMany)
            }
            return .object(name: describe(path, resolved), many: resolved.isToMany)
        case .subquery(let subquery):
            throw FerryError(
                .invalidPredicate,
                "SUBQUERY(…, $\(subquery.variable), …) must be followed by a collection operator such as @count",
                at: subquery.mark.location)
        case .aggregate(let function, let collection, let property, let mark):
            return try aggregateKind(function, collection, property, mark, scope: scope)
        }
    }

    /// `'email' of Customer` for messages.
    private func describe(_ path: PredicateKeyPath, _ resolved: ResolvedKeyPath) -> String {
        let owner = resolved.steps.last?.source ?? resolved.start
        let last = path.components.last ?? path.text
        return path.components.count > 1 || resolved.variable != nil ? "'\(path.text)'" : "'\(last)' of \(owner.name)"
    }

    /// The element entity and description of a collection: a to-many key path or a subquery.
    func collectionSource(
        _ collection: PredicateExpression, scope: PredicateScope, operatorName: String, mark: SourceMark
    ) throws(FerryError) -> (resolved: ResolvedKeyPath, subquery: Subquery?) {
        switch collection {
        case .keyPath(let path):
            let resolved = try resolve(path, scope: scope)
            guard resolved.isToMany else {
                throw FerryError(
                    .invalidPredicate, "\(operatorName) needs a to-many key path, but '\(path.text)' is not one",
                    at: mark.location)
            }
            return (resolved, nil)
        case .subquery(let subquery):
            guard case .keyPath(let path) = subquery.collection else {
                throw FerryError(
                    .invalidPredicate, "SUBQUERY needs a to-many key path as its collection", at: subquery.mark.location
                )
            }
            let resolved = try resolve(path, scope: scope)
            guard resolved.isToMany, resolved.attribute == nil else {
                throw FerryError(
                    .invalidPredicate, "SUBQUERY needs a to-many relationship, but '\(path.text)' is not one",
                    at: path.marks.first?.location)
            }
            var inner = scope
            inner.variables[subquery.variable] = resolved.endEntity
            _ = try bind(subquery.predicate, scope: inner)
            return (resolved, subquery)
        default:
            throw FerryError(.invalidPredicate, "\(operatorName) needs a to-many key path", at: mark.location)
        }
    }

    private func aggregateKind(
        _ function: AggregateFunction, _ collection: PredicateExpression, _ property: [String], _ mark: SourceMark,
        scope: PredicateScope
    ) throws(FerryError) -> BoundKind {
        let name = "@" + function.rawValue
        let (resolved, _) = try collectionSource(collection, scope: scope, operatorName: name, mark: mark)
        var attribute = resolved.attribute
        if !property.isEmpty {
            guard attribute == nil else {
                throw FerryError(
                    .invalidPredicate, "\(name) cannot be followed by a key after an attribute", at: mark.location)
            }
            let element = resolved.endEntity
            guard property.count == 1, let propertyAttribute = element.attribute(named: property[0]) else {
                let key = property.joined(separator: ".")
                var message = "\(element.name) has no attribute '\(key)'"
                if let suggestion = Self.closest(to: key, in: element.attributes.map(\.name)) {
                    message += "; did you mean '\(suggestion)'?"
                }
                throw FerryError(.invalidPredicate, message, at: mark.location)
            }
            attribute = propertyAttribute
        }
        let label = name
        if function == .count { return .typed(.int64, name: label, many: false) }
        guard let attribute else {
            throw FerryError(
                .invalidPredicate, "\(name) needs an attribute, as in items.\(name).quantity", at: mark.location)
        }
        switch function {
        case .sum, .avg:
            guard attribute.type.isNumeric || attribute.type == .bool else {
                throw FerryError(
                    .invalidPredicate,
                    "\(name) needs a number attribute, but '\(attribute.name)' is \(attribute.type.rawValue)",
                    at: mark.location)
            }
            if function == .avg || !attribute.type.isInteger && attribute.type != .bool {
                return .typed(.double, name: label, many: false)
            }
            return .typed(.int64, name: label, many: false)
        default:
            guard attribute.type != .binary, attribute.type != .json else {
                throw FerryError(
                    .invalidPredicate, "\(name) cannot order \(attribute.type.rawValue) attribute '\(attribute.name)'",
                    at: mark.location)
            }
            return .typed(attribute.type == .decimal ? .double : attribute.type, name: label, many: false)
        }
    }

    // MARK: - Comparisons

    private func bind(_ comparison: Comparison, scope: PredicateScope) throws(FerryError) -> Comparison {
        var comparison = comparison
        var lhs = try kind(of: comparison.lhs, scope: scope)
        var rhs = try kind(of: comparison.rhs, scope: scope)
        let location = comparison.mark.location
        let opName = comparison.op.rawValue

        // `value IN toMany.key` is `ANY toMany.key == value`.
        if comparison.op == .in, rhs.isMany, !lhs.isMany, comparison.modifier == .direct {
            comparison = Comparison(
                comparison.rhs, .equal, comparison.lhs, modifier: .any, options: comparison.options,
                mark: comparison.mark)
            swap(&lhs, &rhs)
        }
        if rhs.isMany {
            throw FerryError(
                .invalidPredicate, "a to-many key path must be on the left of '\(opName)' (use ANY, ALL or NONE)",
                at: comparison.rhs.mark.location)
        }
        if comparison.modifier != .direct, !lhs.isMany {
            let word = comparison.modifier.rawValue.uppercased()
            throw FerryError(
                .invalidPredicate, "\(word) needs a to-many key path on the left of '\(opName)'",
                at: comparison.lhs.mark.location)
        }

        switch comparison.op {
        case .in:
            guard case .list(let values) = rhs else {
                throw FerryError(
                    .invalidPredicate, "IN needs a list such as {1, 2} or a to-many key path on its right",
                    at: comparison.rhs.mark.location)
            }
            comparison.rhs = .list(
                try values.map { value throws(FerryError) in
                    .constant(
                        try coerce(value, against: lhs, op: comparison.op, mark: comparison.rhs.mark),
                        comparison.rhs.mark)
                }, comparison.rhs.mark)
            return comparison
        case .between:
            guard case .list(let values) = rhs, values.count == 2 else {
                throw FerryError(
                    .invalidPredicate, "BETWEEN needs a list of two values, like {1, 10}",
                    at: comparison.rhs.mark.location)
            }
            comparison.rhs = .list(
                try values.map { value throws(FerryError) in
                    .constant(
                        try coerce(value, against: lhs, op: comparison.op, mark: comparison.rhs.mark),
                        comparison.rhs.mark)
                }, comparison.rhs.mark)
            return comparison
        default:
            break
        }
        if case .list = rhs {
            throw FerryError(
                .invalidPredicate, "a list can only follow IN or BETWEEN", at: comparison.rhs.mark.location)
        }
        if case .list = lhs {
            throw FerryError(
                .invalidPredicate, "a list can only follow IN or BETWEEN", at: comparison.lhs.mark.location)
        }

        if comparison.op.isStringOperator {
            try requireText(lhs, opName, comparison.lhs.mark)
            try requireText(rhs, opName, comparison.rhs.mark)
            if case .literal(.string(let pattern)) = rhs {
                var literal = pattern
                if case .typed(.uuid, _, _) = lhs { literal = pattern.lowercased() }
                if comparison.op == .matches, !PredicateFunctions.isValidRegularExpression(pattern) {
                    throw FerryError(
                        .invalidPredicate, "invalid regular expression '\(pattern)'", at: comparison.rhs.mark.location)
                }
                comparison.rhs = .constant(.string(literal), comparison.rhs.mark)
            }
            return comparison
        }

        // ==, !=, <, <=, >, >=
        switch (lhs, rhs) {
        case (.object(let name, _), .literal(.null)), (.literal(.null), .object(let name, _)):
            guard comparison.op == .equal || comparison.op == .notEqual else {
                throw FerryError(
                    .invalidPredicate, "\(name) is a relationship; it can only be compared with nil using == or !=",
                    at: location)
            }
            return comparison
        case (.object(let name, _), _), (_, .object(let name, _)):
            throw FerryError(
                .invalidPredicate, "\(name) is a relationship; it can only be compared with nil", at: location)
        case (.typed, .literal(let value)):
            comparison.rhs = .constant(
                try coerce(value, against: lhs, op: comparison.op, mark: comparison.rhs.mark), comparison.rhs.mark)
        case (.literal(let value), .typed):
            comparison.lhs = .constant(
                try coerce(value, against: rhs, op: comparison.op, mark: comparison.lhs.mark), comparison.lhs.mark)
        case (.typed(let left, let leftName, _), .typed(let right, let rightName, _)):
            guard Self.typeClass(left) == Self.typeClass(right) else {
                throw FerryError(
                    .invalidPredicate,
                    "cannot compare \(leftName) (\(left.rawValue)) with \(rightName) (\(right.rawValue))", at: location)
            }
            try requireOrderable(left, leftName, comparison.op, location)
        case (.literal, .literal):
            break
        default:
            break
        }
        return comparison
    }

    private enum TypeClass { case number, text, date, binary }

    private static func typeClass(_ type: AttributeType) -> TypeClass {
        switch type {
        case .int16, .int32, .int64, .decimal, .double, .float, .bool: return .number
        case .string, .uuid, .uri, .json: return .text
        case .date: return .date
        case .binary: return .binary
        }
    }

    private func requireText(_ kind: BoundKind, _ opName: String, _ mark: SourceMark) throws(FerryError) {
        switch kind {
        case .typed(let type, let name, _):
            guard Self.typeClass(type) == .text else {
                throw FerryError(
                    .invalidPredicate, "\(opName) needs text, but \(name) is \(type.rawValue)", at: mark.location)
            }
        case .literal(let value):
            guard case .string = value else {
                throw FerryError(
                    .invalidPredicate, "\(opName) needs text, but found \(Self.describe(value))", at: mark.location)
            }
        case .object(let name, _):
            throw FerryError(
                .invalidPredicate, "\(opName) needs text, but \(name) is a relationship", at: mark.location)
        case .list:
            throw FerryError(.invalidPredicate, "\(opName) needs text, but found a list", at: mark.location)
        }
    }

    private func requireOrderable(
        _ type: AttributeType, _ name: String, _ op: ComparisonOperator, _ location: InputLocation?
    ) throws(FerryError) {
        if op.isOrdering, type == .binary {
            throw FerryError(
                .invalidPredicate, "\(name) is binary; it can only be compared with == or !=", at: location)
        }
    }

    static func describe(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .string(let text): return "the string \"\(text)\""
        case .integer, .double, .decimal: return "the number \(value)"
        case .bool(let flag): return flag ? "YES" : "NO"
        case .date: return "the date \(value)"
        case .binary: return "binary data"
        case .uuid(let text): return "the UUID \(text)"
        case .uri(let text): return "the URI \(text)"
        case .json: return "JSON"
        }
    }

    /// Converts a literal to the type of the attribute it is compared with.
    private func coerce(
        _ value: Value, against kind: BoundKind, op: ComparisonOperator, mark: SourceMark
    ) throws(FerryError) -> Value {
        guard case .typed(let type, let name, _) = kind else { return value }
        if value.isNull { return value }
        func mismatch() -> FerryError {
            FerryError(
                .invalidPredicate, "\(name) is \(type.rawValue) and cannot be compared with \(Self.describe(value))",
                at: mark.location)
        }
        try requireOrderable(type, name, op, mark.location)
        switch Self.typeClass(type) {
        case .number:
            switch value {
            case .integer, .double, .decimal: return value
            case .bool(let flag): return .integer(flag ? 1 : 0)
            default: throw mismatch()
            }
        case .text:
            switch value {
            case .string(let text) where type == .uuid:
                guard let uuid = Self.canonicalUUID(text) else {
                    throw FerryError(.invalidPredicate, "'\(text)' is not a UUID (\(name) is uuid)", at: mark.location)
                }
                return .uuid(uuid)
            case .string, .uri, .json: return value
            case .uuid where type == .uuid || type == .string: return value
            default: throw mismatch()
            }
        case .date:
            switch value {
            case .date: return value
            case .string(let text):
                // Every fractional digit is kept, as an import keeps it (a date between two milliseconds).
                guard let instant = DateCoding.parseISO8601Instant(text) else {
                    throw FerryError(
                        .invalidPredicate, "'\(text)' is not an ISO-8601 date (\(name) is date)", at: mark.location)
                }
                return .date(instant)
            default: throw mismatch()
            }
        case .binary:
            if case .binary = value { return value }
            throw mismatch()
        }
    }

    /// Lowercase 8-4-4-4-12 form, or nil when `text` is not a UUID.
    static func canonicalUUID(_ text: String) -> String? {
        let lowered = text.lowercased()
        let bytes = Array(lowered.utf8)
        guard bytes.count == 36 else { return nil }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { return nil }
            }
        }
        return lowered
    }
}

// MARK: - Substitution

struct PredicateSubstitution {
    let variables: [String: PredicateArgument]

    func apply(_ predicate: Predicate, bound: Set<String>) throws(FerryError) -> Predicate {
        switch predicate {
        case .constant: return predicate
        case .and(let operands):
            var result: [Predicate] = []
            for operand in operands { result.append(try apply(operand, bound: bound)) }
            return .and(result)
        case .or(let operands):
            var result: [Predicate] = []
            for operand in operands { result.append(try apply(operand, bound: bound)) }
            return .or(result)
        case .not(let operand): return .not(try apply(operand, bound: bound))
        case .comparison(var comparison):
            comparison.lhs = try apply(comparison.lhs, bound: bound)
            comparison.rhs = try apply(comparison.rhs, bound: bound)
            return .comparison(comparison)
        }
    }

    func apply(_ expression: PredicateExpression, bound: Set<String>) throws(FerryError) -> PredicateExpression {
        switch expression {
        case .constant, .keyPath: return expression
        case .list(let items, let mark):
            var result: [PredicateExpression] = []
            for item in items { result.append(try apply(item, bound: bound)) }
            return .list(result, mark)
        case .variable(let name, let mark):
            guard !bound.contains(name), let argument = variables[name] else { return expression }
            switch argument {
            case .value(let value): return .constant(value, mark)
            case .list(let values): return .list(values.map { .constant($0, mark) }, mark)
            case .keyPath(let path): return .key(path)
            }
        case .aggregate(let function, let collection, let property, let mark):
            return .aggregate(function, collection: try apply(collection, bound: bound), property: property, mark)
        case .subquery(var subquery):
            subquery.collection = try apply(subquery.collection, bound: bound)
            subquery.predicate = try apply(subquery.predicate, bound: bound.union([subquery.variable]))
            return .subquery(subquery)
        }
    }
}
