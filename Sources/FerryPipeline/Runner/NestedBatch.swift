import FerryCore
import FerryFormats
import FerryPostgresStore

/// A nested import on PostgreSQL written a read-ahead batch at a time instead of statement by
/// statement: what ``NestedObjects`` writes for a record is decided in ferry and kept, and the
/// batch's rows are written together, a `COPY` of new rows and an `UPDATE … FROM unnest(…)` of
/// stored objects per entity (``PostgresRecordInserter/deferInsert(_:)``).
///
/// When the batch starts, its records are read once for the keys of the objects they nest and
/// the values of the step entity's unique attributes; one query per nested entity and per
/// uniqueness constraint finds which of them the store holds (``prefetch(nested:)``). Each record is
/// then decided with what the store held and what the batch kept before it: a nested object
/// whose key the store or the batch holds is an update of that object, else an insert with the
/// next key of its entity's sequence; a key names the object holding it. Those are the outcomes
/// the statements would give, since each entity's only uniqueness constraint is its key and the
/// step's own records only insert (`on_conflict: error` or `keep`) values the store and the
/// batch do not hold.
///
/// Any record the batch cannot decide so (a reject anywhere in it, a unique value already
/// held, a key the batch did not read ahead, a link through a join table, keys in `…_ids`) is
/// written on its own, as without the batch (``NestedObjects``), after the rows kept before it
/// are written: so its outcome and reason are those of the statements, and the store is the
/// one SQLite's record-by-record import leaves.
final class NestedBatch {
    typealias Link = NestedObjects.Link
    typealias Node = NestedObjects.Node

    /// A key as the store compares it: integers by value, text by its bytes (PostgreSQL compares
    /// text byte-wise; Swift's `==` would take two normalizations of one text as equal).
    enum StoredKey: Hashable {
        case integer(Int64)
        case bytes([UInt8])

        init?(_ value: DatabaseValue) {
            switch value {
            case .integer(let number): self = .integer(number)
            case .text(let text): self = .bytes(Array(text.utf8))
            default: return nil
            }
        }
    }

    /// What one record writes, decided before anything is kept.
    private struct Draft {
        enum Action {
            case insert(PostgresRecordInserter, [DatabaseValue], key: Int64)
            case update(PostgresRecordInserter, key: Int64, [DatabaseValue], supplied: [Bool])
        }
        var actions: [Action] = []
        var counts: [String: NestedObjects.Counts] = [:]
        /// Inserts planned per inserter, for the keys they will take.
        var inserts: [ObjectIdentifier: Int] = [:]
        /// The objects the record itself inserts, per node, by key.
        var created: [ObjectIdentifier: [StoredKey: Int64]] = [:]
        /// The step entity's unique values the record takes, per constraint.
        var taken: [(Int, StoredKey)] = []
        /// The key of the step entity's object the record inserts or updates.
        var topKey: Int64?

        /// The key the next insert through `inserter` takes.
        mutating func nextKey(_ inserter: PostgresRecordInserter) throws -> Int64 {
            let offset = inserts[ObjectIdentifier(inserter), default: 0]
            inserts[ObjectIdentifier(inserter)] = offset + 1
            return try inserter.deferredKey(offset: offset)
        }
    }

