import FerryCore
import FerryFormats
import Foundation

/// The model of an import that names none (`ferry import` without `--model`): the entity the
/// store already records (extended by the input's new columns with `alter`), or one inferred from
/// the input's first records (``ModelInference``) and added to the store's model.
///
/// The table or columns are added to the import's ``ImportTarget`` before any record is imported;
/// on a dry run, to a copy of the store. Nothing is printed: ``Result/notes`` say what was inferred
/// or added.
package struct ImportInference {
    /// Types by header or attribute name (`--type`).
    package var typeOverrides: [String: AttributeType] = [:]
    /// Uniqueness constraints of a new entity, by header or attribute names (`--unique`).
    package var unique: [[String]] = []
    /// Add the input's new columns to an entity the store already has (`--alter`).
    package var alter = false
    /// How many records the types are inferred from (`--sample`).
    package var sampleSize = 1000
    /// The mappings the caller gives (`--field city=address.city`): they name inferred attributes.
    package var explicitFields: [FieldMapping] = []

    /// Inference with the defaults: no overrides, no constraints, 1,000 sampled records.
    package init() {}

    /// What the import runs with.
    package struct Result {
        /// The model the store has once the import's entity is in it.
        package var model: ObjectModel
        /// The step's reader, replaying the sampled records first.
        package var reader: any RecordReader
        /// `inferred Entity: …` or `added to Entity: …`, for the user.
        package var notes: [String]
    }

    /// Settles the model of `step`: reads a sample of its source, then uses, extends or infers
    /// `step.entity`, sets `step.fields` (headers renamed into attribute names) and adds a new
    /// table or new columns to `target`.
    ///
    /// - Throws: `.usage` when `--type` or `--unique` name no column of the input or would change
    ///   an entity the store already has; the model checker's problems for an unusable model.
    package func resolve(_ step: inout ImportStep, target: ImportTarget) throws -> Result {
        let entityName = step.entity
        let existing =
            StoreLocation(target.store).mayExist
            ? try Store.metadata(at: target.store)?.model : nil
        let source = try ReaderFactory.open(step: step)
        // Mapped fields (paths into nested objects among them) are read from the sample on.
        for mapping in explicitFields {
            if case .field(let name) = mapping.source { _ = source.fieldIndex(of: name) }
        }
        let sampled = try SampledReader(source, sampleSize: max(1, sampleSize))
        // A database's columns have the types it declares (where the values fit them).
        let inferenceTypes = ((source as? DatabaseRecordReader)?.declaredTypes(fitting: sampled.samples) ?? [:])
            .merging(typesByField()) { _, given in given }
        let textIsUntyped = step.database == nil && step.format.readsTextColumns
        let decimalComma = step.coercion.decimalComma
        if let existing, let recorded = existing.entity(named: entityName) {
            try refuseChanges(to: recorded)
            let inferred = ModelInference.infer(
                entityNamed: entityName, fieldNames: sampled.fieldNames, samples: sampled.samples,
                overrides: inferenceTypes, textIsUntyped: textIsUntyped, decimalComma: decimalComma)
            let added = zip(inferred.entity.attributes, inferred.fieldNames).filter { attribute, field in
                recorded.attribute(named: attribute.name) == nil && recorded.attribute(named: field) == nil
            }
            step.fields = Self.renamedFields(sampled.fieldNames, into: recorded)
            step.modelIsInferred = true
            guard alter && !added.isEmpty else { return Result(model: existing, reader: sampled, notes: []) }
            var extended = existing
            extended.version = Self.nextVersion(of: existing)
            if let position = extended.entities.firstIndex(where: { $0.name == entityName }) {
                extended.entities[position].attributes += added.map(\.0)
            }
            try Self.check(extended)
            try target.copyForDryRun()
            try Store.addAttributes(added.map(\.0), to: entityName, at: target.path, model: extended)
            let addition = ModelInference.Result(
                entity: EntityDescription(name: entityName, attributes: added.map(\.0)), fieldNames: added.map(\.1))
            step.fields += addition.renamedFields
            step.addedFields = Self.drift(added: added.map(\.1), sampled: sampled, source: source, step: step)
            return Result(model: extended, reader: sampled, notes: ["added to \(entityName): " + addition.summary])
        }
        var inferred = ModelInference.infer(
            entityNamed: entityName, fieldNames: sampled.fieldNames, samples: sampled.samples,
            overrides: inferenceTypes, unique: unique, textIsUntyped: textIsUntyped, decimalComma: decimalComma)
        for mapping in explicitFields {
            if case .field(let name) = mapping.source { inferred.name(mapping.attribute, fromField: name) }
        }
        try checkNamed(in: inferred)
        step.fields = inferred.renamedFields
        step.modelIsInferred = true
        let model: ObjectModel
        if let existing {
            var extended = existing
            extended.entities.append(inferred.entity)
            extended.version = Self.nextVersion(of: existing)
            try Self.check(extended)
            try target.copyForDryRun()
            try Store.addEntities([entityName], at: target.path, model: extended)
            model = extended
        } else {
            model = ObjectModel(name: entityName, version: "1", entities: [inferred.entity])
            try Self.check(model)
        }
        return Result(model: model, reader: sampled, notes: ["inferred \(entityName): " + inferred.summary])
    }

    /// `--type` by source field: a type given for an attribute that `--field` maps
    /// (`--field city=address.city --type city=string`) is the type of the field it reads, so it
    /// is applied, never passed over.
    func typesByField() -> [String: AttributeType] {
        var types = typeOverrides
        for mapping in explicitFields {
            if case .field(let name) = mapping.source, let type = typeOverrides[mapping.attribute] {
                types[name] = type
            }
        }
        return types
    }

    /// The report's drift entries of the fields `--on-new-field add` added: each at the header's
    /// line, or (JSON) the first sampled record that has it.
    static func drift(
        added fields: [String], sampled: SampledReader, source: any RecordReader, step: ImportStep
    ) -> [SchemaDrift] {
        let file = step.sources == ["-"] ? nil : source.sourceName
        return fields.map { field in
            var line: Int? = SchemaDriftCheck.headerLine(of: source)
            if !step.format.readsTextColumns {
                let index = sampled.fieldNames.firstIndex(of: field)
                line =
                    sampled.samples.first { record in
                        index.map { $0 < record.fields.count && record.fields[$0] != nil } ?? false
                    }?.line
            }
            return SchemaDrift(field: field, change: .new, file: file, line: line, action: .added)
        }
    }

    /// The version an inferred model gets when an import adds to it: one more than the store's.
    static func nextVersion(of model: ObjectModel) -> String {
        String((Int(model.version) ?? 0) + 1)
    }

    static func check(_ model: ObjectModel) throws {
        let problems = ModelChecker.check(model)
        if !problems.isEmpty { throw FerryErrors(problems) }
    }

    /// Field mappings for headers whose derived attribute names (`AttributeNaming`) differ from
    /// them, so that a later import into an inferred entity finds `First Name` in `first_name`.
    static func renamedFields(_ fieldNames: [String], into entity: EntityDescription) -> [FieldMapping] {
        let names = AttributeNaming.attributeNames(for: fieldNames)
        return zip(fieldNames, names).compactMap { field, name in
            guard name != field, entity.attribute(named: field) == nil, entity.attribute(named: name) != nil else {
                return nil
            }
            return FieldMapping(attribute: name, source: .field(field))
        }
    }

    /// `--type` and `--unique` change a model; on an entity the store already has they would be
    /// silently ignored, so anything that differs is refused.
    func refuseChanges(to entity: EntityDescription) throws {
        for (name, type) in typeOverrides.sorted(by: { $0.key < $1.key }) {
            let attributeName =
                entity.attribute(named: name) != nil ? name : AttributeNaming.identifier(name, fallback: name)
            guard let attribute = entity.attribute(named: attributeName) else {
                throw FerryError(
                    .usage,
                    "--type \(name)=\(type.rawValue): \(entity.name) has no attribute '\(name)' (attributes: \(entity.attributes.map(\.name).joined(separator: ", ")))"
                )
            }
            if attribute.type != type {
                throw FerryError(
                    .usage,
                    "--type \(name)=\(type.rawValue): the store already has \(entity.name).\(attribute.name) as \(attribute.type.rawValue); --type applies only when a model is inferred (change a stored type by migrating the store to a new model version)"
                )
            }
        }
        // Like a matching --type, a constraint the entity already has changes nothing (a resumed import repeats its command).
        let constraints = unique.map { constraint in
            constraint.map { name in
                entity.attribute(named: name) != nil ? name : AttributeNaming.identifier(name, fallback: name)
            }
        }
        if constraints.contains(where: { constraint in
            !entity.uniquenessConstraints.contains { Set($0) == Set(constraint) }
        }) {
            throw FerryError(
                .usage,
                "--unique applies only when a model is inferred; the store already has \(entity.name) (add a constraint by migrating the store to a new model version)"
            )
        }
    }

    /// Every `--type` and `--unique` column must be a field (or derived attribute) of the input.
    func checkNamed(in inferred: ModelInference.Result) throws {
        let known = Set(inferred.fieldNames).union(inferred.entity.attributes.map(\.name))
        let columns = inferred.fieldNames.joined(separator: ", ")
        for name in typeOverrides.keys.sorted() where !known.contains(name) {
            throw FerryError(
                .usage,
                "--type \(name)=…: the input has no column '\(name)' (columns: \(columns))\(Suggestions.didYouMean(name, in: inferred.fieldNames))"
            )
        }
        for name in unique.joined() where !known.contains(name) {
            throw FerryError(
                .usage,
                "--unique \(name): the input has no column '\(name)' (columns: \(columns))\(Suggestions.didYouMean(name, in: inferred.fieldNames))"
            )
        }
    }
}
