import FerryCore
import FerryFormats
import FerryPostgresStore

/// How each column of the destination gets its value from a source record: resolved once per
/// step (field indexes, coercion options, reference resolvers), then applied to every record.
final class ImportPlan {
    enum Source {
        case field(index: Int, name: String)
        case constant(Value)
    }

    /// Classes, not structs: the per-record loop then retains one reference per column instead of
    /// copying descriptions and option sets.
    final class AttributeColumn {
        let attribute: AttributeDescription
        let type: AttributeType
        let source: Source
        let options: CoercionOptions
        /// The options for a quoted CSV field: taken literally, without trimming or null words.
        let literalOptions: CoercionOptions
        /// The options trim or name null words, so a quoted field is read differently.
        let readsQuotedFieldsDifferently: Bool
        /// The options' words for true and false, lowercased, as bytes (the fast path's booleans).
        let trueWordBytes: [[UInt8]]
        let falseWordBytes: [[UInt8]]
        /// The options' date pattern, if they name one (the fast path's dates).
        let datePattern: DatePattern?

        init(attribute: AttributeDescription, source: Source, options: CoercionOptions) {
            self.attribute = attribute
            self.type = attribute.type
            self.source = source
            self.options = options
            self.literalOptions = options.literal
            self.readsQuotedFieldsDifferently = options != options.literal
            self.trueWordBytes = options.trueWords.map { Array($0.lowercased().utf8) }
            self.falseWordBytes = options.falseWords.map { Array($0.lowercased().utf8) }
            if case .pattern(let pattern) = options.dateFormat { datePattern = pattern } else { datePattern = nil }
        }

        /// The options for a field: quoted CSV fields are taken literally.
        @inline(__always)
        func options(quoted: Bool) -> CoercionOptions { quoted ? literalOptions : options }
    }

    final class ReferenceColumn {
        let mapping: RelationshipMapping
        let fieldIndex: Int
        let resolver: ReferenceResolver
        let options: CoercionOptions
        let literalOptions: CoercionOptions
        /// The relationship may point to an object of the step's own entity (its destination is
        /// the entity or an ancestor), so to an earlier record of the same import.
        let reachesOwnEntity: Bool

        init(
            mapping: RelationshipMapping, fieldIndex: Int, resolver: ReferenceResolver, options: CoercionOptions,
            reachesOwnEntity: Bool
        ) {
            self.mapping = mapping
            self.fieldIndex = fieldIndex
            self.resolver = resolver
            self.options = options
            self.literalOptions = options.literal
            self.reachesOwnEntity = reachesOwnEntity
        }

        /// The options for a field: quoted CSV fields are taken literally.
        @inline(__always)
        func options(quoted: Bool) -> CoercionOptions { quoted ? literalOptions : options }
    }

    struct Failure: Error {
        var field: String?
        var line: Int
        var column: Int
        var reason: String
    }

    let entity: EntityDescription
    /// The entity's table, quoted.
    let table: String
    let attributes: [AttributeColumn]
    let references: [ReferenceColumn]
    /// Writes each record: SQLite's ``BatchInserter``, or with `nested:` PostgreSQL's
    /// ``PostgresRecordInserter`` (the records' keys link what they nest); nil when
    /// ``stagingInserter`` writes them.
    let recordInserter: (any KeyedRecordInserting)?
    /// Writes records in batches: PostgreSQL's ``PostgresStagedInserter`` (every conflict policy).
    let stagingInserter: (any StagingRecordInserter)?
    /// SQLite's inserter, which the fast path binds values to directly (nil on PostgreSQL).
    let sqliteInserter: BatchInserter?
    /// PostgreSQL's inserter, which the fast path stages encoded rows in (nil on SQLite).
    let postgresInserter: PostgresStagedInserter?
    /// The inserter's validator of each column (nil when validation is off or for a relationship)
    /// and the default of each column's attribute: what the fast path checks and fills in.
    let columnValidators: [AttributeValidator?]
    let columnDefaults: [Value?]
    /// True when some field may be absent from a record (JSON), so the supplied mask matters.
    let hasOptionalFields: Bool
    /// A `mode: sync` step's tracker of the rows the source has (nil otherwise).
    let sync: SyncTracker?
    /// For a sync: the indexes (into ``attributes``) of the key's columns.
    private let syncKeyColumns: [Int]
    /// The related objects records nest (`nested:`), whose to-one keys are the last columns; nil when off.
    let nested: NestedObjects?
    /// The fast path's plain per-field view of ``attributes`` (see ``FastField``).
    let fastFields: [FastField]
    /// Where the importing thread coerces a record for PostgreSQL's fast path when the read-ahead
    /// thread did not (see `stageFast(from:kinds:)`).
    let stagingScratch: CoercedRows
    /// PostgreSQL: the offsets (into ``references``) whose keys are resolved a batch at a time
    /// (``prefetchReferences(in:)``), not record by record; empty on SQLite.
    let prefetchedReferences: [Int]
    /// The fields the step reads that a CSV or fixed-width source lacks, with the attribute or
    /// relationship each is read into, read as null (`on_missing_field: null`).
    let missingFields: [(field: String, reader: String)]
    var columnCount: Int { attributes.count + references.count + (nested?.insertColumns.count ?? 0) }