    private let topEntity: EntityDescription
    private let model: ObjectModel
    private let layout: any StoreLayout
    /// The record columns of the step entity's uniqueness constraints (each of one attribute).
    private var uniqueColumns: [Int] = []
    private var uniqueAttributes: [String]
    /// Whether each node (by identity) can be written by the batch.
    private var nodeFits: [ObjectIdentifier: Bool] = [:]
    private var nodeEntities: Set<String> = []
    private var nodeInserters: [PostgresRecordInserter] = []
    /// The batch's records, read ahead: the keys they nest per node and the unique values of
    /// the step's entity per constraint.
    private var nestedKeys: [ObjectIdentifier: (node: Node, keys: [DatabaseValue])] = [:]
    private var uniqueValues: [[DatabaseValue]] = []
    /// What the store and the batch hold: per node, key → the object's key (nil: none holds
    /// it); per constraint, value → held. A key not in them was not read ahead.
    private var held: [ObjectIdentifier: [StoredKey: Int64?]] = [:]
    private var uniqueHeld: [[StoredKey: Int64?]] = []
    /// `on_conflict: update`: a record whose unique value an object holds updates that object.
    private let updatesMatches: Bool
    /// True when ``held`` must be read again (before the next record).
    private var stale = true
    /// The keys of the objects the rows kept and not yet written hold: per node, the new
    /// objects' keys; the step entity's unique values taken, with its objects' keys. A lookup
    /// made before those rows are written adds them (``prefetch(nested:)``).
    private var keptKeys: (created: [ObjectIdentifier: [StoredKey: Int64]], taken: [(Int, StoredKey, Int64)]) = (
        [:], []
    )
    /// The inserters of the step entity and of the nodes, for writing what they keep.
    private var topInserter: PostgresRecordInserter?
    /// Records written on their own in this batch; past a few the batch writes the rest so too.
    private var writtenAlone = 0
    private var recordsInBatch = 0
    /// Rows kept (inserts and updates, a row updated again counted again) since the last write.
    private var keptRows = 0
    /// Nested keys read ahead in this batch.
    private var collectedKeys = 0
    /// The most rows kept before they are written.
    static let maximumKeptRows = 50_000
    /// False for the rest of the read-ahead batch once too many of its records were written alone.
    private(set) var isActive = true
    /// False when the step's records cannot be written this way at all (found at the first batch).
    private var stepFits = true

    /// nil when the step cannot be written this way: a store other than PostgreSQL's, a sync,
    /// `relationships:`, `on_conflict: replace`, `update` on an entity with other than one
    /// uniqueness constraint, an entity in an inheritance tree, a uniqueness constraint of
    /// several attributes or of values compared otherwise than by integer or text.
    init?(
        step: ImportStep, entity: EntityDescription, store: any NestedStore, layout: any StoreLayout,
        model: ObjectModel
    ) {
        guard store is PostgresNestedStore, step.mode != .sync, step.relationships.isEmpty,
            step.onConflict == .error || step.onConflict == .keep
                || (step.onConflict == .update && entity.uniquenessConstraints.count == 1),
            layout.versionIncrement == nil, Self.standsAlone(entity, in: model)
        else { return nil }
        var attributes: [String] = []
        for constraint in entity.uniquenessConstraints {
            guard constraint.count == 1, let attribute = entity.attribute(named: constraint[0]),
                Self.comparesExactly(attribute.type)
            else { return nil }
            attributes.append(constraint[0])
        }
        topEntity = entity
        self.model = model
        self.layout = layout
        uniqueAttributes = attributes
        updatesMatches = step.onConflict == .update
    }

    /// Not abstract, no parent and no sub-entity: its objects are its table's rows.
    private static func standsAlone(_ entity: EntityDescription, in model: ObjectModel) -> Bool {
        !entity.isAbstract && entity.parent == nil && !model.entities.contains { $0.parent == entity.name }
    }

    /// Types whose stored values are equal exactly when their encoded forms are (integers,
    /// text, UUIDs in their one written form).
    private static func comparesExactly(_ type: AttributeType) -> Bool {
        switch type {
        case .int16, .int32, .int64, .string, .uuid: return true
        default: return false
        }
    }

    // MARK: - Batches

    /// Starts a read-ahead batch: reads the records for their keys and unique values (looked up
    /// at the first record written, and what the last batch kept is sent to the server then).
    func begin(records: [SourceRecord], plan: ImportPlan, nested: NestedObjects) throws {
        nestedKeys.removeAll(keepingCapacity: true)
        collectedKeys = 0
        uniqueValues = Array(repeating: [], count: uniqueAttributes.count)
        stale = true
        writtenAlone = 0
        recordsInBatch = records.count
        if topInserter == nil, let inserter = plan.recordInserter as? PostgresRecordInserter {
            topInserter = inserter
            uniqueColumns = uniqueAttributes.compactMap { inserter.columnIndex(ofAttribute: $0) }
            // A unique attribute the step does not map: its inserts would all hold its default.
            stepFits =
                uniqueColumns.count == uniqueAttributes.count && (!updatesMatches || inserter.defersUpdates)
        }
        isActive = stepFits && topInserter != nil
        guard isActive else {
            try writeKept(in: nested)
            return
        }
        var values = Array(repeating: Value.null, count: plan.columnCount)
        var supplied = Array(repeating: true, count: plan.columnCount)
        let coding = layout.valueCoding
        for record in records where record.problem == nil {
            if case .success = try plan.fill(record: record, values: &values, supplied: &supplied) {
                for (offset, column) in uniqueColumns.enumerated() where !values[column].isNull {
                    uniqueValues[offset].append(coding.encode(values[column]))
                }
            }
            for link in nested.links {
                guard let index = link.fieldIndexes?.field, let field = record[index],
                    let value = LocatedJSON.value(of: field, in: record)
                else { continue }
                try collect(value, through: link, nested: nested)
            }
        }
    }

