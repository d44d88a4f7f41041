import FerryCore
import FerryPostgres

/// One version step of a PostgreSQL store's migration as SQL the server runs itself: per entity
/// mapping one `INSERT INTO "next"."table" (…) SELECT … FROM table AS t0`, per carried
/// many-to-many relationship one `INSERT … SELECT` into its join table. Nothing is read into
/// ferry: the rows go from schema to schema inside the server.
///
/// `route(for:options:)` is the one decision between this path and the snapshot path (the SQLite
/// engine on a private copy): a step runs in the server only when every value it writes is
/// computed exactly by PostgreSQL as ferry computes it, and when nothing in it needs Swift.
/// Each entity mapping must keep its objects one to one (no policy, no `distinct`), each
/// attribute be a copy of a source attribute of the same type or an exact widening
/// (integer → wider integer, `numeric`, `double` or text; `float` → `double`; `uri` → `string`),
/// a constant, or a default for nil; each relationship a carried or key-path link between
/// objects that keep their keys; a filter any predicate (compiled to PostgreSQL). Expressions,
/// checked narrowings, policies and stage hooks go through the snapshot path, which runs them
/// exactly as on SQLite; so do validation rules a step before the last may break (the last
/// step's are checked on the new version, as on SQLite).
struct PostgresServerStep {
    /// One entity mapping as SQL over the source schema (found through the `search_path`).
    struct EntityCopy {
        let mapping: MappingModel.EntityMapping
        let destination: EntityDescription
        /// The source entity; nil for a new entity, which starts empty.
        let source: EntityDescription?
        /// Destination columns (quoted), aligned with `values`.
        let columns: [String]
        /// The SQL of each column's value over the source row `t0`.
        let values: [String]
        let arguments: [DatabaseValue]
        let filter: PredicateSQL?
        /// Source → destination attributes copied as they are: their values must compare equal.
        let unchanged: [(source: String, destination: String)]
        /// Destination attributes the mapping transforms (constants, conversions, defaults for nil).
        let notComparable: [String]
        /// Source → destination to-one key columns copied as they are.
        let keptForeignKeys: [(source: String, destination: String)]

        /// The statement filling the destination table in `schema`; nil for a new entity.
        func insertSQL(into schema: String, layout: FerryLayout) -> EntityPlan.SQLText? {
            guard let rows = rowsSQL(layout: layout) else { return nil }
            return EntityPlan.SQLText(
                text:
                    "INSERT INTO \(layout.dialect.qualified(layout.table(for: destination), in: schema)) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) \(rows.text)",
                arguments: arguments + rows.arguments)
        }

        /// The statement creating the destination table of `model` (the stored form) in `schema` from the rows
        /// (`CREATE TABLE … AS SELECT`, its columns as `StoreSchema` defines them; the rest
        /// comes with `StoreSchema.completionStatement`); nil for a new entity, or when the
        /// table cannot be made so.
        func createTableSQL(into schema: String, model: ObjectModel, layout: FerryLayout) -> EntityPlan.SQLText? {
            guard let rows = rowsSQL(layout: layout), let stored = model.entity(named: destination.name),
                let text = StoreSchema.createTableAsSelect(
                    stored, in: model, layout: layout, schema: schema,
                    values: zip(columns, values).map { ($0, $1) }, from: rows.text)
            else { return nil }
            return EntityPlan.SQLText(text: text, arguments: arguments + rows.arguments)
        }

        /// `FROM` the source's rows `AS t0`, and the filter's `WHERE`; nil for a new entity.
        private func rowsSQL(layout: FerryLayout) -> EntityPlan.SQLText? {
            guard let source else { return nil }
            var text = "FROM \(layout.quotedOwnRows(for: source)) AS t0"
            var all: [DatabaseValue] = []
            if let filter {
                text += " WHERE \(filter.sql)"
                all = filter.arguments
            }
            return EntityPlan.SQLText(text: text, arguments: all)
        }
    }

    /// One join table filled from the source's links: its name, its two columns, and the
    /// `SELECT` of (owner, target) key pairs over the source schema.
    struct LinkCopy {
        let table: String
        let columns: [String]
        let pairs: String
    }

    let mapping: MappingModel
    let entities: [EntityCopy]
    let links: [LinkCopy]

