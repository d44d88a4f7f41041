/// Semantic checks of a model version: names, relationships and inverses, constraints, indexes
/// and validation rules. Every problem is reported, each at the location of the description it
/// is about (the model's location when a description has none).
///
/// ```swift
/// let problems = ModelChecker.check(model)
/// if !problems.isEmpty { throw FerryErrors(problems) }
/// ```
package enum ModelChecker {
    /// Reserved name prefixes (compared case-insensitively): ferry's own tables and columns, and
    /// SQLite's.
    package static let reservedPrefixes = [FerryLayout.reservedPrefix, "sqlite_"]

    /// Every problem in the model, in model order; empty when the model is sound.
    package static func check(_ model: ObjectModel) -> [FerryError] {
        var checker = Checker(model: model)
        checker.run()
        return checker.errors
    }

    /// True when `name` is `[A-Za-z_][A-Za-z0-9_]*`.
    package static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first else { return false }
        func isLetter(_ c: UInt8) -> Bool { (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 }
        guard isLetter(first) else { return false }
        return name.utf8.allSatisfy { isLetter($0) || ($0 >= 48 && $0 <= 57) }
    }

    private struct Checker {
        let model: ObjectModel
        var errors: [FerryError] = []

        init(model: ObjectModel) { self.model = model }

        mutating func fail(_ message: String, at location: InputLocation?) {
            errors.append(FerryError(.invalidModel, message, at: location ?? model.location))
        }

        mutating func run() {
            var seenEntities: [String: EntityDescription] = [:]
            for entity in model.entities {
                checkName(entity.name, kind: "entity", at: entity.location)
                let key = entity.name.lowercased()
                if let first = seenEntities[key] {
                    fail(
                        "duplicate entity name '\(entity.name)' (already declared as '\(first.name)'\(Self.at(first.location)))",
                        at: entity.location)
                } else {
                    seenEntities[key] = entity
                }
                check(entity)
                checkInheritance(of: entity)
            }
            checkFetchRequestsAndConfigurations()
        }

        mutating func checkInheritance(of entity: EntityDescription) {
            guard let parent = entity.parent else { return }
            guard model.entity(named: parent) != nil else {
                fail(
                    "unknown parent entity '\(parent)' of '\(entity.name)'\(Suggestions.didYouMean(parent, in: model.entityNames))",
                    at: entity.location)
                return
            }
            var seen: Set<String> = [entity.name]
            var next: String? = parent
            while let name = next, let ancestor = model.entity(named: name) {
                if seen.contains(name) {
                    fail(
                        "entity '\(entity.name)' inherits from itself (parent chain \(([entity.name] + model.ancestors(of: entity).map(\.name) + [name]).joined(separator: " → ")))",
                        at: entity.location)
                    return
                }
                seen.insert(name)
                next = ancestor.parent
            }
            for ancestor in model.ancestors(of: entity) {
                for name in entity.propertyNames where ancestor.propertyNames.contains(name) {
                    let location = entity.attribute(named: name)?.location ?? entity.relationship(named: name)?.location
                    fail(
                        "property '\(entity.name).\(name)' is already inherited from '\(ancestor.name)'",
                        at: location ?? entity.location)
                }
            }
        }

        mutating func checkFetchRequestsAndConfigurations() {
            var names: Set<String> = []
            for request in model.fetchRequests {
                if !names.insert(request.name).inserted {
                    fail("duplicate fetch request name '\(request.name)'", at: request.location)
                }
                if model.entity(named: request.entity) == nil {
                    fail(
                        "fetch request '\(request.name)' names unknown entity '\(request.entity)'\(Suggestions.didYouMean(request.entity, in: model.entityNames))",
                        at: request.location)
                }
                if let limit = request.limit, limit < 0 {
                    fail("fetch request '\(request.name)' has a negative limit \(limit)", at: request.location)
                }
            }
            for configuration in model.configurations {
                for name in configuration.entities where model.entity(named: name) == nil {
                    fail(
                        "configuration '\(configuration.name)' names unknown entity '\(name)'\(Suggestions.didYouMean(name, in: model.entityNames))",
                        at: model.location)
                }
            }
        }

        static func at(_ location: InputLocation?) -> String {
            location.map { " at \($0)" } ?? ""
        }

        mutating func checkName(_ name: String, kind: String, at location: InputLocation?) {
            guard ModelChecker.isIdentifier(name) else {
                fail(
                    "invalid \(kind) name '\(name)': use letters, digits and '_', not starting with a digit",
                    at: location)
                return
            }
            let lowered = name.lowercased()
            for prefix in ModelChecker.reservedPrefixes where lowered.hasPrefix(prefix) {
                fail("\(kind) name '\(name)' begins with the reserved prefix '\(prefix)'", at: location)
            }
        }

        mutating func check(_ entity: EntityDescription) {
            var seenProperties: [String: (name: String, location: InputLocation?)] = [:]
            func noteProperty(_ name: String, _ location: InputLocation?, into errors: inout Checker) {
                let key = name.lowercased()
                if let first = seenProperties[key] {
                    errors.fail(
                        "duplicate property name '\(name)' in '\(entity.name)' (already declared as '\(first.name)'\(Self.at(first.location)))",
                        at: location)
                } else {
                    seenProperties[key] = (name, location)
                }
            }
            for attribute in entity.attributes {
                checkName(attribute.name, kind: "attribute", at: attribute.location)
                noteProperty(attribute.name, attribute.location, into: &self)
                check(attribute, in: entity)
            }
            for relationship in entity.relationships {
                checkName(relationship.name, kind: "relationship", at: relationship.location)
                noteProperty(relationship.name, relationship.location, into: &self)
                check(relationship, in: entity)
            }
            for (index, constraint) in entity.uniquenessConstraints.enumerated() {
                let location =
                    index < entity.uniquenessConstraintLocations.count
                    ? entity.uniquenessConstraintLocations[index] : nil
                for name in constraint {
                    if model.attribute(named: name, in: entity) != nil { continue }
                    if let relationship = model.relationship(named: name, in: entity) {
                        if relationship.isToMany {
                            fail(
                                "uniqueness constraint of '\(entity.name)' names to-many relationship '\(name)'; only attributes and to-one relationships can be unique",
                                at: location ?? entity.location)
                        }
                        continue
                    }
                    let candidates =
                        entity.attributes.map(\.name) + entity.relationships.filter { !$0.isToMany }.map(\.name)
                    fail(
                        "uniqueness constraint of '\(entity.name)' names unknown attribute '\(name)'\(Suggestions.didYouMean(name, in: candidates))",
                        at: location ?? entity.location)
                }
            }
            for index in entity.indexes {
                for name in index.attributes where model.attribute(named: name, in: entity) == nil {
                    fail(
                        "index of '\(entity.name)' names unknown attribute '\(name)'\(Suggestions.didYouMean(name, in: entity.attributes.map(\.name)))",
                        at: index.location ?? entity.location)
                }
            }
        }

        mutating func check(_ attribute: AttributeDescription, in entity: EntityDescription) {
            let path = "'\(entity.name).\(attribute.name)'"
            if let kind = attribute.coreDataKind, kind.storedType != attribute.type {
                fail(
                    "\(kind.typeName) attribute \(path) must be stored as \(kind.storedType.rawValue), not \(attribute.type.rawValue)",
                    at: attribute.location)
            }
            if case .undefined = attribute.coreDataKind, !attribute.isTransient {
                fail(
                    "undefined attribute \(path) must be transient (an undefined type has no storage)",
                    at: attribute.location)
            }
            if attribute.isTransient, attribute.isDerived {
                fail("\(path) cannot be both transient and derived", at: attribute.location)
            }
            let rules = attribute.validation
            if let min = rules.minValue, let max = rules.maxValue, let order = AttributeValidator.compare(min, max),
                order > 0
            {
                fail("min \(min) is greater than max \(max) for \(path)", at: attribute.location)
            }
            if let min = rules.minLength, let max = rules.maxLength, min > max {
                fail("min_length \(min) is greater than max_length \(max) for \(path)", at: attribute.location)
            }
            // Checked before compiling: Swift's regex parser crashes on deeply nested classes.
            if let pattern = rules.pattern, let problem = PatternLimits.problem(with: pattern) {
                fail("\(problem) for \(path)", at: attribute.location)
                return
            }
            let validator: AttributeValidator
            do {
                validator = try AttributeValidator(attribute)
            } catch {
                fail("invalid pattern '\(rules.pattern ?? "")' for \(path)", at: attribute.location)
                return
            }
            if let value = attribute.defaultValue, !value.isNull, let problem = validator.problem(with: value) {
                fail("default value of \(path) breaks its own rules: \(problem)", at: attribute.location)
            }
        }

        mutating func check(_ relationship: RelationshipDescription, in entity: EntityDescription) {
            let path = "'\(entity.name).\(relationship.name)'"
            if !relationship.isToMany, relationship.minCount != nil || relationship.maxCount != nil {
                fail(
                    "min_count and max_count apply only to to-many relationships; \(path) is to-one",
                    at: relationship.location)
            }
            if let min = relationship.minCount, let max = relationship.maxCount, min > max {
                fail("min_count \(min) is greater than max_count \(max) for \(path)", at: relationship.location)
            }
            if relationship.isOrdered, !relationship.isToMany {
                fail("only to-many relationships can be ordered; \(path) is to-one", at: relationship.location)
            }
            if relationship.isToMany, !relationship.isOptional, relationship.minCount == 0 {
                fail("\(path) is not optional but its min_count is 0", at: relationship.location)
            }
            guard let destination = model.entity(named: relationship.destination) else {
                fail(
                    "unknown destination '\(relationship.destination)' for relationship \(path)\(Suggestions.didYouMean(relationship.destination, in: model.entityNames))",
                    at: relationship.location)
                return
            }
            guard let inverseName = relationship.inverse else { return }
            guard let inverse = model.relationship(named: inverseName, in: destination) else {
                fail(
                    "inverse '\(inverseName)' of \(path) is not a relationship of '\(destination.name)'\(Suggestions.didYouMean(inverseName, in: destination.relationships.map(\.name)))",
                    at: relationship.location)
                return
            }
            let inversePath = "'\(destination.name).\(inverse.name)'"
            if inverse.destination != entity.name, !model.isKind(entity.name, of: inverse.destination) {
                fail(
                    "inverse \(inversePath) of \(path) has destination '\(inverse.destination)', not '\(entity.name)'",
                    at: relationship.location)
                return
            }
            if inverse.inverse != relationship.name {
                let back = inverse.inverse.map { "its inverse is '\($0)'" } ?? "it has no inverse"
                fail(
                    "inverse \(inversePath) of \(path) does not point back (\(back); expected '\(relationship.name)')",
                    at: relationship.location)
                return
            }
            // A one-to-one pair required on both sides: neither object could be inserted first.
            if !relationship.isToMany, !inverse.isToMany, !relationship.isOptional, !inverse.isOptional,
                (entity.name, relationship.name) < (destination.name, inverse.name)
            {
                fail(
                    "\(path) and its inverse \(inversePath) are both required to-one relationships: neither object could be inserted first; make one side optional",
                    at: relationship.location)
            }
        }
    }
}
