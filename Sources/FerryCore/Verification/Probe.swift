/// One row condition counted in an entity's shared scan: "`property` `problem`" holds for the
/// rows where `condition` (SQL over `"Entity" AS t0`) is true.
struct Probe {
    enum Aspect: String, Hashable {
        case required, types, validation
    }

    var aspect: Aspect
    var property: String
    /// Says what is wrong, after the property's name: `is nil`, `is not an int16`.
    var problem: String
    /// The key of the measured value: `nil_email`, `type_age`, `max_length_email`.
    var measure: String
    var condition: String
    var arguments: [DatabaseValue] = []
    /// For a types probe that `ferry_well_typed` tests: the type's code (see ``WellTyped``), so
    /// that an entity's scan tests all such columns in one call per row.
    var wellTypedCode: Character? = nil
    /// The column (`t0.<column>`) a `ferry_well_typed` probe tests.
    var wellTypedColumn: String? = nil
    /// For a validation probe: the attribute and the rule it checks, so that the rule can also
    /// be checked in ferry over decoded values (``RuleScan``, on PostgreSQL).
    var rule: (attribute: AttributeDescription, rule: RuleCondition.Rule)? = nil

    /// Every probe of `entity` for the aspects asked for.
    static func probes(
        for entity: EntityDescription, model: ObjectModel, layout: any StoreLayout, aspects: Set<Aspect>
    ) throws -> [Probe] {
        var probes: [Probe] = []
        if aspects.contains(.required) { probes += required(entity, model: model, layout: layout) }
        if aspects.contains(.types) { probes += entity.attributes.map { typeProbe($0, of: entity, layout: layout) } }
        if aspects.contains(.validation) {
            for attribute in entity.attributes { probes += try validation(attribute, of: entity, layout: layout) }
        }
        return probes
    }

    /// `t0.<column>` of the attribute named `name` of `entity`.
    static func column(_ name: String, of entity: EntityDescription, layout: any StoreLayout) -> String {
        "t0." + layout.quotedColumn(forAttribute: name, in: entity)
    }

    // MARK: Required

    static func required(_ entity: EntityDescription, model: ObjectModel, layout: any StoreLayout) -> [Probe] {
        let quote = layout.dialect.quote
        var probes: [Probe] = []
        for attribute in entity.attributes where !attribute.isOptional {
            probes.append(
                Probe(
                    aspect: .required, property: attribute.name, problem: "is nil", measure: "nil_\(attribute.name)",
                    condition: "\(column(attribute.name, of: entity, layout: layout)) IS NULL"))
        }
        for relationship in entity.relationships where !relationship.isOptional && !relationship.isToMany {
            switch layout.storage(of: relationship, in: entity, model: model) {
            case .foreignKey(let name):
                probes.append(
                    Probe(
                        aspect: .required, property: relationship.name, problem: "is nil",
                        measure: "nil_\(relationship.name)", condition: "t0.\(quote(name)) IS NULL"))
            case .inverseForeignKey(let table, let name):
                probes.append(
                    Probe(
                        aspect: .required, property: relationship.name, problem: "is nil",
                        measure: "nil_\(relationship.name)",
                        condition:
                            "NOT EXISTS (SELECT 1 FROM \(quote(table)) AS r WHERE r.\(quote(name)) = t0.\(quote(layout.keyColumn)))"
                    ))
            case .joinTable:
                break
            }
        }
        return probes
    }

    // MARK: Types

    /// Whether a value is in the stored form of its type in the store's value coding (``WellTyped``).
    static func typeProbe(
        _ attribute: AttributeDescription, of entity: EntityDescription, layout: any StoreLayout
    ) -> Probe {
        let c = column(attribute.name, of: entity, layout: layout)
        let code = WellTyped.code(for: attribute.type, storedAs: layout.valueCoding.storageClass(for: attribute.type))
        let problem: String
        switch (attribute.type, code) {
        case (.date, "n"): problem = "is not a date (a number of seconds since 2001-01-01, as Core Data stores dates)"
        case (.decimal, "n"): problem = "is not a decimal (a number, as Core Data stores decimals)"
        case (.uuid, "g"): problem = "is not a UUID (16 bytes, as Core Data stores UUIDs)"
        default: problem = Self.problem(ofMistyped: attribute.type)
        }
        return Probe(
            aspect: .types, property: attribute.name, problem: problem, measure: "type_\(attribute.name)",
            condition: "\(WellTyped.functionName)('\(code)', \(c)) = 0", wellTypedCode: code, wellTypedColumn: c)
    }

    /// What is wrong with a value not in ferry's stored form for `type`.
    private static func problem(ofMistyped type: AttributeType) -> String {
        switch type {
        case .int16, .int32: return "is not an \(type.rawValue)"
        case .int64: return "is not an int64"
        case .bool: return "is not a boolean (0 or 1)"
        case .double, .float: return "is not a floating-point number"
        case .decimal: return "is not a decimal in text form"
        case .date: return "is not an ISO-8601 date (YYYY-MM-DDTHH:MM:SS.sssZ)"
        case .uuid: return "is not a lowercase UUID"
        case .json: return "is not valid JSON text"
        case .string, .uri: return "is not text"
        case .binary: return "is not binary data (a BLOB)"
        }
    }

    // MARK: Validation rules

    static func validation(
        _ attribute: AttributeDescription, of entity: EntityDescription, layout: any StoreLayout
    ) throws -> [Probe] {
        if let pattern = attribute.validation.pattern, attribute.type != .binary, PatternRule(pattern) == nil {
            throw FerryError(
                .verification, "the pattern of \(attribute.name) is not a valid regular expression: \(pattern)")
        }
        let unit = attribute.type == .binary ? "bytes" : "characters"
        return RuleCondition.conditions(
            for: attribute, value: column(attribute.name, of: entity, layout: layout), coding: layout.valueCoding
        ).map { condition in
            let (problem, key): (String, String)
            switch condition.rule {
            case .minValue(let min): (problem, key) = ("is below the minimum \(min)", "min")
            case .maxValue(let max): (problem, key) = ("is above the maximum \(max)", "max")
            case .minLength(let min): (problem, key) = ("is shorter than \(min) \(unit)", "min_length")
            case .maxLength(let max): (problem, key) = ("is longer than \(max) \(unit)", "max_length")
            case .pattern(let pattern): (problem, key) = ("does not match the pattern \(pattern)", "pattern")
            }
            return Probe(
                aspect: .validation, property: attribute.name, problem: problem, measure: "\(key)_\(attribute.name)",
                condition: condition.violation, arguments: condition.arguments, rule: (attribute, condition.rule))
        }
    }
}

/// How many rows of the scan a probe counted.
struct ProbeCount {
    var probe: Probe
    var count: Int
    var rows: Int
    /// The offending records, when the probe was checked in ferry (nil: found with its SQL).
    var offending: [OffendingRecord]? = nil
}