    /// Notes the keys a link's value holds (nested objects' keys and keys naming objects), and
    /// those of what the nested objects nest.
    private func collect(_ value: LocatedJSON, through link: Link, nested: NestedObjects) throws {
        guard link.depth <= nested.maxDepth else { return }
        switch value.kind {
        case .array:
            for element in value.elements where element.kind != .array {
                try collect(element, through: link, nested: nested)
            }
        case .null:
            return
        case .object:
            let node = try nested.node(of: link)
            guard try fits(node) else { return }
            let members = value.members
            if let key = member(node.key?[0] ?? "", of: node, in: members) { note(key, node: node, nested: nested) }
            for sublink in node.links {
                if let member = members.last(where: { $0.key == sublink.field })?.value {
                    try collect(member, through: sublink, nested: nested)
                }
            }
        case .string, .number, .bool:
            let node = try nested.node(of: link)
            guard try fits(node) else { return }
            note(value, node: node, nested: nested)
        }
    }

    /// The member holding attribute `name` of a nested object.
    private func member(
        _ name: String, of node: Node, in members: [(key: String, value: LocatedJSON)]
    )
        -> LocatedJSON?
    {
        guard let field = node.attributes.first(where: { $0.attribute.name == name })?.field else { return nil }
        return members.last { $0.key == field }?.value
    }

    private func note(_ value: LocatedJSON, node: Node, nested: NestedObjects) {
        // At most ``maximumKeptRows`` keys a batch: those after are not read ahead (their
        // records are written on their own).
        guard collectedKeys < Self.maximumKeptRows, let key = storedKey(value, node: node, nested: nested) else {
            return
        }
        collectedKeys += 1
        nestedKeys[ObjectIdentifier(node), default: (node, [])].keys.append(key.encoded)
    }

    /// A nested key as the store holds it; nil when it does not coerce.
    private func storedKey(
        _ value: LocatedJSON, node: Node, nested: NestedObjects
    ) -> (
        encoded: DatabaseValue, key: StoredKey
    )? {
        guard let name = node.key?[0], let attribute = node.entity.attribute(named: name),
            case .success(let typed) = ImportPlan.coerce(value.fieldValue, to: attribute.type, options: nested.coercion),
            !typed.isNull
        else { return nil }
        let encoded = layout.valueCoding.encode(typed)
        guard let key = StoredKey(encoded) else { return nil }
        return (encoded, key)
    }

    /// Whether the batch can write a node's objects: an entity of its own (no other node's, not
    /// the step's), in no inheritance tree, whose one uniqueness constraint is its key of one
    /// attribute compared exactly, written by a PostgreSQL inserter that updates.
    private func fits(_ node: Node) throws -> Bool {
        if let known = nodeFits[ObjectIdentifier(node)] { return known }
        var fits = false
        if let key = node.key, key.count == 1, node.entity.uniquenessConstraints == [key],
            let attribute = node.entity.attribute(named: key[0]), Self.comparesExactly(attribute.type),
            node.entity.name != topEntity.name, !nodeEntities.contains(node.entity.name),
            Self.standsAlone(node.entity, in: model),
            let inserter = try node.inserter() as? PostgresRecordInserter, inserter.policy == .update,
            inserter.defersUpdates
        {
            fits = true
            nodeInserters.append(inserter)
        }
        nodeEntities.insert(node.entity.name)
        nodeFits[ObjectIdentifier(node)] = fits
        return fits
    }

