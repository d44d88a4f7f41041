/// Deletes every object of an entity that a predicate selects, set-based and in one
/// transaction, like Core Data's `NSBatchDeleteRequest`, except that by default ferry applies
/// the model's delete rules to related objects:
///
/// - `cascade`: related objects are deleted too, recursively (through foreign keys, inverse
///   foreign keys and join tables; cycles terminate);
/// - `nullify`: related objects stay and their reference is cleared (their foreign key set to
///   NULL, or the join-table rows removed); if that reference is required, the delete fails;
/// - `deny`: if any related object remains, the delete fails, naming the relationship and how
///   many objects block it;
/// - `no_action`: ferry leaves the references alone. SQLite's foreign keys are on in every
///   store, so join-table rows go with the object (they are `ON DELETE CASCADE`), and a
///   remaining object whose foreign key would dangle makes the delete fail, naming it.
///
/// With ``deleteRules`` `.ignore` only the selected rows are deleted, as Core Data does; a
/// foreign key that would dangle fails the delete with a message naming it.
///
/// ```swift
/// let request = BatchDeleteRequest(entity: "Customer", predicate: try Predicate(format: "active == NO"))
/// let result = try store.execute(request)       // result.deleted["Customer"], result.deleted["Order"], …
/// ```
public struct BatchDeleteRequest: Sendable {
    /// Whether related objects follow the model's delete rules.
    public enum DeleteRules: String, Sendable, Hashable, CaseIterable {
        /// Apply cascade, nullify, deny and no_action (the default).
        case apply
        /// Delete only the selected rows (Core Data's `NSBatchDeleteRequest`).
        case ignore
    }

    /// The entity whose objects are deleted.
    public var entity: String
    /// The objects to delete (all by default).
    public var predicate: Predicate
    /// Whether the model's delete rules apply (the default) or only the selected rows go.
    public var deleteRules: DeleteRules
    /// Where the request was written (a job step), for error messages.
    public var location: InputLocation?

    /// A delete of the `entity` objects that `predicate` selects.
    public init(
        entity: String, predicate: Predicate = .constant(true), deleteRules: DeleteRules = .apply,
        location: InputLocation? = nil
    ) {
        self.entity = entity
        self.predicate = predicate
        self.deleteRules = deleteRules
        self.location = location
    }
}

/// What a batch delete did.
public struct BatchDeleteResult: Sendable, Hashable {
    /// Objects deleted per entity: the request's entity and those deleted by cascade.
    public var deleted: [String: Int] = [:]
    /// References cleared per relationship (`Order.customer`: foreign keys set to NULL; for
    /// many-to-many relationships, join-table rows removed).
    public var nullified: [String: Int] = [:]
    /// The entity the request named.
    public var entity: String

    /// An empty result for `entity`.
    public init(entity: String) { self.entity = entity }

    /// Objects of the request's entity that were deleted.
    public var deletedCount: Int { deleted[entity] ?? 0 }
    /// Objects deleted by cascade, per entity (without the request's own entity, unless it
    /// cascades into itself, in which case those are counted in ``deletedCount``).
    public var cascaded: [String: Int] { deleted.filter { $0.key != entity } }
}

extension Store {
    /// Runs a batch delete in one write transaction (or inside the caller's, as a savepoint).
    /// With `dryRun`, everything runs, including every check, and is then rolled back: the
    /// result says what would be deleted and nullified.
    public func execute(_ request: BatchDeleteRequest, dryRun: Bool = false) throws -> BatchDeleteResult {
        let planner = try BatchDeleter(request: request, model: model, layout: layout)
        return try rollingBackDatabaseWhen(dryRun) { database in try planner.run(on: database) }
    }
}

extension BatchDeleteRequest {
    /// Checks the entity and predicate against `model` without touching any store.
    public func check(model: ObjectModel) throws(FerryError) {
        // What is valid does not depend on the layout; ferry's serves to compile it.
        _ = try BatchDeleter(request: self, model: model, layout: FerryLayout())
    }
}

/// Runs a batch delete: the selected keys go into a temporary table per entity, cascades
/// extend those tables round by round until nothing new is added, then deny, nullify and
/// dangling-reference checks run, and finally one DELETE per entity.
struct BatchDeleter {
    let request: BatchDeleteRequest
    let model: ObjectModel
    let layout: any StoreLayout
    let entity: EntityDescription
    private(set) var predicate: PredicateSQL
    /// On PostgreSQL, a predicate whose SQL is only a superset of it (``PredicateFilter``):
    /// ferry selects the keys, and ``predicate`` becomes a test against them.
    private var residual: Predicate?
    /// The quoted key column.
    let pk: String

