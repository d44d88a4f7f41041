import FerryCore
import FerryFormats

/// Checks a loaded ``Job`` against the model it runs on: entities, attributes, constants,
/// relationship mappings and conflict policies. Each problem is located at the job key it is
/// about (code `invalidDefinition`).
///
/// ```swift
/// let problems = JobValidator().validate(job, model: bundle.current)
/// ```
package struct JobValidator: Sendable {
    package init() {}

    /// Every problem of the job's steps against `model`; empty when the job fits the model.
    package func validate(_ job: Job, model given: ObjectModel) -> [FerryError] {
        var errors: [FerryError] = []
        // A Core Data store holds inheritance: its steps see each sub-entity with what it inherits.
        let engine = StoreLocation(job.store.path).engine
        let coreData = job.store.createsCoreDataStore || engine.capabilities.storesInheritance
        let model = coreData ? given.withInheritedProperties : given
        // Steps other than migrations open the store with this model: it must fit the store layout.
        if !coreData && job.steps.contains(where: { if case .migrate = $0 { false } else { true } }) {
            do {
                try engine.checkRepresentable(model)
            } catch let refusal as FerryErrors {
                errors += refusal.errors
            } catch {
                errors.append(FerryError(.invalidModel, "\(error)", at: model.location))
            }
        }
        var imported: [String: (count: Int, steps: [Int])] = [:]
        for (offset, step) in job.steps.enumerated() {
            switch step {
            case .import(let step):
                validate(step, model: model, job: job, into: &errors)
                imported[step.entity, default: (0, [])].steps.append(offset + 1)
                if step.drift.newField == .add {
                    // A job's store must match its model file: a field added to the store alone
                    // would make the next run's model differ from the store's.
                    errors.append(
                        FerryError(
                            .invalidDefinition,
                            "on_new_field: add cannot add fields to \(step.entity): the job's model is a model file, which the store's model must match; add the attribute in a new version of the model and migrate the store, or set 'on_new_field: ignore' (ferry import without --model adds fields to the model it inferred)",
                            at: step.drift.newFieldLocation ?? step.location))
                }
            case .verify(let step):
                errors += step.expectations.checks(model: model, imported: imported).problems
            case .export(let step): validate(step, model: model, into: &errors)
            case .update(let step):
                check(entity: step.entity, at: step.entityLocation ?? step.location, model: model, into: &errors) {
                    () throws(FerryError) in try step.request.check(model: model)
                }
            case .delete(let step):
                check(entity: step.entity, at: step.entityLocation ?? step.location, model: model, into: &errors) {
                    () throws(FerryError) in try step.request.check(model: model)
                }
            case .migrate: break  // checked against the bundle: validateMigrations(_:bundle:)
            }
        }
        return errors
    }

    /// An export's entity, predicate, fields and sort keys must fit the model; each problem is
    /// reported (in file order), not only the first.
    private func validate(_ step: ExportStep, model: ObjectModel, into errors: inout [FerryError]) {
        var found: [FerryError] = []
        func check(_ request: FetchRequest) {
            do {
                try request.check(model: model)
            } catch {
                found.append(error)
            }
        }
        let base = FetchRequest(entity: step.entity, properties: [], entityLocation: step.entityLocation)
        check(base)
        if found.isEmpty {
            if let predicate = step.predicate {
                var request = base
                request.predicate = predicate
                check(request)
            }
            for field in step.fields ?? [] {
                var request = base
                request.properties = [field]
                check(request)
            }
            for descriptor in step.sort {
                var request = base
                request.sortDescriptors = [descriptor]
                check(request)
            }
        }
        errors += found.sorted {
            ($0.location?.line ?? 0, $0.location?.column ?? 0) < ($1.location?.line ?? 0, $1.location?.column ?? 0)
        }
    }

    /// The entity, then the request (predicate, attributes, constants, expressions) against the model.
    private func check(
        entity: String, at location: InputLocation?, model: ObjectModel, into errors: inout [FerryError],
        _ request: () throws(FerryError) -> Void
    ) {
        guard model.entity(named: entity) != nil else {
            errors.append(
                FerryError(
                    .invalidDefinition,
                    "unknown entity '\(entity)' in model '\(model.name)'\(Suggestions.didYouMean(entity, in: model.entityNames))",
                    at: location))
            return
        }
        do {
            try request()
        } catch {
            errors.append(error)
        }
    }

    /// The problems of an import step's field mappings (`fields:`, `--field`) against `entity`
    /// (as the model declares it, transient attributes included): an unknown attribute, a
    /// relationship, a transient attribute (nothing can be imported into one), a bad JSON path
    /// or constant. `ferry run` and `ferry import` both check them.
    package func fieldProblems(of step: ImportStep, entity: EntityDescription, job: Job) -> [FerryError] {
        var errors: [FerryError] = []
        func fail(_ message: String, at location: InputLocation?) {
            errors.append(
                FerryError(.invalidDefinition, message, at: location ?? step.location ?? InputLocation(file: job.path)))
        }
        for field in step.fields {
            guard let attribute = entity.attribute(named: field.attribute) else {
                if entity.relationship(named: field.attribute) != nil {
                    fail(
                        "'\(field.attribute)' is a relationship of '\(entity.name)'; map it under 'relationships'",
                        at: field.location)
                } else {
                    fail(
                        "'\(entity.name)' has no attribute '\(field.attribute)'\(Suggestions.didYouMean(field.attribute, in: entity.attributes.map(\.name)))",
                        at: field.location)
                }
                continue
            }
            if !attribute.isStored {
                fail(
                    "'\(entity.name).\(attribute.name)' is transient: it has no storage, so nothing can be imported into it",
                    at: field.location)
                continue
            }
            if case .field(let name) = field.source, !step.format.readsTextColumns,
                case .failure(let problem) = JSONFieldPath.parse(name)
            {
                fail(problem.description, at: field.location)
                continue
            }
            if case .constant(let text) = field.source {
                let options = field.options(overriding: step.coercion)
                if case .failure(let failure) = Coercion.coerce(text, to: attribute.type, options: options) {
                    fail(
                        "constant for '\(entity.name).\(attribute.name)' is not a valid \(attribute.type.rawValue): \(failure.reason)",
                        at: field.location)
                }
            }
        }
        return errors
    }

    private func validate(_ step: ImportStep, model: ObjectModel, job: Job, into errors: inout [FerryError]) {
        func fail(_ message: String, at location: InputLocation?) {
            errors.append(
                FerryError(.invalidDefinition, message, at: location ?? step.location ?? InputLocation(file: job.path)))
        }
        guard let entity = model.entity(named: step.entity) else {
            fail(
                "unknown entity '\(step.entity)' in model '\(model.name)'\(Suggestions.didYouMean(step.entity, in: model.entityNames))",
                at: step.entityLocation)
            return
        }
        errors += fieldProblems(of: step, entity: entity, job: job)
        for mapping in step.relationships {
            guard let relationship = entity.relationship(named: mapping.relationship) else {
                fail(
                    "'\(entity.name)' has no relationship '\(mapping.relationship)'\(Suggestions.didYouMean(mapping.relationship, in: entity.relationships.map(\.name)))",
                    at: mapping.location)
                continue
            }
            if relationship.isToMany {
                fail(
                    "'\(entity.name).\(relationship.name)' is to-many; 'relationships:' resolves only to-one relationships (a JSON source's nested arrays link to-many ones with 'nested: true')",
                    at: mapping.location)
                continue
            }
            guard let destination = model.entity(named: relationship.destination) else { continue }
            guard destination.attribute(named: mapping.match) != nil else {
                fail(
                    "'\(destination.name)' has no attribute '\(mapping.match)' to match\(Suggestions.didYouMean(mapping.match, in: destination.attributes.map(\.name)))",
                    at: mapping.location)
                continue
            }
            if !destination.uniquenessConstraints.contains([mapping.match]) {
                fail(
                    "'match: \(mapping.match)' needs '\(destination.name).\(mapping.match)' to be unique on its own (unique: true)",
                    at: mapping.location)
            }
        }
        if step.onConflict == .update || step.onConflict == .replace, entity.uniquenessConstraints.isEmpty,
            step.mode != .sync
        {
            fail(
                "'on_conflict: \(step.onConflict.rawValue)' needs a uniqueness constraint on '\(entity.name)' to find the existing object",
                at: step.onConflictLocation)
        }
        if step.nested != nil, let problem = NestedOptions.problem(with: step.format, named: step.formatName) {
            fail(problem, at: step.location)
        }
        if step.mode == .sync {
            do {
                _ = try SyncKey.attributes(of: step, entity: entity)
            } catch {
                fail(error.message, at: error.location ?? step.location)
            }
        }
    }

    /// Every problem of the job's `migrate` steps against the model bundle: a target version the
    /// bundle lacks, and for each version step up to the target (from the bundle's first version,
    /// since the store's version is only known when it is opened) a mapping file that does not
    /// load, or a missing one where inference refuses a change.
    package func validateMigrations(_ job: Job, bundle: ModelBundle) -> [FerryError] {
        var errors: [FerryError] = []
        var checked: Set<String> = []
        for step in job.steps {
            guard case .migrate(let migrate) = step, let first = bundle.versions.first else { continue }
            let target = migrate.to ?? bundle.currentVersion
            let labels = bundle.versions.map(\.version)
            guard labels.contains(target) else {
                errors.append(
                    FerryError(
                        .invalidDefinition,
                        "model \(bundle.name) has no version '\(target)' to migrate to (versions: \(labels.joined(separator: ", ")))\(Suggestions.didYouMean(target, in: labels))",
                        at: migrate.toLocation ?? migrate.location ?? InputLocation(file: job.path)))
                continue
            }
            guard let steps = try? ModelDiff.steps(in: bundle, from: first.version, to: target) else { continue }
            for diff in steps where checked.insert("\(diff.source.version)-to-\(diff.destination.version)").inserted {
                do {
                    _ = try MappingLoader().mapping(for: diff, in: bundle, parameters: job.parameters)
                } catch let problems as FerryErrors {
                    errors += problems.errors
                } catch let error as FerryError {
                    // Inference refusing a step without a mapping file: a problem of the definitions.
                    errors.append(
                        FerryError(
                            .invalidDefinition, error.message, at: error.location ?? migrate.location,
                            notes: error.notes))
                } catch {
                    errors.append(FerryError(.migration, "\(error)", at: migrate.location))
                }
            }
        }
        return errors
    }
}