    /// The source fields some attribute or relationship reads.
    var mappedFieldNames: Set<String> {
        var names = Set(references.map(\.mapping.field))
        names.formUnion(nested?.fieldNames ?? [])
        for column in attributes {
            if case .field(_, let name) = column.source { names.insert(name) }
        }
        return names
    }

    /// The null words coercion compares for a column of named text columns (CSV, fixed-width).
    /// The reader compares the step's words with unquoted fields as written, so coercion
    /// compares them again only when it trims, which can turn a field into one: with `trim` and
    /// `null: [""]` a field of blanks is null, not the empty string. Quoted fields are taken
    /// literally either way (``CoercionOptions/literal``).
    static func nullWordsAfterReading(_ options: CoercionOptions, trims: Bool) -> Set<String> {
        trims ? options.nullTokens : []
    }

    /// A field the step reads by its attribute's name that a CSV or fixed-width source lacks,
    /// with `on_missing_field: error`: located at the header.
    static func missingFieldError(
        _ field: String, attribute: String, step: ImportStep, reader: any RecordReader
    )
        -> FerryError
    {
        FerryError(
            .invalidInput,
            "the source has no field '\(field)', which the step reads into \(step.entity).\(attribute) (on_missing_field: error)",
            at: InputLocation(file: reader.sourceName, line: SchemaDriftCheck.headerLine(of: reader)),
            notes: [
                "columns: \(reader.fieldNames.joined(separator: ", "))",
                "a renamed column is a missing field plus a new one: map the new name in 'fields:', or set 'on_missing_field: null' on the step (--on-missing-field null) to read it as null",
            ])
    }

