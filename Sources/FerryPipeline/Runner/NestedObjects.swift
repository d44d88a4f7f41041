import FerryCore
import FerryFormats

/// The related objects a JSON record nests (`nested:` on an import step): a nested object of a
/// to-one relationship, an array of objects of a to-many, or keys (`"company_id": 3`,
/// `"tags_ids": [1, 2]`, or keys in place of the objects) that link existing objects.
///
/// Nested objects are matched with the store's by their entity's key (as `mode: sync` finds
/// keys: the user info's primary key, `remoteID` with `key_style: snake_case`, else the first
/// uniqueness constraint of attributes) and updated, else inserted; then linked. A record and
/// everything it nests are written under a savepoint: a reject anywhere in it rolls the whole
/// record back. Where savepoints are dear (PostgreSQL), several records share one: a rejected
/// record rolls back to it, and the records written under it before are written again. Plans for nested entities are made on first use, so a model with cycles costs
/// nothing until a record nests that deep, and ``NestedOptions/maxDepth`` bounds the recursion.
/// The statements themselves are the backend's (``NestedStore``): SQLite's or PostgreSQL's.
final class NestedObjects {
    /// What happened to one related entity's objects in the step.
    struct Counts: Equatable {
        var inserted = 0
        var updated = 0
        var unchanged = 0
        /// Links the records set (to a nested object or to an object named by key).
        var linked = 0
        var unlinked = 0
    }

    typealias Failure = ImportPlan.Failure

    /// How a relationship of an entity reads its nested value, and how it links.
    final class Link {
        let source: EntityDescription
        let relationship: RelationshipDescription
        let destination: EntityDescription
        /// The field with the nested object(s) or key(s), and the one with keys only (`company_id`, `tags_ids`).
        let field: String
        let keysField: String
        let storage: RelationshipStorage
        /// The depth of the objects this link reaches (the record's own links: 1).
        let depth: Int
        /// For a to-one stored in the source's table: the inserter column holding the key.
        var column: Int?
        /// For the top-level entity: the reader's indexes of ``field`` and ``keysField``.
        var fieldIndexes: (field: Int, keys: Int)?
        /// The plan of the destination's objects reached through this link (made on first use).
        var node: Node?
        /// The statement linking a related object outside the parent's row (made on first use).
        var connect: NestedStatement?

        init(
            source: EntityDescription, relationship: RelationshipDescription, destination: EntityDescription,
            keyStyle: SourceKeyStyle, storage: RelationshipStorage, depth: Int
        ) {
            self.source = source
            self.relationship = relationship
            self.destination = destination
            field = keyStyle.fieldName(for: relationship)
            // Sync's convention: `company_id` for a to-one, `notes_ids` for a to-many.
            keysField =
                (keyStyle == .snakeCase ? SourceKeyStyle.snakeCased(relationship.name) : relationship.name)
                + (relationship.isToMany ? "_ids" : "_id")
            self.storage = storage
            self.depth = depth
        }
    }

    /// The objects of one entity nested through one link: their columns, inserter, key lookup
    /// and their own links.
    final class Node {
        let entity: EntityDescription
        let attributes: [(attribute: AttributeDescription, field: String)]
        let links: [Link]
        /// The column of the to-one on this entity that points back to the parent (an inverse foreign key).
        let parentColumn: Int?
        let key: [String]?
        /// Makes the inserter of nested objects on the first one: an abstract entity's objects
        /// can be linked by key, but none can be inserted (a record nesting one is rejected).
        private let makeInserter: () throws -> any KeyedRecordInserting
        private var madeInserter: (any KeyedRecordInserting)?
        let keyLookup: NestedStatement?
        let columnCount: Int