    /// Finds which keys and unique values of the batch the store holds: one query for every node
    /// and constraint (``PostgresRecordInserter/storedKeys(_:)``), then sends what the last
    /// batch kept without waiting (the server writes it while ferry decides this batch's
    /// records). The query runs before those rows are written: the keys they hold are added
    /// from what was kept (``keptKeys``).
    private func prefetch(nested: NestedObjects) throws {
        try PostgresRecordInserter.finishDeferredWrite(inserters(nested))
        /// Each value once, and only those that can travel in an array.
        func distinct(_ values: [DatabaseValue]) -> [DatabaseValue] {
            var seen = Set<StoredKey>()
            return values.filter { value in
                guard PostgresRecordInserter.canLookUp(value), let stored = StoredKey(value) else { return false }
                return seen.insert(stored).inserted
            }
        }
        var requests: [(inserter: PostgresRecordInserter, column: Int, values: [DatabaseValue])] = []
        var nodes: [ObjectIdentifier] = []
        for (id, entry) in nestedKeys {
            guard let inserter = try entry.node.inserter() as? PostgresRecordInserter,
                let name = entry.node.key?[0],
                let column = entry.node.attributes.firstIndex(where: { $0.attribute.name == name })
            else { continue }
            requests.append((inserter, column, distinct(entry.keys)))
            nodes.append(id)
        }
        if let topInserter {
            for (offset, column) in uniqueColumns.enumerated() {
                requests.append((topInserter, column, distinct(uniqueValues[offset])))
            }
        }
        let answers = try PostgresRecordInserter.storedKeys(requests)
        held.removeAll(keepingCapacity: true)
        for (place, id) in nodes.enumerated() {
            var found: [StoredKey: Int64?] = [:]
            for (key, primaryKey) in zip(requests[place].values, answers[place]) {
                if let stored = StoredKey(key) { found[stored] = .some(primaryKey) }
            }
            held[id] = found
        }
        uniqueHeld = []
        for offset in uniqueColumns.indices {
            var found: [StoredKey: Int64?] = [:]
            if topInserter != nil {
                let place = nodes.count + offset
                for (value, primaryKey) in zip(requests[place].values, answers[place]) {
                    if let stored = StoredKey(value) { found[stored] = .some(primaryKey) }
                }
            }
            uniqueHeld.append(found)
        }
        for (id, created) in keptKeys.created {
            for (key, primaryKey) in created { held[id, default: [:]][key] = .some(primaryKey) }
        }
        for (offset, value, primaryKey) in keptKeys.taken { uniqueHeld[offset][value] = .some(primaryKey) }
        stale = false
        try writeKept(in: nested, waiting: false)
    }

    // MARK: - Records

    /// A record's first failure, found in ferry: a value of a nested object that does not coerce
    /// to its attribute's type, met where every statement before it in ``NestedObjects``'s
    /// order would succeed (the batch decided them all), so the failure the record gets written
    /// on its own, at the same field, line and column, with the same reason; nothing of it is kept.
    private struct Rejection: Error {
        let failure: NestedObjects.Failure
    }

    /// Decides a record and keeps what it writes, or finds its failure; nil when it must be
    /// written on its own.
    func write(
        _ record: SourceRecord, values given: [Value], supplied suppliedGiven: [Bool]?,
        inserter: any KeyedRecordInserting, in nested: NestedObjects
    ) throws -> Result<InsertOutcome, NestedObjects.Failure>? {
        guard let top = inserter as? PostgresRecordInserter, top === topInserter else { return nil }
        if stale { try prefetch(nested: nested) }
        do {
            guard
                let outcome = try decide(
                    record, values: given, supplied: suppliedGiven, top: top, in: nested)
            else { return nil }
            return .success(outcome)
        } catch let rejection as Rejection {
            return .failure(rejection.failure)
        }
    }