    init(
        step: ImportStep, reader: any RecordReader, database: any DatabaseConnection, model: ObjectModel,
        layout: any StoreLayout
    ) throws {
        guard let entity = model.entity(named: step.entity) else {
            throw FerryError(.invalidDefinition, "the model has no entity '\(step.entity)'", at: step.location)
        }
        self.entity = entity
        table = layout.quotedTable(for: entity)
        try reader.prepare()
        // Named text columns (CSV, fixed-width): the columns are known, the reader applies null words.
        let isCSV = step.format.readsTextColumns
        if step.nested != nil, let problem = NestedOptions.problem(with: step.format, named: step.formatName) {
            throw FerryError(.invalidDefinition, problem, at: step.location)
        }
        var attributes: [AttributeColumn] = []
        // Fields the step reads that the source lacks, read as null (`on_missing_field: null`).
        var missing: [(field: String, reader: String)] = []
        for attribute in entity.attributes {
            let explicit = step.fields.first { $0.attribute == attribute.name }
            var options = step.coercion
            if isCSV {
                options.nullTokens = Self.nullWordsAfterReading(options, trims: explicit?.trim ?? options.trim)
            }
            if let explicit {
                options = explicit.options(overriding: options)
                switch explicit.source {
                case .constant(let text):
                    switch Coercion.coerce(text, to: attribute.type, options: options) {
                    case .success(let value):
                        attributes.append(
                            AttributeColumn(attribute: attribute, source: .constant(value), options: options))
                    case .failure(let failure):
                        throw FerryError(
                            .invalidDefinition, "constant for \(entity.name).\(attribute.name): \(failure.reason)",
                            at: explicit.location)
                    }
                case .field(let name):
                    if isCSV && !reader.hasField(name) {
                        guard step.drift.onMissingField == .null else {
                            throw FerryError(
                                .invalidInput,
                                "\(step.source) has no column '\(name)' (mapped to \(attribute.name))",
                                at: explicit.location,
                                notes: [
                                    "columns: \(reader.fieldNames.joined(separator: ", "))",
                                    "set 'on_missing_field: null' on the step (--on-missing-field null) to read it as null",
                                ])
                        }
                        missing.append((name, attribute.name))
                        attributes.append(
                            AttributeColumn(attribute: attribute, source: .constant(.null), options: options))
                        continue
                    }
                    attributes.append(
                        AttributeColumn(
                            attribute: attribute, source: .field(index: reader.fieldIndex(of: name), name: name),
                            options: options))
                }
            } else {
                let name = step.keyStyle.fieldName(for: attribute)
                if !isCSV || reader.hasField(name) {
                    attributes.append(
                        AttributeColumn(
                            attribute: attribute, source: .field(index: reader.fieldIndex(of: name), name: name),
                            options: options))
                } else if let policy = step.drift.missingField {
                    // A step that says what a missing field does expects every field it reads by name.
                    if policy == .error {
                        throw Self.missingFieldError(name, attribute: attribute.name, step: step, reader: reader)
                    }
                    missing.append((name, attribute.name))
                }
            }
        }
        var references: [ReferenceColumn] = []
        for mapping in step.relationships {
            if isCSV && !reader.hasField(mapping.field) {
                guard step.drift.onMissingField == .null else {
                    throw FerryError(
                        .invalidInput,
                        "\(step.source) has no column '\(mapping.field)' (used for relationship \(mapping.relationship))",
                        at: mapping.location,
                        notes: [
                            "columns: \(reader.fieldNames.joined(separator: ", "))",
                            "set 'on_missing_field: null' on the step (--on-missing-field null) to leave the relationship empty",
                        ])
                }
                missing.append((mapping.field, mapping.relationship))
                continue
            }
            let resolver: ReferenceResolver
            do {
                resolver = try ReferenceResolver(
                    database: database, model: model, layout: layout, entity: entity.name,
                    relationship: mapping.relationship, match: mapping.match)
            } catch var error as FerryError {
                error.location = mapping.location
                throw error
            }
            var options = step.coercion
            if isCSV { options.nullTokens = Self.nullWordsAfterReading(options, trims: options.trim) }
            references.append(
                ReferenceColumn(
                    mapping: mapping, fieldIndex: reader.fieldIndex(of: mapping.field), resolver: resolver,
                    options: options,
                    reachesOwnEntity: model.isKind(entity.name, of: resolver.destination.name)))
        }
        let readsAField =
            !references.isEmpty
            || attributes.contains { if case .field = $0.source { return true } else { return false } }
        if isCSV && !readsAField && !entity.attributes.isEmpty {
            // Every record would lack every field: rows of empty values, never what was meant.
            throw FerryError(
                .invalidInput,
                "no column of \(step.source) matches an attribute of \(entity.name) (is the delimiter right?)",
                at: InputLocation(file: step.source, line: 1, column: 1),
                notes: [
                    "columns: \(reader.fieldNames.joined(separator: ", "))",
                    "attributes: \(entity.attributes.map(\.name).joined(separator: ", "))",
                ])
        }
        self.attributes = attributes
        self.references = references
        self.missingFields = missing
        self.hasOptionalFields = !isCSV
        let columns =
            attributes.map { InsertColumn.attribute($0.attribute.name) }
            + references.map { InsertColumn.relationship($0.mapping.relationship) }
        let tracker: SyncTracker?
        if step.mode == .sync {
            let key = try SyncKey.attributes(of: step, entity: entity)
            var keyColumns: [Int] = []
            for name in key {
                guard let index = attributes.firstIndex(where: { $0.attribute.name == name }) else {
                    throw FerryError(
                        .invalidInput,
                        "\(step.source) supplies no field for \(entity.name).\(name), which is part of the sync key (\(key.joined(separator: ", ")))",
                        at: step.keyLocation ?? step.location,
                        notes: reader.fieldNames.isEmpty ? [] : ["fields: \(reader.fieldNames.joined(separator: ", "))"]
                    )
                }
                keyColumns.append(index)
            }
            syncKeyColumns = keyColumns
            tracker = try SyncTracker(database: database, model: model, layout: layout, entity: entity, key: key)
        } else {
            syncKeyColumns = []
            tracker = nil
        }
        sync = tracker
        // The engine's session makes the step's writers (ImportPlan+Writers.swift).
        guard let session = database as? any ImportSession else {
            throw FerryError(.internal, "an import into a store whose engine writes no imports")
        }
        let writers = try session.importWriters(
            for: ImportWriterRequest(
                step: step, entity: entity, reader: reader, model: model, layout: layout, columns: columns,
                attributeCount: attributes.count, references: references, sync: tracker))
        nested = writers.nested
        recordInserter = writers.recordInserter
        stagingInserter = writers.stagingInserter
        sqliteInserter = writers.sqliteInserter
        postgresInserter = writers.postgresInserter
        columnValidators = writers.columnValidators
        columnDefaults = writers.columnDefaults
        // An import without nested objects writes only its entity (a sync deletes objects only
        // after its last record): a reference to an entity outside the
        // step's family keeps its destination as it is, so its keys are resolved a batch at a
        // time, one query per reference, and remembered until the transaction ends. A key of
        // the entity itself (or of one it is a kind of, or a kind of it) may name a record of
        // this import or one it updates: it is looked up when met.
        if nested == nil && sqliteInserter == nil {
            prefetchedReferences = references.indices.filter {
                !references[$0].reachesOwnEntity
                    && !model.isKind(references[$0].resolver.destination.name, of: entity.name)
            }
            for offset in prefetchedReferences { references[offset].resolver.resolveFromSnapshot() }
        } else {
            prefetchedReferences = []
        }
        fastFields = Self.fastFields(for: attributes, validators: columnValidators)
        stagingScratch = CoercedRows(columnCount: attributes.count, referenceCount: references.count)
    }