        init(link: Link, context: NestedObjects) throws {
            let entity = link.destination
            self.entity = entity
            attributes = entity.attributes.map { ($0, context.keyStyle.fieldName(for: $0)) }
            let inverse = context.model.inverse(of: link.relationship, in: link.source)
            links = Self.links(
                of: entity, excluding: inverse.map { [$0.name] } ?? [], firstColumn: attributes.count,
                depth: link.depth + 1, context: context)
            var columns =
                attributes.map { InsertColumn.attribute($0.attribute.name) }
                + links.compactMap { $0.column == nil ? nil : InsertColumn.relationship($0.relationship.name) }
            if case .inverseForeignKey = link.storage, let inverse {
                parentColumn = columns.count
                columns.append(.relationship(inverse.name))
            } else {
                parentColumn = nil
            }
            columnCount = columns.count
            let key = SyncKey.modelKey(of: entity, keyStyle: context.keyStyle)
            self.key = key
            let store = context.store
            let policy: ConflictPolicy = key == nil ? .error : (context.policy == .replace ? .replace : .update)
            let validate = context.validate
            makeInserter = {
                try store.inserter(
                    entity: entity.name, columns: columns, policy: policy, validate: validate, matchKey: key)
            }
            if let key, key.count == 1 {
                let layout = context.layout
                keyLookup = try context.store.statement(
                    "SELECT \(layout.dialect.quote(layout.keyColumn)) FROM \(layout.quotedSource(for: entity)) WHERE \(layout.quotedColumn(forAttribute: key[0], in: entity)) = ? LIMIT 1"
                )
            } else {
                keyLookup = nil
            }
        }

        /// The inserter of the entity's nested objects, made on first use.
        func inserter() throws -> any KeyedRecordInserting {
            if let madeInserter { return madeInserter }
            let made = try makeInserter()
            madeInserter = made
            return made
        }

        /// The links of an entity's relationships, but those in `excluding`; the to-one keys
        /// stored in the entity's table take the inserter columns from `firstColumn` on.
        static func links(
            of entity: EntityDescription, excluding: [String], firstColumn: Int, depth: Int, context: NestedObjects
        ) -> [Link] {
            var links: [Link] = []
            var column = firstColumn
            for relationship in entity.relationships where !excluding.contains(relationship.name) {
                guard let destination = context.model.entity(named: relationship.destination) else { continue }
                let link = Link(
                    source: entity, relationship: relationship, destination: destination, keyStyle: context.keyStyle,
                    storage: context.layout.storage(of: relationship, in: entity, model: context.model), depth: depth)
                if case .foreignKey = link.storage {
                    link.column = column
                    column += 1
                }
                links.append(link)
            }
            return links
        }
    }

    let store: any NestedStore
    let model: ObjectModel
    let layout: any StoreLayout
    let keyStyle: SourceKeyStyle
    let coercion: CoercionOptions
    let policy: ConflictPolicy
    let validate: Bool
    /// A sync: a nested to-many array is the whole set, related objects absent from it are unlinked.
    let replacesSets: Bool
    let maxDepth: Int
    /// A sync's tracker of the step's entity: its objects nested in records are in the source too.
    let sync: SyncTracker?
    let entityName: String
    /// The step's entity's links.
    private(set) var links: [Link] = []
    /// Counts per related entity, of the records written so far (a rejected record's are dropped).
    var counts: [String: Counts] = [:]
    private var pending: [String: Counts] = [:]
    /// A record written under the open savepoint, as it was given (written again when a later
    /// record sharing the savepoint is rolled back).
    private struct WrittenRecord {
        let record: SourceRecord
        let values: [Value]
        let supplied: [Bool]
        let suppliedMatters: Bool
    }
    private var written: [WrittenRecord] = []
    private(set) var savepointOpen = false
    /// The records written under the open savepoint.
    private var recordsUnderSavepoint = 0
    /// How many records the open savepoint takes before it is released: doubles after each
    /// savepoint released without a rejection, up to ``savepointLimit``; 1 after a rejection.
    private var recordsPerSavepoint = 1
    /// The most records one savepoint takes: the store's maximum, but 1 when the step maps
    /// `relationships:`, whose keys were looked up before the record was written (written
    /// again, an earlier record of the savepoint would give its objects other keys).
    private let storeSavepointLimit: Int
    private var savepointLimit: Int { batch?.isActive == true ? 1 : storeSavepointLimit }
    /// PostgreSQL's batch writer of the records that fit it (``NestedBatch``); nil on SQLite and
    /// for steps it cannot take.
    private(set) var batch: NestedBatch?