    var source: ObjectModel { mapping.source }
    var destination: ObjectModel { mapping.destination }

    /// Why a step cannot run in the server.
    struct Refusal: Error, Equatable {
        let reason: String
    }

    private static let layout = FerryLayout.postgreSQL

    /// The oldest server (as `server_version_num`) the in-server path runs on: its checks sum
    /// `hash_record_extended`, new in PostgreSQL 14.
    static let minimumServerVersion = 140_000

    /// Every step of a migration as SQL the server runs, or the reason the migration needs the
    /// snapshot path (the first step that does: the steps run on one path or the other). A
    /// `serverVersion` (the server's `server_version_num`) below ``minimumServerVersion`` sends
    /// every migration through the snapshot path; nil means it is not known and not checked.
    static func route(
        for steps: [MappingModel], options: MigrationOptions, serverVersion: Int? = nil
    ) -> Result<[PostgresServerStep], Refusal> {
        if let serverVersion, serverVersion < minimumServerVersion {
            return .failure(
                Refusal(
                    reason:
                        "the server runs PostgreSQL \(serverVersion / 10_000) (server_version_num \(serverVersion)); the in-server path needs 14 or later (hash_record_extended)"
                ))
        }
        var made: [PostgresServerStep] = []
        for (index, mapping) in steps.enumerated() {
            switch make(mapping, options: options) {
            case .success(let step): made.append(step)
            case .failure(let refusal): return .failure(refusal)
            }
            // Rules are checked on the new version once it is built; a step between two versions
            // leaves nothing to check them on.
            if index < steps.count - 1,
                let entity = mapping.destination.entities.first(where: { mapping.mayBreakValidationRules(of: $0) })
            {
                return .failure(
                    Refusal(
                        reason:
                            "step \(mapping.source.version) → \(mapping.destination.version) may break a validation rule of \(entity.name), and a later step follows"
                    ))
            }
        }
        return .success(made)
    }

    /// The step as SQL the server runs, or the reason it needs the snapshot path.
    static func make(_ mapping: MappingModel, options: MigrationOptions) -> Result<PostgresServerStep, Refusal> {
        do {
            return .success(try PostgresServerStep(mapping, options: options))
        } catch let refusal as Refusal {
            return .failure(refusal)
        } catch let error as FerryError {
            // The snapshot path reports such an error as SQLite does, naming the mapping file.
            return .failure(Refusal(reason: error.message))
        } catch {
            return .failure(Refusal(reason: "\(error)"))
        }
    }

    private init(_ mapping: MappingModel, options: MigrationOptions) throws {
        self.mapping = mapping
        let step = "step \(mapping.source.version) → \(mapping.destination.version)"
        if options.registry.stageHooks(from: mapping.source.version, to: mapping.destination.version) != nil {
            throw Refusal(reason: "\(step) has stage hooks (Swift)")
        }
        var entities: [EntityCopy] = []
        for entityMapping in mapping.entities {
            entities.append(try Self.entityCopy(entityMapping, in: mapping, step: step))
        }
        self.entities = entities
        self.links = try Self.linkCopies(in: mapping, step: step)
    }

    // MARK: - Entity mappings