    /// True when ferry itself proves every reference the step writes: each is the primary key of
    /// an object the resolver found in the destination inside the step's transaction (or NULL),
    /// and the step deletes nothing (no sync) and writes no nested objects. SQLite's own
    /// foreign-key check of each written row (a lookup of the destination's row) is then redundant.
    var provesReferences: Bool { sqliteInserter != nil && sync == nil && nested == nil && !references.isEmpty }

    /// Turns SQLite's foreign-key enforcement off for the step's transactions when
    /// ``provesReferences``; true when it did, and ``resumeForeignKeyChecks(on:)`` must follow.
    /// Inside a caller's transaction (where the pragma does nothing) or on PostgreSQL it does nothing.
    func suspendForeignKeyChecks(on database: any DatabaseConnection) throws -> Bool {
        guard provesReferences else { return false }
        return try database.suspendForeignKeyChecks()
    }

    /// Inside an atomic step's transaction into an empty table whose references the step proves
    /// (no sync, no nested objects): lifts the engine's per-row reference checks of the table
    /// (PostgreSQL's foreign-key triggers) and returns the statements that check every row at
    /// once, to run before the commit. Empty when nothing was lifted.
    func liftReferenceChecks(on database: any DatabaseConnection) throws -> [String] {
        guard !references.isEmpty, sync == nil, nested == nil else { return [] }
        return try database.liftReferenceChecks(forBulkLoadInto: table)
    }

    /// Turns SQLite's foreign-key enforcement back on after ``suspendForeignKeyChecks(on:)``.
    func resumeForeignKeyChecks(on database: any DatabaseConnection) throws {
        try database.resumeForeignKeyChecks()
    }

    /// Call at the start of each of the step's transactions: a reference resolver's copy of its
    /// destination's keys is dropped when another connection committed since it was taken.
    func beginTransaction() throws {
        for reference in references { try reference.resolver.revalidateSnapshot() }
        nested?.beginTransaction()
    }

    /// The typed key of a record a sync rejected, nil when the record is malformed or a key
    /// field is missing, null or unreadable (so the row it stands for cannot be told).
    func syncKey(of record: SourceRecord) -> [Value]? {
        guard sync != nil, record.problem == nil else { return nil }
        var values: [Value] = []
        for index in syncKeyColumns {
            let column = attributes[index]
            switch column.source {
            case .constant(let value):
                values.append(value)
            case .field(let fieldIndex, _):
                guard let field = record[fieldIndex],
                    case .success(let value) = Self.coerce(
                        field.value, to: column.type, options: column.options(quoted: field.quoted)), !value.isNull
                else { return nil }
                values.append(value)
            }
        }
        return values
    }

    /// Notes that the row holding a rejected record's key (`key`: from ``syncKey(of:)``) is in
    /// the source: on SQLite at once, on PostgreSQL in the record's place among the staged ones.
    func markPresent(key: [Value]) throws {
        guard let sync else { return }
        guard let staging = stagingInserter else { return try sync.markPresent(key: key) }
        var values = Array(repeating: Value.null, count: columnCount)
        for (position, index) in syncKeyColumns.enumerated() { values[index] = key[position] }
        try staging.stagePresent(key: values)
    }

    /// A sync's key of the values just written (aligned with the inserter's columns): `id=4`.
    func syncKeyDescription(of values: [Value]) -> String {
        SyncTracker.describe(
            key: syncKeyColumns.map { attributes[$0].attribute.name }, values: syncKeyColumns.map { values[$0] })
    }