    /// The nested relationships of the step's entity, but those `relationships:` maps; their
    /// to-one keys take the top-level inserter's columns from `firstColumn` on.
    init(
        step: ImportStep, options: NestedOptions, entity: EntityDescription, reader: any RecordReader,
        store: any NestedStore, model: ObjectModel, layout: any StoreLayout,
        firstColumn: Int, sync: SyncTracker?
    ) {
        self.store = store
        storeSavepointLimit = step.relationships.isEmpty ? store.maximumRecordsPerSavepoint : 1
        self.model = model
        self.layout = layout
        keyStyle = step.keyStyle
        coercion = step.coercion
        policy = step.onConflict
        validate = step.validate
        replacesSets = step.mode == .sync
        maxDepth = options.maxDepth
        self.sync = sync
        entityName = entity.name
        links = Node.links(
            of: entity, excluding: step.relationships.map(\.relationship), firstColumn: firstColumn, depth: 1,
            context: self)
        for link in links {
            link.fieldIndexes = (reader.fieldIndex(of: link.field), reader.fieldIndex(of: link.keysField))
        }
        batch = NestedBatch(step: step, entity: entity, store: store, layout: layout, model: model)
    }

    /// The columns the top-level inserter adds for to-one links.
    var insertColumns: [InsertColumn] {
        links.compactMap { $0.column == nil ? nil : .relationship($0.relationship.name) }
    }
    /// The fields the links read.
    var fieldNames: [String] { links.flatMap { [$0.field, $0.keysField] } }

    // MARK: - Writing a record

    /// Writes a record whose attribute values `fill` put in `values`, with everything it nests,
    /// under a savepoint: a failure or a rejected outcome anywhere rolls the record back.
    func write(
        record: SourceRecord, values: inout [Value], supplied: inout [Bool], inserter: any KeyedRecordInserting,
        suppliedMatters: Bool
    ) throws -> Result<InsertOutcome, Failure> {
        if let batch, batch.isActive {
            if savepointOpen { try releaseSavepoint() }
            if let result = try batch.write(
                record, values: values, supplied: suppliedMatters ? supplied : nil, inserter: inserter, in: self)
            {
                return result
            }
            // Written on its own, as without the batch: what the batch kept goes first.
            try batch.writeKept(in: self)
            batch.recordWrittenAlone()
        }
        if !savepointOpen {
            try store.beginSavepoint()
            savepointOpen = true
        }
        let given = savepointLimit > 1 ? (values, supplied) : nil
        pending.removeAll(keepingCapacity: true)
        let result = try writeRecord(
            record, values: &values, supplied: &supplied, inserter: inserter, suppliedMatters: suppliedMatters)
        if Self.stays(result) {
            for (entity, count) in pending { counts[entity, default: Counts()].add(count) }
            if let given {
                written.append(
                    WrittenRecord(
                        record: record, values: given.0, supplied: given.1, suppliedMatters: suppliedMatters))
            }
            recordsUnderSavepoint += 1
            if recordsUnderSavepoint >= recordsPerSavepoint {
                try releaseSavepoint()
                recordsPerSavepoint = min(recordsPerSavepoint * 2, savepointLimit)
            }
        } else {
            // A rejected record leaves nothing; nor does one `on_conflict: keep` skipped.
            try store.rollBackSavepoint()
            try writeAgain(inserter: inserter)
            try releaseSavepoint()
            recordsPerSavepoint = 1
        }
        return result
    }

    /// Whether what a record wrote stays: not when it was rejected or skipped (`on_conflict: keep`).
    private static func stays(_ result: Result<InsertOutcome, Failure>) -> Bool {
        guard case .success(let outcome) = result else { return false }
        return !outcome.isRejected && outcome != .skipped
    }

    /// Writes the records of the savepoint rolled back again, in the same order into the same
    /// store, so with the same outcomes (their counts are in already).
    private func writeAgain(inserter: any KeyedRecordInserting) throws {
        for entry in written {
            var values = entry.values
            var supplied = entry.supplied
            pending.removeAll(keepingCapacity: true)
            let result = try writeRecord(
                entry.record, values: &values, supplied: &supplied, inserter: inserter,
                suppliedMatters: entry.suppliedMatters)
            guard Self.stays(result) else {
                throw FerryError(
                    .internal,
                    "record \(entry.record.number) was written, then refused when written again after a later record was rolled back"
                )
            }
        }
        pending.removeAll(keepingCapacity: true)
    }

