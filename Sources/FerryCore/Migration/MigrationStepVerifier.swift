import Foundation

/// Checks a step's new store before it may replace anything: objects per entity, integrity,
/// foreign keys, uniqueness, validation rules that may no longer hold, and (on request) that
/// the values carried over as they are kept their checksums.
struct MigrationStepVerifier {
    let scope: MigrationStepScope
    let sourcePath: String
    let destinationPath: String
    let destinationKind: MigrationDestination

    private var mapping: MappingModel { scope.mapping }
    private var source: ObjectModel { scope.source }
    private var destination: ObjectModel { scope.destination }

    /// Verifies the new store against the objects the step wrote per entity. In ferry's layout
    /// required values and links need no scan: the new file's own NOT NULL columns and foreign
    /// keys refused a nil or a dangling key while it was written. Core Data's tables declare
    /// neither, so a Core Data store's required values, links and value forms are checked here.
    func verify(written: [String: Int]) throws {
        let store = try destinationKind.open(at: destinationPath, model: destination)
        var checks: [Check] = [.integrity(quick: false), .foreignKeys(entity: nil)]
        let undeclaredConstraints: Bool
        if case .coreData = destinationKind { undeclaredConstraints = true } else { undeclaredConstraints = false }
        for entity in destination.entities {
            checks.append(.count(entity: entity.name, expectation: .exactly(written[entity.name, default: 0]), basis: "objects the mapping wrote"))
            checks.append(.uniqueness(entity: entity.name))
            if undeclaredConstraints {
                checks.append(.required(entity: entity.name))
                checks.append(.types(entity: entity.name))
                checks.append(.relationships(entity: entity.name))
            }
            if mayBreakValidationRules(entity) { checks.append(.validationRules(entity: entity.name)) }
        }
        let report = Verifier(model: destination).run(checks, on: store, name: "migration \(source.version) → \(destination.version)")
        if let failure = report.failure {
            var notes = failure.notes
            for result in report.failedResults {
                for record in result.offending.prefix(5) {
                    notes.append("\(result.name): \(record.summaryLine)")
                }
            }
            throw FerryError(
                .migration, "the migrated store failed verification: \(failure.message)", notes: notes + ["nothing was changed: the original store is as it was"])
        }
    }

    /// True when some value of the entity may break its validation rules: a rule that is new or
    /// tightened for a copied attribute, or a rule on a value the mapping or a policy computes.
    /// Values copied under the same rules were checked when they were stored, so they are not
    /// scanned again.
    private func mayBreakValidationRules(_ entity: EntityDescription) -> Bool {
        let mappings = mapping.entities.filter { $0.destination == entity.name }
        for attribute in entity.attributes where attribute.validation != ValidationRules() {
            for entityMapping in mappings {
                guard entityMapping.policy == nil, case .copy(let sourceName, nil, _)? = entityMapping.attribute(named: attribute.name)?.value,
                    let sourceEntity = entityMapping.source.flatMap({ source.entity(named: $0) }),
                    sourceEntity.attribute(named: sourceName)?.validation == attribute.validation
                else { return true }
            }
        }
        return false
    }

    /// For each entity mapping that keeps its objects one to one, the attributes copied as they
    /// are must have the same order-independent checksum before and after; the others are listed
    /// as not comparable (recorded in `reports`).
    func compareChecksums(_ reports: inout [MigrationStepReport.EntityReport]) throws {
        let sourceConnection = try Connection(path: MigrationStepRunner.readOnlyURI(sourcePath), readOnly: false, create: true)
        let destinationConnection = try Connection(path: destinationPath, create: false)
        for (index, report) in reports.enumerated() {
            guard let entityMapping = mapping.entity(named: report.mapping), let sourceName = entityMapping.source else { continue }
            var sourceAttributes: [String] = []
            var destinationAttributes: [String] = []
            var notComparable: [String] = []
            let sourceEntity = source.entity(named: sourceName)
            for attribute in entityMapping.attributes {
                // A default for nil changes nothing when the source attribute can never be nil.
                if case .copy(let from, let conversion, let valueIfNil) = attribute.value, conversion == nil,
                    valueIfNil.isNull || sourceEntity?.attribute(named: from)?.isOptional == false
                {
                    sourceAttributes.append(from)
                    destinationAttributes.append(attribute.destination)
                } else {
                    notComparable.append(attribute.destination)
                }
            }
            guard scope.isIdentity(entityMapping), entityMapping.filter == nil else {
                reports[index].notComparable = entityMapping.attributes.map(\.destination)
                reports[index].unchanged = []
                continue
            }
            let before = try EntityChecksum.compute(
                connection: sourceConnection, model: source, layout: scope.sourceLayout, entity: sourceName, attributes: sourceAttributes)
            let after = try EntityChecksum.compute(
                connection: destinationConnection, model: destination, layout: scope.destinationLayout, entity: entityMapping.destination, attributes: destinationAttributes)
            guard before.matches(after) else {
                throw FerryError(
                    .migration,
                    "mapping \(entityMapping.name): the values of \(destinationAttributes.joined(separator: ", ")) changed during the migration (checksum \(before.value) over \(before.rows) objects before, \(after.value) over \(after.rows) after)",
                    at: entityMapping.location, notes: ["nothing was changed: the original store is as it was"])
            }
            reports[index].unchanged = destinationAttributes
            reports[index].notComparable = notComparable
        }
    }

    /// A store in WAL mode stays in WAL mode (the mode is recorded in the file's header).
    func keepJournalMode() throws {
        let mode = try Connection(path: MigrationStepRunner.readOnlyURI(sourcePath), readOnly: false, create: true).scalar("PRAGMA journal_mode")
        guard mode?.text?.lowercased() == "wal" else { return }
        let destination = try Connection(path: destinationPath, create: false)
        _ = try destination.scalar("PRAGMA journal_mode = WAL")
    }
}