    /// A relationship edge from an entity being deleted.
    struct Edge {
        var entity: EntityDescription
        var relationship: RelationshipDescription
        var storage: RelationshipStorage
    }

    /// A foreign-key column anywhere in the model: `table.column` holds a key of `destination`.
    struct ForeignKey {
        var entity: EntityDescription
        var relationship: RelationshipDescription
        var column: String
        var destination: String
    }

    init(request: BatchDeleteRequest, model: ObjectModel, layout: any StoreLayout) throws(FerryError) {
        guard let entity = model.entity(named: request.entity) else {
            throw FerryError(
                .invalidDefinition,
                "unknown entity '\(request.entity)' in model '\(model.name)'\(Suggestions.didYouMean(request.entity, in: model.entityNames))",
                at: request.location)
        }
        self.request = request
        self.model = model
        self.layout = layout
        self.entity = entity
        self.pk = layout.dialect.quote(layout.keyColumn)
        let filter = try request.predicate.filter(for: entity, model: model, layout: layout, alias: "t0")
        self.predicate = filter.sql
        self.residual = filter.isExact ? nil : request.predicate
    }

    /// A delete of the rows of `entity` that `selection` (SQL over the entity's table aliased
    /// `t0`) selects, with the model's delete rules: how a sync import deletes the rows its
    /// source no longer has.
    init(
        entity: String, selection: String, model: ObjectModel, layout: any StoreLayout, location: InputLocation?
    ) throws(FerryError) {
        try self.init(request: BatchDeleteRequest(entity: entity, location: location), model: model, layout: layout)
        predicate = layout.selection(of: self.entity, alias: "t0", where: selection)
    }

    /// The quoted table of the entity named `name`.
    private func tableSQL(_ name: String) -> String { layout.dialect.quote(layout.table(forEntityNamed: name)) }

    private func quote(_ identifier: String) -> String { layout.dialect.quote(identifier) }

    /// Every foreign-key column of the model.
    private var foreignKeys: [ForeignKey] {
        model.entities.flatMap { entity in
            entity.relationships.compactMap { relationship -> ForeignKey? in
                guard case .foreignKey(let column) = layout.storage(of: relationship, in: entity, model: model) else {
                    return nil
                }
                return ForeignKey(
                    entity: entity, relationship: relationship, column: column, destination: relationship.destination)
            }
        }
    }

    /// True when nothing in the model can refer to or depend on the entity: a plain DELETE does.
    private var isIsolated: Bool {
        entity.relationships.isEmpty
            && !model.entities.contains { other in other.relationships.contains { $0.destination == entity.name } }
    }

    func run(on connection: any DatabaseConnection) throws -> BatchDeleteResult {
        var selectedTable: String?
        defer { if let selectedTable { try? connection.execute("DROP TABLE IF EXISTS \(selectedTable)") } }
        var this = self
        if let residual {
            // The keys ferry selected, in a temporary table the statements below test against.
            let keys = try connection.keys(of: entity, matching: residual, model: model, layout: layout)
            let selected = try createKeyTable("ferry_delete_selected", on: connection)
            selectedTable = selected
            try Self.insert(keys, into: selected, on: connection)
            this.predicate = layout.selection(
                of: entity, alias: "t0", where: "t0.\(pk) IN (SELECT pk FROM \(selected))")
        }
        return try this.deleteSelected(on: connection)
    }

    /// A temporary table of keys (`pk`, `round`), empty, indexed on `round`.
    private func createKeyTable(_ name: String, on connection: any DatabaseConnection) throws -> String {
        let dialect = layout.dialect
        let table = dialect.temporaryTable(name)
        try connection.execute("DROP TABLE IF EXISTS \(table)")
        try connection.execute(
            "CREATE TABLE \(table) (pk \(dialect.keyReferenceType) PRIMARY KEY, round INTEGER NOT NULL)")
        try connection.execute(dialect.createTemporaryIndex(name + "_round", on: name, column: "round"))
        return table
    }