    func releaseSavepoint() throws {
        try store.releaseSavepoint()
        savepointOpen = false
        recordsUnderSavepoint = 0
        written.removeAll(keepingCapacity: true)
    }

    /// Call at the start of each of the step's transactions: the last one ended any savepoint.
    func beginTransaction() {
        batch?.beginTransaction()
        savepointOpen = false
        recordsUnderSavepoint = 0
        written.removeAll(keepingCapacity: true)
        recordsPerSavepoint = 1
    }

    private func writeRecord(
        _ record: SourceRecord, values: inout [Value], supplied: inout [Bool], inserter: any KeyedRecordInserting,
        suppliedMatters: Bool
    ) throws -> Result<InsertOutcome, Failure> {
        var nested: [(link: Link, value: LocatedJSON?, keys: LocatedJSON?)] = []
        for link in links {
            guard let indexes = link.fieldIndexes else { continue }
            var located: [LocatedJSON?] = []
            for (index, name) in [(indexes.field, link.field), (indexes.keys, link.keysField)] {
                guard let field = record[index] else {
                    located.append(nil)
                    continue
                }
                // A field is there: never taken as absent (a nested value of 4 GiB or more).
                guard let value = LocatedJSON.value(of: field, in: record) else {
                    return .failure(
                        Failure(
                            field: name, line: field.line, column: field.column,
                            reason: "the nested value cannot be read (4 GiB or more)"))
                }
                located.append(value)
            }
            nested.append((link, located[0], located[1]))
        }
        // To-ones stored in the record's own row: their objects first.
        for item in nested {
            guard let column = item.link.column else { continue }
            guard let given = item.value ?? item.keys else {
                values[column] = .null
                supplied[column] = false
                continue
            }
            let path = item.value != nil ? item.link.field : item.link.keysField
            switch try toOneKey(item.link, given, path: path, parentKey: nil) {
            case .failure(let failure): return .failure(failure)
            case .success(let key):
                values[column] = key.map(Value.integer) ?? .null
                supplied[column] = true
                if key != nil { pending[item.link.destination.name, default: Counts()].linked += 1 }
            }
        }
        let outcome = try inserter.insert(values, supplied: suppliedMatters ? supplied : nil)
        guard !outcome.isRejected, outcome != .skipped, let parentKey = inserter.lastKey else {
            return .success(outcome)
        }
        for item in nested where item.link.column == nil {
            if case .failure(let failure) = try linkAfter(
                item.link, value: item.value, keys: item.keys, path: item.link.field, parentKey: parentKey)
            {
                return .failure(failure)
            }
        }
        return .success(outcome)
    }

    /// The key of the object a to-one's value stands for: a nested object written (with
    /// `parentKey` in its column back to the parent, when it has one), a key looked up, or nil for null.
    private func toOneKey(
        _ link: Link, _ value: LocatedJSON, path: String, parentKey: Int64?
    ) throws -> Result<Int64?, Failure> {
        switch value.kind {
        case .object:
            return try writeObject(value, through: link, path: path, parentKey: parentKey).map { $0 }
        case .null:
            return .success(nil)
        case .string, .number, .bool:
            return try lookUp(value, through: link, path: path).map { $0 }
        case .array:
            return .failure(
                Failure(
                    field: path, line: value.line, column: value.column,
                    reason:
                        "\(link.source.name).\(link.relationship.name) is a to-one relationship: expected an object or a key of \(link.destination.name), found an array"
                ))
        }
    }

