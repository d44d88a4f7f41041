import Foundation

/// Checks a step's new store before it may replace anything: objects per entity, integrity,
/// foreign keys, uniqueness, validation rules that may no longer hold, and (on request) that
/// the values carried over as they are kept their checksums.
///
/// Reads the source through the step's own connection (the source is its `main`) and the new
/// store through one connection of its own (``openDestination()``), opened once for every check.
package struct MigrationStepVerifier {
    let scope: MigrationStepScope
    /// The step's connection: the source store is `main`, the new store is attached as `dst`.
    let stepConnection: Connection
    let destinationPath: String
    let destinationKind: MigrationDestination

    private var mapping: MappingModel { scope.mapping }
    private var source: ObjectModel { scope.source }
    private var destination: ObjectModel { scope.destination }

    /// The new store, opened once for the checks (a scratch file: no writer lock).
    func openDestination() throws -> Store {
        try destinationKind.open(at: destinationPath, model: destination)
    }

    /// Verifies the new store against the objects the step wrote per entity. In ferry's layout
    /// required values and links need no scan: the new file's own NOT NULL columns and foreign
    /// keys refused a nil or a dangling key while it was written. Core Data's tables declare
    /// neither, so a Core Data store's required values, links and value forms are checked here.
    /// `computedValues` names the entities some of whose values ferry computed or converted.
    func verify(_ store: Store, written: [String: Int], computedValues: Set<String>) throws {
        try Self.verify(
            store, mapping: mapping, destinationKind: destinationKind, written: written, computedValues: computedValues)
    }

    /// The checks of `verify(_:written:computedValues:)` on the new store of a step of `mapping`
    /// (a migration in PostgreSQL's server runs them on its new schema).
    package static func verify(
        _ store: Store, mapping: MappingModel, destinationKind: MigrationDestination, written: [String: Int],
        computedValues: Set<String>
    ) throws {
        let source = mapping.source
        let destination = mapping.destination
        var checks: [Check] = [.integrity(quick: false), .foreignKeys(entity: nil)]
        let undeclaredConstraints: Bool
        if case .coreData = destinationKind { undeclaredConstraints = true } else { undeclaredConstraints = false }
        for entity in destination.entities {
            // An entity's objects include its sub-entities' (as Core Data counts them).
            let expected = destination.entities.filter { destination.isKind($0.name, of: entity.name) }.reduce(0) {
                $0 + written[$1.name, default: 0]
            }
            checks.append(
                .count(entity: entity.name, expectation: .exactly(expected), basis: "objects the mappings wrote"))
            checks.append(.uniqueness(entity: entity.name))
            if undeclaredConstraints {
                checks.append(.required(entity: entity.name))
                // Values copied in their stored form are as well-typed as in the source: only
                // rows with computed values (of the entity or a sub-entity) are scanned.
                if destination.entities.contains(where: {
                    computedValues.contains($0.name) && destination.isKind($0.name, of: entity.name)
                }) {
                    checks.append(.types(entity: entity.name))
                }
                checks.append(.relationships(entity: entity.name))
            }
            if mapping.mayBreakValidationRules(of: entity) { checks.append(.validationRules(entity: entity.name)) }
        }
        let report = Verifier(model: destination).run(
            checks, on: store, name: "migration \(source.version) → \(destination.version)")
        if let failure = report.failure {
            var notes = failure.notes
            for result in report.failedResults {
                for record in result.offending.prefix(5) {
                    notes.append("\(result.name): \(record.summaryLine)")
                }
            }
            throw FerryError(
                .migration, "the migrated store failed verification: \(failure.message)",
                notes: notes + ["nothing was changed: the original store is as it was"])
        }
    }

    /// For each entity mapping that keeps its objects one to one, the attributes copied as they
    /// are must have the same order-independent checksum before and after; the others are listed
    /// as not comparable (recorded in `reports`). The source's tables are found unqualified on
    /// the step's connection (`main` is searched before attached databases).
    func compareChecksums(_ reports: inout [MigrationStepReport.EntityReport], destination store: Store) throws {
        for (index, report) in reports.enumerated() {
            guard let entityMapping = mapping.entity(named: report.mapping), let sourceName = entityMapping.source
            else { continue }
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
                connection: stepConnection, model: source, layout: scope.sourceLayout, entity: sourceName,
                attributes: sourceAttributes,
                ownObjectsOnly: true)
            let after = try store.readDatabase { connection in
                try EntityChecksum.compute(
                    connection: connection, model: destination, layout: scope.destinationLayout,
                    entity: entityMapping.destination,
                    attributes: destinationAttributes, ownObjectsOnly: true)
            }
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

    /// A store in WAL mode stays in WAL mode (the mode is recorded in the file's header): set
    /// through the step's connection, once every check is done and the new store is closed.
    func keepJournalMode() throws {
        let mode = try stepConnection.scalar("PRAGMA main.journal_mode")
        guard mode?.text?.lowercased() == "wal" else { return }
        _ = try stepConnection.scalar("PRAGMA \(MigrationStepScope.destinationSchema).journal_mode = WAL")
    }
}

extension MappingModel {
    /// True when some value of `entity` (a destination entity) may break its validation rules:
    /// a rule that is new or tightened for a copied attribute, or a rule on a value the mapping
    /// or a policy computes. Values copied under the same rules were checked when they were
    /// stored, so they are not scanned again.
    package func mayBreakValidationRules(of entity: EntityDescription) -> Bool {
        let mappings = entities.filter { $0.destination == entity.name }
        for attribute in entity.attributes where attribute.validation != ValidationRules() {
            for entityMapping in mappings {
                guard entityMapping.policy == nil,
                    case .copy(let sourceName, nil, _)? = entityMapping.attribute(named: attribute.name)?.value,
                    let sourceEntity = entityMapping.source.flatMap({ source.entity(named: $0) }),
                    sourceEntity.attribute(named: sourceName)?.validation == attribute.validation
                else { return true }
            }
        }
        return false
    }
}
