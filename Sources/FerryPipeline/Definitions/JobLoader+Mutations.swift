import FerryCore

/// Loading of `update` and `delete` steps (see docs/update-delete.md).
extension JobLoader {
    package static let updateKeys = ["entity", "where", "set", "validate"]
    package static let deleteKeys = ["entity", "where", "delete_rules"]
    package static let setValueKeys = ["value", "expression"]

    func loadUpdate(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> UpdateStep? {
        guard let mapping = reader.mapping(entry.value, for: "update") else { return nil }
        reader.checkKeys(mapping, allowed: Self.updateKeys, in: "an update step")
        let entity = Self.requiredString("entity", in: mapping, step: "update", at: entry.keyLocation, reader: reader)
        let predicate = Self.predicate(
            in: mapping, step: "update", at: entry.keyLocation, reader: reader,
            hint: "TRUEPREDICATE to update every object")
        var values: [String: BatchUpdateRequest.PropertyValue] = [:]
        var locations: [String: InputLocation] = [:]
        var complete = entity != nil && predicate != nil
        if let node = mapping["set"], let set = reader.mapping(node, for: "set") {
            if set.entries.isEmpty {
                reader.fail("'set' names no attributes to update", at: node.location)
                complete = false
            }
            for item in set.entries {
                locations[item.key] = item.keyLocation
                if let value = Self.setValue(item, reader: reader) {
                    values[item.key] = value
                } else {
                    complete = false
                }
            }
        } else {
            if mapping["set"] == nil {
                reader.fail("the update step needs 'set' (attribute: value or =expression)", at: entry.keyLocation)
            }
            complete = false
        }
        var validate = true
        if let node = mapping["validate"], let value = reader.bool(node, for: "validate") { validate = value }
        guard complete, let entity, let predicate else { return nil }
        return UpdateStep(
            entity: entity.0, predicate: predicate, values: values, valueLocations: locations, validate: validate,
            location: entry.keyLocation,
            entityLocation: entity.1)
    }

    func loadDelete(_ entry: YAMLMapping.Entry, reader: DefinitionReader) -> DeleteStep? {
        guard let mapping = reader.mapping(entry.value, for: "delete") else { return nil }
        reader.checkKeys(mapping, allowed: Self.deleteKeys, in: "a delete step")
        let entity = Self.requiredString("entity", in: mapping, step: "delete", at: entry.keyLocation, reader: reader)
        let predicate = Self.predicate(
            in: mapping, step: "delete", at: entry.keyLocation, reader: reader,
            hint: "TRUEPREDICATE to delete every object")
        var rules = BatchDeleteRequest.DeleteRules.apply
        var complete = true
        if let node = mapping["delete_rules"] {
            if let value = reader.choice(node, for: "delete_rules", as: BatchDeleteRequest.DeleteRules.self) {
                rules = value
            } else {
                complete = false
            }
        }
        guard complete, let entity, let predicate else { return nil }
        return DeleteStep(
            entity: entity.0, predicate: predicate, deleteRules: rules, location: entry.keyLocation,
            entityLocation: entity.1)
    }

    private static func requiredString(
        _ key: String, in mapping: YAMLMapping, step: String, at location: InputLocation, reader: DefinitionReader
    ) -> (String, InputLocation)? {
        guard let node = mapping[key] else {
            reader.fail("the \(step) step needs '\(key)'", at: location)
            return nil
        }
        return reader.string(node, for: key).map { ($0, node.location) }
    }

    /// The parsed `where:` predicate; syntax errors are reported at their column.
    private static func predicate(
        in mapping: YAMLMapping, step: String, at location: InputLocation, reader: DefinitionReader, hint: String
    ) -> Predicate? {
        guard let node = mapping["where"] else {
            reader.fail("the \(step) step needs 'where' (a predicate; \(hint))", at: location)
            return nil
        }
        guard let text = reader.string(node, for: "where") else { return nil }
        do {
            return try Predicate(format: text, location: node.textLocation)
        } catch {
            reader.record(error)
            return nil
        }
    }

    /// `attribute: constant`, `attribute: =expression`, `attribute: {value: …}` or
    /// `attribute: {expression: …}`; a null is the constant nil.
    private static func setValue(
        _ item: YAMLMapping.Entry, reader: DefinitionReader
    ) -> BatchUpdateRequest.PropertyValue? {
        func expression(_ text: String, at location: InputLocation) -> BatchUpdateRequest.PropertyValue? {
            do {
                return .expression(try Expression.parse(text, location: location, bareNamesAreAttributes: true))
            } catch {
                reader.record(error)
                return nil
            }
        }
        switch item.value.content {
        case .scalar(_, isNull: true):
            return .constant(.null)
        case .scalar:
            guard let text = reader.string(item.value, for: item.key) else { return nil }
            if text.hasPrefix("=") {
                var location = item.value.textLocation
                location.column += 1
                return expression(String(text.dropFirst()), at: location)
            }
            return .constant(.string(text))
        case .mapping:
            guard let mapping = reader.mapping(item.value, for: item.key) else { return nil }
            reader.checkKeys(mapping, allowed: Self.setValueKeys, in: "'set: \(item.key)'")
            switch (mapping["value"], mapping["expression"]) {
            case (.some(let node), nil):
                if node.isNull { return .constant(.null) }
                return reader.string(node, for: "value").map { .constant(.string($0)) }
            case (nil, .some(let node)):
                guard let text = reader.string(node, for: "expression") else { return nil }
                return expression(text, at: node.textLocation)
            default:
                reader.fail("'set: \(item.key)' needs one of 'value' or 'expression'", at: item.keyLocation)
                return nil
            }
        case .sequence:
            reader.wrongType("a value, an =expression or a mapping", for: item.key, found: item.value)
            return nil
        }
    }
}