    /// Links the objects of a relationship not stored in the parent's row (a to-many, or a
    /// one-to-one whose key the other side holds) to the parent at `parentKey`.
    private func linkAfter(
        _ link: Link, value: LocatedJSON?, keys: LocatedJSON?, path: String, parentKey: Int64
    ) throws -> Result<Void, Failure> {
        var linked: [Int64] = []
        var sawValue = false
        for (given, fieldPath) in [(value, path), (keys, link.keysField)] {
            guard let given else { continue }
            sawValue = true
            // An array's elements are read one at a time (an array of a million objects is never
            // held as a million values), their paths made as they come.
            let elements: LocatedJSON.Elements
            let single: LocatedJSON?
            if link.relationship.isToMany {
                single = nil
                switch given.kind {
                case .array: elements = given.elements
                case .null: elements = LocatedJSON.Elements()
                default:
                    return .failure(
                        Failure(
                            field: fieldPath, line: given.line, column: given.column,
                            reason:
                                "\(link.source.name).\(link.relationship.name) is a to-many relationship: expected an array of \(link.destination.name) objects or keys, found \(given.kindDescription)"
                        ))
                }
            } else {
                elements = LocatedJSON.Elements()
                single = given
            }
            var iterator = elements.makeIterator()
            var first = single
            var offset = 0
            while let element = first ?? iterator.next() {
                first = nil
                let elementPath = single == nil ? "\(fieldPath)[\(offset)]" : fieldPath
                offset += 1
                if link.relationship.isToMany, element.kind == .null {
                    return .failure(
                        Failure(
                            field: elementPath, line: element.line, column: element.column,
                            reason:
                                "\(link.source.name).\(link.relationship.name): null is not a \(link.destination.name) object or key"
                        ))
                }
                switch try toOneKey(link, element, path: elementPath, parentKey: parentKey) {
                case .failure(let failure): return .failure(failure)
                case .success(let key):
                    guard let key else { continue }
                    // A nested object written with the parent's key in its own column is linked already.
                    var writtenLinked = false
                    if element.kind == .object, link.node?.parentColumn != nil { writtenLinked = true }
                    if !writtenLinked,
                        let failure = try connect(link, parent: parentKey, child: key, at: element, path: elementPath)
                    {
                        return .failure(failure)
                    }
                    pending[link.destination.name, default: Counts()].linked += 1
                    linked.append(key)
                }
            }
        }
        if sawValue, replacesSets || !link.relationship.isToMany {
            if let failure = try unlinkOthers(link, parent: parentKey, keeping: linked, at: value ?? keys, path: path) {
                return .failure(failure)
            }
        }
        return .success(())
    }

    // MARK: - Objects and keys

    func node(of link: Link) throws -> Node {
        if let node = link.node { return node }
        let node = try Node(link: link, context: self)
        link.node = node
        return node
    }