    private static func entityCopy(
        _ entityMapping: MappingModel.EntityMapping, in mapping: MappingModel, step: String
    ) throws -> EntityCopy {
        let name = "\(step), mapping \(entityMapping.name)"
        if entityMapping.policy != nil { throw Refusal(reason: "\(name) has a custom policy (Swift)") }
        if entityMapping.distinct != nil { throw Refusal(reason: "\(name) makes one object per distinct value") }
        guard let destination = mapping.destination.entity(named: entityMapping.destination) else {
            throw Refusal(reason: "\(name): no destination entity '\(entityMapping.destination)'")
        }
        guard let sourceName = entityMapping.source else {
            return EntityCopy(
                mapping: entityMapping, destination: destination, source: nil, columns: [], values: [], arguments: [],
                filter: nil, unchanged: [], notComparable: [], keptForeignKeys: [])
        }
        guard let source = mapping.source.entity(named: sourceName) else {
            throw Refusal(reason: "\(name): no source entity '\(sourceName)'")
        }
        let quote = layout.dialect.quote
        let key = quote(layout.keyColumn)
        var columns = [key]
        var values = ["t0.\(key)"]
        var arguments: [DatabaseValue] = []
        var unchanged: [(String, String)] = []
        var notComparable: [String] = []
        let coding = PostgresValueCoding()
        for attribute in destination.attributes {
            let rule =
                entityMapping.attribute(named: attribute.name)?.value ?? .constant(attribute.defaultValue ?? .null)
            let type = layout.dialect.columnType(for: attribute.type, storedAs: .text)
            columns.append(layout.quotedColumn(forAttribute: attribute.name, in: destination))
            switch rule {
            case .constant(let value):
                if value.isNull {
                    values.append("NULL")
                } else {
                    values.append("CAST(? AS \(type))")
                    arguments.append(coding.encode(value))
                }
                if entityMapping.attribute(named: attribute.name) != nil { notComparable.append(attribute.name) }
            case .copy(let sourceAttributeName, let conversion, let valueIfNil):
                guard let sourceAttribute = source.attribute(named: sourceAttributeName) else {
                    throw Refusal(reason: "\(name): \(source.name) has no attribute '\(sourceAttributeName)'")
                }
                var text = "t0.\(layout.quotedColumn(forAttribute: sourceAttributeName, in: source))"
                if let conversion {
                    guard exactlyInServer(conversion) else {
                        throw Refusal(
                            reason:
                                "\(name): \(attribute.name) converts \(conversion.from.rawValue) → \(conversion.to.rawValue) in Swift"
                        )
                    }
                    text = "CAST(\(text) AS \(type))"
                } else if sourceAttribute.type != attribute.type {
                    throw Refusal(
                        reason:
                            "\(name): \(attribute.name) is copied from a \(sourceAttribute.type.rawValue) into a \(attribute.type.rawValue)"
                    )
                }
                if !valueIfNil.isNull {
                    text = "COALESCE(\(text), CAST(? AS \(type)))"
                    arguments.append(coding.encode(valueIfNil))
                }
                values.append(text)
                if conversion == nil && (valueIfNil.isNull || !sourceAttribute.isOptional) {
                    unchanged.append((sourceAttributeName, attribute.name))
                } else {
                    notComparable.append(attribute.name)
                }
            case .expression:
                throw Refusal(reason: "\(name): \(attribute.name) is an expression (computed in Swift)")
            }
        }
        var keptForeignKeys: [(String, String)] = []
        for relationship in destination.relationships {
            guard
                case .foreignKey(let column) = layout.storage(
                    of: relationship, in: destination, model: mapping.destination)
            else { continue }
            columns.append(quote(column))
            let rule = entityMapping.relationship(named: relationship.name)?.value ?? .none
            switch rule {
            case .none:
                values.append("NULL")
            case .carry(let sourceRelationshipName):
                guard let sourceRelationship = source.relationship(named: sourceRelationshipName) else {
                    throw Refusal(reason: "\(name): \(source.name) has no relationship '\(sourceRelationshipName)'")
                }
                try requireKeptKeys(
                    of: sourceRelationship.destination, into: relationship.destination, in: mapping, for: name)
                if let kept = EntityPlan.keptLinkSQL(
                    sourceRelationship, becoming: relationship, in: source, sourceModel: mapping.source,
                    destinationModel: mapping.destination, layout: layout)
                {
                    values.append(kept)
                } else {
                    values.append(
                        EntityPlan.relatedKeySQL(sourceRelationship, in: source, model: mapping.source, layout: layout))
                    if case .foreignKey(let sourceColumn) = layout.storage(
                        of: sourceRelationship, in: source, model: mapping.source)
                    {
                        keptForeignKeys.append((sourceColumn, column))
                    }
                }
            case .keyPath(let path):
                var entity = source
                for hop in path {
                    guard let relationship = entity.relationship(named: hop), !relationship.isToMany,
                        let next = mapping.source.entity(named: relationship.destination)
                    else {
                        throw Refusal(reason: "\(name): \(path.joined(separator: ".")) is not a chain of to-ones")
                    }
                    entity = next
                }
                try requireKeptKeys(of: entity.name, into: relationship.destination, in: mapping, for: name)
                values.append(
                    EntityPlan.keyPathSQL(path, in: source, model: mapping.source, layout: layout, selectingKey: true))
            case .fromMapping(let target):
                guard let targetMapping = mapping.entity(named: target), keepsKeys(targetMapping) else {
                    throw Refusal(reason: "\(name): \(relationship.name) links to objects mapping \(target) makes anew")
                }
                values.append("t0.\(key)")
            }
        }
        var filter: PredicateSQL?
        if let text = entityMapping.filter {
            let predicate = try Predicate(format: text, location: entityMapping.filterLocation)
            let compiled = try predicate.postgresFilter(for: source, model: mapping.source, layout: layout, alias: "t0")
            guard compiled.isExact else {
                throw Refusal(reason: "\(name): its filter needs ferry's own evaluation (\(text))")
            }
            filter = compiled.sql
        }
        return EntityCopy(
            mapping: entityMapping, destination: destination, source: source, columns: columns, values: values,
            arguments: arguments, filter: filter, unchanged: unchanged, notComparable: notComparable,
            keptForeignKeys: keptForeignKeys)
    }