    /// Fills `values` (one per column) from a record; a failure names the field and its location.
    ///
    /// `writeStaged` writes the records a ``stagingInserter`` keeps (returning false when it
    /// kept none): called before a reference to this entity's own table that found no object is
    /// looked up again, since the object may be an earlier record of the same import.
    func fill(
        record: SourceRecord, values: inout [Value], supplied: inout [Bool], writeStaged: () throws -> Bool = { false }
    ) throws -> Result<Void, Failure> {
        for index in 0..<attributes.count {
            let column = attributes[index]
            switch column.source {
            case .constant(let value):
                values[index] = value
                supplied[index] = true
            case .field(let fieldIndex, let name):
                guard let field = record[fieldIndex] else {
                    values[index] = .null
                    supplied[index] = false
                    continue
                }
                supplied[index] = true
                switch Self.coerce(field.value, to: column.type, options: column.options(quoted: field.quoted)) {
                case .success(let value): values[index] = value
                case .failure(let failure):
                    return .failure(
                        Failure(
                            field: name, line: field.line, column: field.column,
                            reason: "\(column.attribute.name): \(failure.reason)"))
                }
            }
        }
        for offset in 0..<references.count {
            let reference = references[offset]
            let index = attributes.count + offset
            supplied[index] = true
            guard let field = record[reference.fieldIndex] else {
                values[index] = .null
                if reference.mapping.missing == .reject {
                    return .failure(
                        Failure(
                            field: reference.mapping.field, line: record.line, column: record.column,
                            reason:
                                "\(reference.mapping.relationship): the record has no field '\(reference.mapping.field)'"
                        ))
                }
                continue
            }
            let key: Value
            switch Self.coerce(
                field.value, to: reference.resolver.matchAttribute.type,
                options: reference.options(quoted: field.quoted))
            {
            case .success(let value): key = value
            case .failure(let failure):
                return .failure(
                    Failure(
                        field: reference.mapping.field, line: field.line, column: field.column,
                        reason: "\(reference.mapping.relationship): \(failure.reason)"))
            }
            if key.isNull {
                values[index] = .null
                continue
            }
            var primaryKey = try reference.resolver.resolve(key)
            if primaryKey == nil, reference.reachesOwnEntity, try writeStaged() {
                primaryKey = try reference.resolver.resolve(key)
            }
            if let primaryKey {
                values[index] = .integer(primaryKey)
            } else if reference.mapping.missing == .null {
                values[index] = .null
            } else {
                return .failure(
                    Failure(
                        field: reference.mapping.field, line: field.line, column: field.column,
                        reason:
                            ReferenceResolver.unmatchedKeyReason(
                                entity: reference.resolver.entityName, relationship: reference.mapping.relationship,
                                destination: reference.resolver.destination.name, attribute: reference.mapping.match,
                                key: "\(key)")
                    ))
            }
        }
        return .success(())
    }

    /// Where the value of an inserter column came from in a record.
    func location(ofColumn column: Int, in record: SourceRecord) -> (line: Int, column: Int)? {
        let index: Int
        if column < attributes.count {
            guard case .field(let fieldIndex, _) = attributes[column].source else { return nil }
            index = fieldIndex
        } else if column >= attributes.count + references.count {
            return nil
        } else {
            index = references[column - attributes.count].fieldIndex
        }
        return record[index].map { ($0.line, $0.column) }
    }

    func fieldName(ofColumn column: Int) -> String? {
        if column < attributes.count {
            if case .field(_, let name) = attributes[column].source { return name }
            return nil
        }
        if column >= attributes.count + references.count { return nil }
        return references[column - attributes.count].mapping.field
    }

    /// Coerces a reader's field value to an attribute type.
    static func coerce(
        _ value: FieldValue, to type: AttributeType, options: CoercionOptions
    ) -> Result<Value, CoercionFailure> {
        switch value {
        case .null: return .success(.null)
        case .text(let text):
            return Coercion.coerce(text, to: type, options: options)
        case .number(let text):
            // A JSON number is spelled the JSON way whatever the text fields use.
            var numberOptions = options
            numberOptions.decimalComma = false
            return Coercion.coerce(text, to: type, options: numberOptions)
        case .bool(let flag):
            switch type {
            case .bool: return .success(.bool(flag))
            case .string: return .success(.string(flag ? "true" : "false"))
            case .json: return .success(.json(flag ? "true" : "false"))
            default: return .failure(CoercionFailure("expected \(type.rawValue) but found a boolean"))
            }
        case .json(let text):
            switch type {
            case .json: return .success(.json(text))
            case .string: return .success(.string(text))
            default:
                return .failure(
                    CoercionFailure(
                        "expected \(type.rawValue) but found a JSON \(text.hasPrefix("[") ? "array" : "object")"))
            }
        case .typed(let typed):
            return Coercion.convert(typed, to: type, options: options)
        }
    }
}