    private func decide(
        _ record: SourceRecord, values given: [Value], supplied suppliedGiven: [Bool]?,
        top: PostgresRecordInserter, in nested: NestedObjects
    ) throws -> InsertOutcome? {
        var values = given
        var supplied = suppliedGiven ?? Array(repeating: true, count: values.count)
        var draft = Draft()
        // Every field read first, as the record inserter does (a field it cannot read fails
        // the record before any nested object is written).
        var fields: [(Link, LocatedJSON?)] = []
        for link in nested.links {
            guard let indexes = link.fieldIndexes else { continue }
            if record[indexes.keys] != nil { return nil }
            guard let field = record[indexes.field] else {
                fields.append((link, nil))
                continue
            }
            guard let value = LocatedJSON.value(of: field, in: record) else { return nil }
            fields.append((link, value))
        }
        var later: [(Link, LocatedJSON, String)] = []
        for (link, value) in fields {
            guard let value else {
                if let column = link.column {
                    values[column] = .null
                    supplied[column] = false
                }
                continue
            }
            guard
                try setLink(
                    link, value, path: link.field, values: &values, supplied: &supplied, later: &later, draft: &draft,
                    nested: nested)
            else { return nil }
        }
        let key: Int64
        let outcome: InsertOutcome
        if let matched = try match(values: values, supplied: suppliedGiven == nil ? nil : supplied) {
            // `update`: the object holding the record's unique value (stored, or kept by an
            // earlier record) takes the values the record supplies; it keeps that value.
            guard let object = matched,
                let encoded = top.encodedIfAccepted(
                    values, supplied: suppliedGiven == nil ? nil : supplied, updating: true),
                let column = uniqueColumns.first,
                StoredKey(encoded[column]) == StoredKey(layout.valueCoding.encode(values[column]))
            else { return nil }
            key = object
            outcome = .updated
            draft.actions.append(.update(top, key: key, encoded, supplied: supplied))
        } else {
            guard
                let encoded = top.encodedIfAccepted(
                    values, supplied: suppliedGiven == nil ? nil : supplied, updating: false)
            else { return nil }
            for (offset, column) in uniqueColumns.enumerated() where !encoded[column].isNull {
                guard let stored = StoredKey(encoded[column]), case .some(.none) = uniqueHeld[offset][stored],
                    !draft.taken.contains(where: { $0 == (offset, stored) })
                else { return nil }
                draft.taken.append((offset, stored))
            }
            key = try draft.nextKey(top)
            outcome = .inserted
            draft.actions.append(.insert(top, encoded, key: key))
        }
        draft.topKey = key
        for (link, value, path) in later {
            guard try linkAfter(link, value, path: path, parentKey: key, draft: &draft, nested: nested) else {
                return nil
            }
        }
        try keep(draft, nested: nested)
        keptRows += draft.actions.count
        // Memory stays bounded: a batch whose records nest many objects is written sooner.
        if keptRows >= Self.maximumKeptRows { try writeKept(in: nested) }
        return outcome
    }

    /// With `on_conflict: update`, the object a record updates: `.some(key)` when an object
    /// holds its unique value, `.some(nil)` when the batch cannot tell (a value not read
    /// ahead, null or not supplied: written on its own); nil when it inserts (and without
    /// `update`).
    private func match(values: [Value], supplied: [Bool]?) throws -> Int64?? {
        guard updatesMatches, let column = uniqueColumns.first else { return nil }
        guard supplied?[column] ?? true, !values[column].isNull,
            let stored = StoredKey(layout.valueCoding.encode(values[column])),
            let index = uniqueHeld[0].index(forKey: stored)
        else { return .some(nil) }
        guard let object = uniqueHeld[0][index].value else { return nil }
        return .some(object)
    }

    /// Sets the column of a to-one stored in the row to the key its value (at `path`) stands for
    /// (counting the link), or notes a link made once the row has its key in `later`; false
    /// when the record must be written on its own.
    private func setLink(
        _ link: Link, _ value: LocatedJSON, path: String, values: inout [Value], supplied: inout [Bool],
        later: inout [(Link, LocatedJSON, String)], draft: inout Draft, nested: NestedObjects
    ) throws -> Bool {
        guard let column = link.column else {
            later.append((link, value, path))
            return true
        }
        guard let key = try toOneKey(link, value, path: path, draft: &draft, nested: nested) else { return false }
        values[column] = key.map(Value.integer) ?? .null
        supplied[column] = true
        if key != nil { draft.counts[link.destination.name, default: .init()].linked += 1 }
        return true
    }

    /// The key a to-one's value stands for: `.some(nil)` for null, nil when the record must be
    /// written on its own.
    private func toOneKey(
        _ link: Link, _ value: LocatedJSON, path: String, draft: inout Draft, nested: NestedObjects
    ) throws -> Int64?? {
        switch value.kind {
        case .null: return .some(nil)
        case .object:
            guard
                let key = try objectKey(value, through: link, path: path, parentKey: nil, draft: &draft, nested: nested)
            else { return nil }
            return .some(key)
        case .string, .number, .bool:
            let node = try nested.node(of: link)
            guard try fits(node), let key = storedKey(value, node: node, nested: nested),
                case .some(.some(let found)) = holder(of: key.key, node: node, draft: draft)
            else { return nil }
            return .some(found)
        case .array: return nil
        }
    }