    /// Writes a nested object (matched by its entity's key, else inserted) with what it nests; its key.
    private func writeObject(
        _ object: LocatedJSON, through link: Link, path: String, parentKey: Int64?
    ) throws -> Result<Int64, Failure> {
        if link.depth > maxDepth {
            return .failure(
                Failure(
                    field: path, line: object.line, column: object.column,
                    reason:
                        "related objects are nested deeper than \(maxDepth) levels (\(link.source.name).\(link.relationship.name)); raise 'nested: {max_depth: N}' if this is meant"
                ))
        }
        let node = try node(of: link)
        var values = Array(repeating: Value.null, count: node.columnCount)
        var supplied = Array(repeating: false, count: node.columnCount)
        var fieldPaths: [Int: (String, LocatedJSON)] = [:]
        // The object's members, one level (what they nest is read when a link asks for it).
        let members = object.members
        func member(_ key: String) -> LocatedJSON? { members.last { $0.key == key }?.value }
        for (index, column) in node.attributes.enumerated() {
            guard let member = member(column.field) else { continue }
            switch ImportPlan.coerce(member.fieldValue, to: column.attribute.type, options: coercion) {
            case .success(let value):
                values[index] = value
                supplied[index] = true
                fieldPaths[index] = ("\(path).\(column.field)", member)
            case .failure(let failure):
                return .failure(
                    Failure(
                        field: "\(path).\(column.field)", line: member.line, column: member.column,
                        reason: "\(node.entity.name).\(column.attribute.name): \(failure.reason)"))
            }
        }
        if let key = node.key {
            for name in key {
                guard let index = node.attributes.firstIndex(where: { $0.attribute.name == name }), supplied[index],
                    !values[index].isNull
                else {
                    let field = node.attributes.first { $0.attribute.name == name }?.field ?? name
                    return .failure(
                        Failure(
                            field: path, line: object.line, column: object.column,
                            reason:
                                "a nested \(node.entity.name) needs its key: '\(field)' (\(node.entity.name).\(name)) is missing or null"
                        ))
                }
            }
        }
        var later: [(Link, LocatedJSON?, LocatedJSON?)] = []
        for link in node.links {
            let value = member(link.field)
            let keys = member(link.keysField)
            guard let given = value ?? keys else { continue }
            if let column = link.column {
                switch try toOneKey(
                    link, given, path: "\(path).\(value != nil ? link.field : link.keysField)", parentKey: nil)
                {
                case .failure(let failure): return .failure(failure)
                case .success(let key):
                    values[column] = key.map(Value.integer) ?? .null
                    supplied[column] = true
                    if key != nil { pending[link.destination.name, default: Counts()].linked += 1 }
                }
            } else {
                later.append((link, value, keys))
            }
        }
        if let column = node.parentColumn, let parentKey {
            values[column] = .integer(parentKey)
            supplied[column] = true
        }
        if node.entity.isAbstract {
            return .failure(
                Failure(
                    field: path, line: object.line, column: object.column,
                    reason:
                        "\(node.entity.name) is an abstract entity: a nested object cannot be one of its objects (give the key of an existing one)"
                ))
        }
        let inserter = try node.inserter()
        let outcome = try inserter.insert(values, supplied: supplied)
        switch outcome {
        case .rejected(let reason, let column):
            let place = column.flatMap { fieldPaths[$0] }
            return .failure(
                Failure(
                    field: place?.0 ?? path, line: place?.1.line ?? object.line,
                    column: place?.1.column ?? object.column, reason: "\(node.entity.name): \(reason)"))
        case .inserted: pending[node.entity.name, default: Counts()].inserted += 1
        case .updated: pending[node.entity.name, default: Counts()].updated += 1
        case .unchanged, .skipped: pending[node.entity.name, default: Counts()].unchanged += 1
        }
        guard let key = inserter.lastKey else {
            return .failure(
                Failure(
                    field: path, line: object.line, column: object.column,
                    reason: "\(node.entity.name): the nested object was not written"))
        }
        if let sync, node.entity.name == entityName { _ = try sync.markSeen(key) }
        for (link, value, keys) in later {
            if case .failure(let failure) = try linkAfter(
                link, value: value, keys: keys, path: "\(path).\(link.field)", parentKey: key)
            {
                return .failure(failure)
            }
        }
        return .success(key)
    }

    /// The key of the existing object a scalar names by its entity's key; a located failure when none has it.
    private func lookUp(_ value: LocatedJSON, through link: Link, path: String) throws -> Result<Int64, Failure> {
        let node = try node(of: link)
        guard let key = node.key, let lookup = node.keyLookup else {
            let why =
                node.key.map {
                    "has a key of several attributes (\($0.joined(separator: ", "))): nest the objects instead"
                }
                ?? "has no key to link by (mark one with the user info sync.isPrimaryKey, or add 'unique:')"
            return .failure(
                Failure(
                    field: path, line: value.line, column: value.column,
                    reason: "\(link.source.name).\(link.relationship.name): \(node.entity.name) \(why)"))
        }
        guard let attribute = node.entity.attribute(named: key[0]) else {
            preconditionFailure("a key names attributes")
        }
        let typed: Value
        switch ImportPlan.coerce(value.fieldValue, to: attribute.type, options: coercion) {
        case .success(let coerced): typed = coerced
        case .failure(let failure):
            return .failure(
                Failure(
                    field: path, line: value.line, column: value.column,
                    reason:
                        "\(link.source.name).\(link.relationship.name): a key of \(node.entity.name) (\(key[0])): \(failure.reason)"
                ))
        }
        guard let found = try lookup.firstInteger([layout.valueCoding.encode(typed)]) else {
            return .failure(
                Failure(
                    field: path, line: value.line, column: value.column,
                    reason:
                        ReferenceResolver.unmatchedKeyReason(
                            entity: link.source.name, relationship: link.relationship.name,
                            destination: node.entity.name, attribute: key[0], key: "\(typed)")
                ))
        }
        return .success(found)
    }

    // MARK: - Links