    /// The conversions PostgreSQL computes exactly as ferry does (the same value, the same text).
    static func exactlyInServer(_ conversion: TypeConversion) -> Bool {
        guard !conversion.isChecked else { return false }
        let integers: Set<AttributeType> = [.int16, .int32, .int64]
        switch (conversion.from, conversion.to) {
        case (let from, let to) where integers.contains(from) && (integers.contains(to) || to == .decimal):
            return true
        case (let from, .string) where integers.contains(from): return true
        case (.int16, .double), (.int32, .double), (.float, .double), (.uri, .string): return true
        default: return false
        }
    }

    /// True when the mapping keeps each object and its key: one object per source object, all of them.
    private static func keepsKeys(_ entityMapping: MappingModel.EntityMapping) -> Bool {
        entityMapping.source != nil && entityMapping.policy == nil && entityMapping.distinct == nil
            && entityMapping.filter == nil
    }

    /// Throws unless every object of `sourceEntity` that becomes a `destinationEntity` keeps its
    /// key (so a link is its source key as it is): each such mapping copies all objects one to one.
    private static func requireKeptKeys(
        of sourceEntity: String, into destinationEntity: String, in mapping: MappingModel, for name: String
    ) throws {
        let candidates = mapping.entities.filter {
            $0.source == sourceEntity && $0.destination == destinationEntity
        }
        guard !candidates.isEmpty, candidates.allSatisfy(keepsKeys),
            mapping.entities.filter({ $0.destination == destinationEntity }).count == candidates.count
        else {
            throw Refusal(
                reason: "\(name): links to \(destinationEntity) objects that do not all keep their source's keys")
        }
    }

    // MARK: - Join tables

    private static func linkCopies(in mapping: MappingModel, step: String) throws -> [LinkCopy] {
        var links: [LinkCopy] = []
        var done: Set<String> = []
        for entityMapping in mapping.entities {
            guard let sourceName = entityMapping.source, let source = mapping.source.entity(named: sourceName),
                let destination = mapping.destination.entity(named: entityMapping.destination)
            else { continue }
            for relationshipMapping in entityMapping.relationships {
                guard case .carry(let sourceRelationshipName) = relationshipMapping.value,
                    let relationship = destination.relationship(named: relationshipMapping.destination),
                    case .joinTable(let table, let sourceColumn, let targetColumn) = layout.storage(
                        of: relationship, in: destination, model: mapping.destination),
                    !done.contains(table),
                    let sourceRelationship = source.relationship(named: sourceRelationshipName)
                else { continue }
                done.insert(table)
                let name = "\(step), mapping \(entityMapping.name)"
                try requireKeptKeys(of: source.name, into: destination.name, in: mapping, for: name)
                try requireKeptKeys(
                    of: sourceRelationship.destination, into: relationship.destination, in: mapping, for: name)
                let pairs = EntityPlan.pairsSQL(
                    of: sourceRelationship, in: source, model: mapping.source, layout: layout)
                links.append(
                    LinkCopy(
                        table: table, columns: [sourceColumn, targetColumn],
                        pairs: "SELECT DISTINCT p.owner, p.target FROM (\(pairs)) AS p"))
            }
        }
        return links
    }
}