    /// What holds a nested key: the record's own object, else the store's or the batch's (the
    /// object's key, or nil when none holds it); nil when the key was not read ahead.
    private func holder(of key: StoredKey, node: Node, draft: Draft) -> Int64?? {
        if let created = draft.created[ObjectIdentifier(node)]?[key] { return .some(created) }
        guard let known = held[ObjectIdentifier(node)], let index = known.index(forKey: key) else { return nil }
        let primaryKey: Int64? = known[index].value
        return .some(primaryKey)
    }

    /// A nested object's key (the object at `path`): the object it updates or inserts (with
    /// what it nests); nil when the record must be written on its own. Throws ``Rejection``
    /// when one of its values does not coerce (as ``NestedObjects`` reads them, before anything
    /// else of the object).
    private func objectKey(
        _ object: LocatedJSON, through link: Link, path: String, parentKey: Int64?, draft: inout Draft,
        nested: NestedObjects
    ) throws -> Int64? {
        // A record nesting very many objects is written on its own, as it is read (element by element).
        guard link.depth <= nested.maxDepth, draft.actions.count < Self.maximumKeptRows else { return nil }
        let node = try nested.node(of: link)
        guard try fits(node), let inserter = try node.inserter() as? PostgresRecordInserter else { return nil }
        var values = Array(repeating: Value.null, count: node.columnCount)
        var supplied = Array(repeating: false, count: node.columnCount)
        let members = object.members
        func member(_ key: String) -> LocatedJSON? { members.last { $0.key == key }?.value }
        for (index, column) in node.attributes.enumerated() {
            guard let member = member(column.field) else { continue }
            switch ImportPlan.coerce(member.fieldValue, to: column.attribute.type, options: nested.coercion) {
            case .success(let value):
                values[index] = value
                supplied[index] = true
            case .failure(let failure):
                throw Rejection(
                    failure: NestedObjects.Failure(
                        field: "\(path).\(column.field)", line: member.line, column: member.column,
                        reason: "\(node.entity.name).\(column.attribute.name): \(failure.reason)"))
            }
        }
        guard let keyName = node.key?[0],
            let keyIndex = node.attributes.firstIndex(where: { $0.attribute.name == keyName }),
            supplied[keyIndex], !values[keyIndex].isNull,
            let objectKeyValue = StoredKey(layout.valueCoding.encode(values[keyIndex]))
        else { return nil }
        var later: [(Link, LocatedJSON, String)] = []
        for sublink in node.links {
            if member(sublink.keysField) != nil { return nil }
            guard let value = member(sublink.field) else { continue }
            guard
                try setLink(
                    sublink, value, path: "\(path).\(sublink.field)", values: &values, supplied: &supplied,
                    later: &later, draft: &draft, nested: nested)
            else { return nil }
        }
        if let column = node.parentColumn, let parentKey {
            values[column] = .integer(parentKey)
            supplied[column] = true
        }
        guard let found = holder(of: objectKeyValue, node: node, draft: draft) else { return nil }
        let key: Int64
        if let existing = found {
            guard let encoded = inserter.encodedIfAccepted(values, supplied: supplied, updating: true) else {
                return nil
            }
            key = existing
            draft.actions.append(.update(inserter, key: key, encoded, supplied: supplied))
            draft.counts[node.entity.name, default: .init()].updated += 1
        } else {
            guard let encoded = inserter.encodedIfAccepted(values, supplied: supplied, updating: false) else {
                return nil
            }
            key = try draft.nextKey(inserter)
            draft.actions.append(.insert(inserter, encoded, key: key))
            draft.created[ObjectIdentifier(node), default: [:]][objectKeyValue] = key
            draft.counts[node.entity.name, default: .init()].inserted += 1
        }
        for (sublink, value, subpath) in later {
            guard try linkAfter(sublink, value, path: subpath, parentKey: key, draft: &draft, nested: nested) else {
                return nil
            }
        }
        return key
    }