    /// Links `child` to `parent` where the link is not the parent's own column.
    private func connect(
        _ link: Link, parent: Int64, child: Int64, at value: LocatedJSON, path: String
    ) throws -> Failure? {
        let dialect = layout.dialect
        let sql: String
        let arguments: [DatabaseValue]
        switch link.storage {
        case .foreignKey:
            return nil
        case .inverseForeignKey(let table, let column):
            sql =
                "UPDATE \(dialect.quote(table)) SET \(dialect.quote(column)) = ?1 WHERE \(dialect.quote(layout.keyColumn)) = ?2 AND (\(dialect.quote(column)) IS NULL OR \(dialect.quote(column)) <> ?1)"
            arguments = [.integer(parent), .integer(child)]
        case .joinTable(let table, let source, let target):
            let quoted = dialect.quote(table)
            var columns = [dialect.quote(source), dialect.quote(target)]
            // Typed, so that PostgreSQL knows what the values selected are.
            let key = "CAST(? AS \(dialect.keyReferenceType))"
            var values = [key, key]
            var linkArguments: [DatabaseValue] = [.integer(parent), .integer(child)]
            // Core Data's ordered many-to-many: the new link goes last (one past the highest
            // position of its owner's links), as on a to-one whose inverse is ordered.
            let orders = layout.joinOrderColumns(of: link.relationship, in: link.source, model: model)
            for (order, partition) in orders {
                columns.append(dialect.quote(order))
                values.append(
                    "(SELECT coalesce(max(\(dialect.quote(order))), 0) + 1 FROM \(quoted) WHERE \(dialect.quote(partition)) = ?)"
                )
                linkArguments.append(.integer(partition == source ? parent : child))
            }
            sql =
                "INSERT INTO \(quoted) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) WHERE NOT EXISTS (SELECT 1 FROM \(quoted) WHERE \(dialect.quote(source)) = ? AND \(dialect.quote(target)) = ?)"
            arguments = linkArguments + [.integer(parent), .integer(child)]
        }
        do {
            let statement = try link.connect ?? store.statement(sql)
            link.connect = statement
            try statement.run(arguments)
        } catch let error as FerryError {
            return Failure(
                field: path, line: value.line, column: value.column,
                reason: "\(link.source.name).\(link.relationship.name): cannot link: \(error.message)")
        }
        return nil
    }

    /// Unlinks the objects related to `parent` through `link` that are not in `keeping`.
    private func unlinkOthers(
        _ link: Link, parent: Int64, keeping: [Int64], at value: LocatedJSON?, path: String
    ) throws -> Failure? {
        let dialect = layout.dialect
        func absent(_ column: String) -> String {
            keeping.isEmpty
                ? "" : " AND \(dialect.quote(column)) NOT IN (\(keeping.map(String.init).joined(separator: ", ")))"
        }
        let sql: String
        switch link.storage {
        case .foreignKey:
            return nil
        case .inverseForeignKey(let table, let column):
            sql =
                "UPDATE \(dialect.quote(table)) SET \(dialect.quote(column)) = NULL WHERE \(dialect.quote(column)) = ?"
                + absent(layout.keyColumn)
        case .joinTable(let table, let source, let target):
            sql = "DELETE FROM \(dialect.quote(table)) WHERE \(dialect.quote(source)) = ?" + absent(target)
        }
        do {
            try store.database.execute(sql, [.integer(parent)])
        } catch let error as FerryError {
            return Failure(
                field: path, line: value?.line ?? 0, column: value?.column ?? 0,
                reason:
                    "\(link.source.name).\(link.relationship.name): cannot unlink the \(link.destination.name) objects absent from the array: \(error.message)"
            )
        }
        let changes = store.database.changes
        if changes > 0 { pending[link.destination.name, default: Counts()].unlinked += changes }
        return nil
    }
}

extension NestedObjects.Counts {
    mutating func add(_ other: Self) {
        inserted += other.inserted
        updated += other.updated
        unchanged += other.unchanged
        linked += other.linked
        unlinked += other.unlinked
    }
}

extension InsertOutcome {
    var isRejected: Bool {
        if case .rejected = self { return true }
        return false
    }
}

extension LocatedJSON {
    /// "an object", "an array", "a string"…: for messages about a value of the wrong kind.
    var kindDescription: String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        }
    }
}