    /// Inserts `keys` into a key table (round 0), a thousand at a time.
    private static func insert(_ keys: [Int64], into table: String, on connection: any DatabaseConnection) throws {
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + 1000, keys.count)]
            let values = Array(repeating: "(?, 0)", count: chunk.count).joined(separator: ", ")
            try connection.execute("INSERT INTO \(table) (pk, round) VALUES \(values)", chunk.map { .integer($0) })
            start += chunk.count
        }
    }

    /// Deletes what ``predicate`` selects, with the delete rules.
    private func deleteSelected(on connection: any DatabaseConnection) throws -> BatchDeleteResult {
        var result = BatchDeleteResult(entity: entity.name)
        let table = tableSQL(entity.name)
        if request.deleteRules == .ignore || isIsolated {
            if connection.failedStatementEndsTransaction {
                // A failed statement ends the transaction (PostgreSQL's): look for dangling references first.
                if let error = try danglingError(on: connection, onlyIfAny: true) { throw error }
            }
            // Join rows of the deleted objects go with them (a Core Data join table has no ON DELETE CASCADE).
            for relationship in entity.relationships {
                guard
                    case .joinTable(let link, let sourceColumn, _) = layout.storage(
                        of: relationship, in: entity, model: model)
                else { continue }
                try connection.execute(
                    "DELETE FROM \(quote(link)) WHERE \(quote(sourceColumn)) IN (SELECT t0.\(pk) FROM \(predicate.from) WHERE \(predicate.sql))",
                    predicate.arguments)
            }
            do {
                try connection.execute("DELETE FROM \(table) AS t0 WHERE \(predicate.sql)", predicate.arguments)
            } catch let error as FerryError where (error.underlying as? SQLiteResult)?.isForeignKeyConstraint == true {
                throw try danglingError(on: connection, onlyIfAny: false) ?? error
            }
            result.deleted[entity.name] = connection.changes
            return result
        }

        // 1. The selected keys, then cascades round by round to a fixpoint.
        var keyTables: [String: String] = [:]
        func keyTable(_ name: String) throws -> String {
            if let existing = keyTables[name] { return existing }
            let created = try createKeyTable("ferry_delete_\(keyTables.count)", on: connection)
            keyTables[name] = created
            return created
        }
        defer {
            for created in keyTables.values { try? connection.execute("DROP TABLE IF EXISTS \(created)") }
        }
        let start = try keyTable(entity.name)
        try connection.execute(
            "INSERT INTO \(start)(pk, round) SELECT t0.\(pk), 0 FROM \(predicate.from) WHERE \(predicate.sql)",
            predicate.arguments)
        var frontier: [String: Bool] = [entity.name: connection.changes > 0]
        var round = 0
        while frontier.values.contains(true) {
            var next: [String: Bool] = [:]
            for (name, hasNew) in frontier.sorted(by: { $0.key < $1.key }) where hasNew {
                guard let source = model.entity(named: name), let sourceKeys = keyTables[name] else { continue }
                for relationship in source.relationships where relationship.deleteRule == .cascade {
                    let targetKeys = try keyTable(relationship.destination)
                    let related = relatedKeys(
                        of: "(SELECT pk FROM \(sourceKeys) WHERE round = \(round))", via: relationship, in: source)
                    try connection.execute(
                        layout.dialect.insert(
                            into: targetKeys, columns: ["pk", "round"],
                            values: "SELECT k, \(round + 1) FROM (\(related)) AS r WHERE k IS NOT NULL",
                            onConflict: .ignore))
                    if connection.changes > 0 { next[relationship.destination] = true }
                }
            }
            frontier = next
            round += 1
        }

        func notDeleted(_ name: String, _ column: String) -> String {
            guard let keys = keyTables[name] else { return layout.dialect.trueCondition }
            return "\(column) NOT IN (SELECT pk FROM \(keys))"
        }

        // 2. deny: related objects that stay block the whole delete.
        for (name, keys) in keyTables.sorted(by: { $0.key < $1.key }) {
            guard let source = model.entity(named: name) else { continue }
            for relationship in source.relationships where relationship.deleteRule == .deny {
                let related = relatedKeys(of: "(SELECT pk FROM \(keys))", via: relationship, in: source)
                let count =
                    try connection.scalar(
                        "SELECT count(DISTINCT k) FROM (\(related)) AS r WHERE k IS NOT NULL AND \(notDeleted(relationship.destination, "k"))"
                    )?.int64 ?? 0
                if count > 0 {
                    let deleting = try connection.scalar("SELECT count(*) FROM \(keys)")?.int64 ?? 0
                    throw FerryError(
                        .constraint,
                        "cannot delete \(deleting) \(name) object\(deleting == 1 ? "" : "s"): relationship \(name).\(relationship.name) has delete rule deny and \(count) related \(relationship.destination) object\(count == 1 ? " refers" : "s refer") to them; nothing was deleted",
                        at: request.location)
                }
            }
        }

        // 3. nullify: clear the references of related objects that stay.
        for (name, keys) in keyTables.sorted(by: { $0.key < $1.key }) {
            guard let source = model.entity(named: name) else { continue }
            for relationship in source.relationships where relationship.deleteRule == .nullify {
                var storage = layout.storage(of: relationship, in: source, model: model)
                // A one-to-one stored on both sides (Core Data's): the related objects' own key back
                // to the deleted ones is what nullify clears.
                if let pair = CoreDataOneToOneMirror.pair(of: relationship, in: source, model: model, layout: layout) {
                    storage = .inverseForeignKey(
                        destinationTable: layout.table(for: pair.destination), column: pair.inverseColumn)
                }
                switch storage {
                case .foreignKey:
                    continue  // the key is in the deleted row itself
                case .inverseForeignKey(let destinationTable, let column):
                    let destination = quote(destinationTable)
                    let destinationEntity = relationship.destination
                    let condition =
                        "\(quote(column)) IN (SELECT pk FROM \(keys)) AND \(notDeleted(destinationEntity, pk))"
                    let inverse = model.inverse(of: relationship, in: source)
                    if let inverse, !inverse.isOptional {
                        let count =
                            try connection.scalar("SELECT count(*) FROM \(destination) WHERE \(condition)")?.int64 ?? 0
                        if count > 0 {
                            throw FerryError(
                                .constraint,
                                "cannot nullify \(name).\(relationship.name): \(count) \(destinationEntity) object\(count == 1 ? "" : "s") would lose \(destinationEntity).\(inverse.name), which is required; nothing was deleted",
                                at: request.location,
                                notes: [
                                    "give \(name).\(relationship.name) delete rule cascade, or delete or reassign those \(destinationEntity) objects first"
                                ])
                        }
                    }
                    let cleared =
                        inverse.map { nullified(column, of: $0, in: destinationEntity) } ?? "\(quote(column)) = NULL"
                    try connection.execute("UPDATE \(destination) SET \(cleared) WHERE \(condition)")
                    if connection.changes > 0 {
                        result.nullified["\(destinationEntity).\(inverse?.name ?? column)", default: 0] +=
                            connection.changes
                    }
                case .joinTable(let link, let sourceColumn, let targetColumn):
                    // Rows whose other end is deleted too go with it (ON DELETE CASCADE): not a nullification.
                    try connection.execute(
                        "DELETE FROM \(quote(link)) WHERE \(quote(sourceColumn)) IN (SELECT pk FROM \(keys)) AND \(notDeleted(relationship.destination, quote(targetColumn)))"
                    )
                    if connection.changes > 0 {
                        result.nullified["\(name).\(relationship.name)", default: 0] += connection.changes
                    }
                }
            }
        }

        // 4. References without an inverse on the deleted side are nullified when optional.
        for key in foreignKeys where key.relationship.inverse == nil {
            guard let keys = keyTables[key.destination], key.relationship.isOptional else { continue }
            try connection.execute(
                "UPDATE \(tableSQL(key.entity.name)) SET \(nullified(key.column, of: key.relationship, in: key.entity.name)) WHERE \(quote(key.column)) IN (SELECT pk FROM \(keys)) AND \(notDeleted(key.entity.name, pk))"
            )
            if connection.changes > 0 {
                result.nullified["\(key.entity.name).\(key.relationship.name)", default: 0] += connection.changes
            }
        }

        // 5. Anything that would still dangle (no_action, required references) stops the delete.
        for key in foreignKeys {
            guard let keys = keyTables[key.destination] else { continue }
            let count =
                try connection.scalar(
                    "SELECT count(*) FROM \(tableSQL(key.entity.name)) WHERE \(quote(key.column)) IN (SELECT pk FROM \(keys)) AND \(notDeleted(key.entity.name, pk))"
                )?.int64 ?? 0
            guard count > 0 else { continue }
            let inverse = model.inverse(of: key.relationship, in: key.entity)
            let rule =
                inverse.map { "delete rule \($0.deleteRule.rawValue) of \(key.destination).\($0.name)" }
                ?? "no inverse relationship and \(key.entity.name).\(key.relationship.name) is required"
            throw FerryError(
                .constraint,
                "cannot delete the \(key.destination) objects: \(count) \(key.entity.name) object\(count == 1 ? " still refers" : "s still refer") to them through \(key.entity.name).\(key.relationship.name) (\(rule)), and the store's foreign keys forbid dangling references; nothing was deleted",
                at: request.location)
        }

        // 6. Delete, with foreign keys checked at commit so that the order of entities does not matter.
        try connection.execute(layout.dialect.deferForeignKeysStatement)
        for (name, keys) in keyTables.sorted(by: { $0.key < $1.key }) {
            // Join rows of deleted objects go with them (a Core Data join table has no ON DELETE CASCADE).
            for relationship in model.entity(named: name)?.relationships ?? [] {
                guard let source = model.entity(named: name),
                    case .joinTable(let link, let sourceColumn, _) = layout.storage(
                        of: relationship, in: source, model: model)
                else { continue }
                try connection.execute(
                    "DELETE FROM \(quote(link)) WHERE \(quote(sourceColumn)) IN (SELECT pk FROM \(keys))")
            }
            try connection.execute("DELETE FROM \(tableSQL(name)) WHERE \(pk) IN (SELECT pk FROM \(keys))")
            if connection.changes > 0 || name == entity.name { result.deleted[name] = connection.changes }
        }
        return result
    }

    /// The assignments clearing the to-one `relationship` of the entity named `entity` (stored in
    /// `column`): the key, and in a Core Data store also the target's entity number and the
    /// order beside it, with one more change counted in the row's version.
    private func nullified(_ column: String, of relationship: RelationshipDescription, in entity: String) -> String {
        var assignments = ["\(quote(column)) = NULL"]
        if let source = model.entity(named: entity) {
            if let entityColumn = layout.entityColumn(forForeignKeyOf: relationship, in: source, model: model) {
                assignments.append("\(quote(entityColumn)) = NULL")
            }
            if model.inverse(of: relationship, in: source).map({ $0.isToMany && $0.isOrdered }) == true,
                let order = layout.orderColumn(besideForeignKey: column)
            {
                assignments.append("\(quote(order)) = NULL")
            }
        }
        if let increment = layout.versionIncrement { assignments.append(increment) }
        return assignments.joined(separator: ", ")
    }

    /// A query with one column `k`: the keys of the objects related through `relationship` to
    /// the objects of `source` whose keys `keys` (a subquery) selects.
    private func relatedKeys(
        of keys: String, via relationship: RelationshipDescription, in source: EntityDescription
    ) -> String {
        switch layout.storage(of: relationship, in: source, model: model) {
        case .foreignKey(let column):
            return "SELECT s.\(quote(column)) AS k FROM \(tableSQL(source.name)) AS s WHERE s.\(pk) IN \(keys)"
        case .inverseForeignKey(let destinationTable, let column):
            return "SELECT d.\(pk) AS k FROM \(quote(destinationTable)) AS d WHERE d.\(quote(column)) IN \(keys)"
        case .joinTable(let link, let sourceColumn, let targetColumn):
            return
                "SELECT l.\(quote(targetColumn)) AS k FROM \(quote(link)) AS l WHERE l.\(quote(sourceColumn)) IN \(keys)"
        }
    }

    /// For `delete_rules: ignore`: which foreign keys refer to the selected objects, and how
    /// often; with `onlyIfAny`, nil when none does.
    private func danglingError(on connection: any DatabaseConnection, onlyIfAny: Bool) throws -> FerryError? {
        var parts: [String] = []
        for key in foreignKeys where key.destination == entity.name {
            let count =
                try connection.scalar(
                    "SELECT count(*) FROM \(tableSQL(key.entity.name)) AS r WHERE r.\(quote(key.column)) IN (SELECT t0.\(pk) FROM \(predicate.from) WHERE \(predicate.sql))",
                    predicate.arguments)?.int64 ?? 0
            if count > 0 {
                parts.append(
                    "\(count) \(key.entity.name) object\(count == 1 ? "" : "s") through \(key.entity.name).\(key.relationship.name)"
                )
            }
        }
        if onlyIfAny && parts.isEmpty { return nil }
        return FerryError(
            .constraint,
            "with delete_rules: ignore only the selected \(entity.name) objects are deleted, but other objects still refer to them (\(parts.isEmpty ? "a foreign key" : parts.joined(separator: ", "))) and the store's foreign keys forbid dangling references; nothing was deleted",
            at: request.location,
            notes: [
                "apply the model's delete rules (delete_rules: apply), or delete or reassign the referring objects first"
            ])
    }
}