    /// Links a to-many's nested objects through their column back to the parent; false when the
    /// record must be written on its own (another kind of link, a key, a null element).
    private func linkAfter(
        _ link: Link, _ value: LocatedJSON, path: String, parentKey: Int64, draft: inout Draft, nested: NestedObjects
    ) throws -> Bool {
        guard link.relationship.isToMany, case .inverseForeignKey = link.storage else { return false }
        switch value.kind {
        case .null: return true
        case .array: break
        default: return false
        }
        for (offset, element) in value.elements.enumerated() {
            guard element.kind == .object, try nested.node(of: link).parentColumn != nil,
                try objectKey(
                    element, through: link, path: "\(path)[\(offset)]", parentKey: parentKey, draft: &draft,
                    nested: nested) != nil
            else { return false }
            draft.counts[link.destination.name, default: .init()].linked += 1
        }
        return true
    }

    /// Keeps what a decided record writes, and notes what it holds now.
    private func keep(_ draft: Draft, nested: NestedObjects) throws {
        for action in draft.actions {
            switch action {
            case .insert(let inserter, let encoded, let key):
                let given = try inserter.deferInsert(encoded)
                precondition(given == key, "a kept row takes the key it was given")
            case .update(let inserter, let key, let encoded, let supplied):
                inserter.deferUpdate(key: key, encoded, supplied: supplied)
            }
        }
        for (id, created) in draft.created {
            for (key, primaryKey) in created {
                held[id, default: [:]][key] = .some(primaryKey)
                keptKeys.created[id, default: [:]][key] = primaryKey
            }
        }
        for (offset, value) in draft.taken {
            uniqueHeld[offset][value] = .some(draft.topKey)
            if let key = draft.topKey { keptKeys.taken.append((offset, value, key)) }
        }
        for (entity, count) in draft.counts { nested.counts[entity, default: .init()].add(count) }
    }

    // MARK: - Writing

    /// Writes what the batch kept in one round trip: new rows entity by entity (the objects a
    /// row names before it, the objects naming it after), then the updates; unless `waiting`,
    /// only sends them (the session's next statement reads the outcome).
    func writeKept(in nested: NestedObjects, waiting: Bool = true) throws {
        keptRows = 0
        keptKeys = ([:], [])
        let inserters = try inserters(nested)
        guard inserters.contains(where: \.hasDeferredRows) else { return }
        try PostgresRecordInserter.writeDeferred(inserters, waiting: waiting)
    }

    /// The inserters the batch writes through, in the order their rows are written.
    private func inserters(_ nested: NestedObjects) throws -> [PostgresRecordInserter] {
        guard let topInserter else { return [] }
        var inserters: [PostgresRecordInserter] = []
        try order(nested.links, around: topInserter, into: &inserters)
        return inserters
    }

    /// Puts `inserter` after the inserters of the objects its rows name (to-ones in its row) and
    /// before those of the objects naming its rows.
    private func order(
        _ links: [Link], around inserter: PostgresRecordInserter, into inserters: inout [PostgresRecordInserter]
    ) throws {
        for link in links where link.column != nil { try order(link, into: &inserters) }
        inserters.append(inserter)
        for link in links where link.column == nil { try order(link, into: &inserters) }
    }

    private func order(_ link: Link, into inserters: inout [PostgresRecordInserter]) throws {
        guard let node = link.node, nodeFits[ObjectIdentifier(node)] == true,
            let inserter = try node.inserter() as? PostgresRecordInserter,
            !inserters.contains(where: { $0 === inserter })
        else { return }
        try order(node.links, around: inserter, into: &inserters)
    }

    /// A record was written on its own: the keys it took and the objects it wrote are read
    /// again before the next record; past one record in eight of the batch, the rest of the
    /// batch is written record by record too.
    func recordWrittenAlone() {
        stale = true
        forgetKeys()
        writtenAlone += 1
        if writtenAlone * 8 > recordsInBatch { isActive = false }
    }

    /// Forgets the kept rows and next keys of every inserter the batch writes through.
    private func forgetKeys() {
        topInserter?.forgetDeferred()
        for inserter in nodeInserters { inserter.forgetDeferred() }
    }

    /// The step's transaction began: nothing kept survives it.
    func beginTransaction() {
        forgetKeys()
        held.removeAll()
        keptKeys = ([:], [])
        stale = true
    }
}
