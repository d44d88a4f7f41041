/// How one entity mapping is carried out: the SQL for the set-based path (`INSERT … SELECT`),
/// or the `SELECT` and per-row value computation of the row path.
package struct EntityPlan {
    package struct SQLText {
        package var text: String
        package var arguments: [DatabaseValue]

        package init(text: String, arguments: [DatabaseValue]) {
            self.text = text
            self.arguments = arguments
        }
    }

    /// Where a destination attribute's value comes from.
    enum ValueSource {
        /// A selected column (decoded to the source attribute's type), widened, with a fallback for nil.
        case column(Int, conversion: TypeConversion?, valueIfNil: Value)
        /// An expression whose slots are selected columns.
        case expression(BoundExpression, slots: [Int])
        case constant(Value)
    }

    let mapping: MappingModel.EntityMapping
    let source: EntityDescription
    let destination: EntityDescription
    /// How the source store and the destination store lay out and code their values.
    let sourceLayout: any StoreLayout
    let destinationLayout: any StoreLayout
    /// The source's value coding, fetched once: the row path decodes every value with it.
    private let sourceCoding: DispatchedValueCoding
    /// Selected columns after `t0.ferry_pk` (index 0): their SQL and how to decode them.
    private(set) var selectColumns: [(sql: SQLText, type: AttributeType?)] = []
    /// Destination attributes, in model order: their value source and SQL (nil when SQL cannot
    /// compute the value exactly).
    private(set) var attributes: [(name: String, source: ValueSource, sql: SQLText?)] = []
    /// Destination foreign-key columns: the selected column holding the key, and its SQL.
    private(set) var foreignKeys: [(column: String, index: Int, sql: SQLText)] = []
    /// Core Data's `Z_FOK_` columns beside those keys whose inverse is an ordered to-many: the
    /// source object's position when the source relationship kept one too (NULL otherwise; the
    /// step's bookkeeping puts such objects after the ordered ones, ``CoreDataMigrationDestination``).
    private(set) var orderColumns: [(column: String, index: Int, sql: SQLText)] = []
    /// True when some attribute is copied from a source attribute of another type without a
    /// conversion (its stored form may not suit the destination type).
    private var copiesAcrossTypes = false
    /// Source attribute name → selected column (all source attributes are selected).
    private(set) var sourceColumns: [String: Int] = [:]
    private(set) var sourceRelationshipColumns: [String: Int] = [:]
    private(set) var filter: SQLText? = nil
    private(set) var distinct: BoundExpression? = nil
    private(set) var distinctSlots: [Int] = []
    /// Source attributes and to-one relationships at their positions in the selected row (after
    /// the key), for ``sourceObject(row:key:)``.
    private(set) var sourceObjectColumns = MigrationColumns(names: [], offset: 1)
    /// The destination's columns in insert order: attributes in model order, then foreign keys,
    /// then Core Data's order columns (as `MigrationObjectWriter` prepares its inserts).
    private(set) var insertColumns: [String] = []
    /// One closure per destination attribute, made once: the row path calls them per object
    /// without copying the plan's descriptions.
    private(set) var programs: [(_ row: [Value], _ key: Int64) throws -> Value] = []
    /// For policies, rows read value by value from the selected row (``SelectedRowValues``):
    /// where each storage index of the source object's rows and of the mapped destination rows
    /// comes from, and the destination rows' constants. Nil when some destination value is
    /// computed from the decoded row (a conversion, an expression, another value coding, another
    /// type) or a row has more than 64 values: the row is then decoded in full.
    private(set) var lazyRows:
        (source: [SelectedRowValues.Slot?], destination: [SelectedRowValues.Slot?], constants: [Value])?

    init(
        mapping: MappingModel.EntityMapping, source: EntityDescription, destination: EntityDescription,
        step: MigrationStepScope
    ) throws {
        self.mapping = mapping
        self.source = source
        self.destination = destination
        let sourceModel = step.source
        let destinationModel = step.destination
        let sourceLayout = step.sourceLayout
        let destinationLayout = step.destinationLayout
        self.sourceLayout = sourceLayout
        self.destinationLayout = destinationLayout
        self.sourceCoding = DispatchedValueCoding(sourceLayout.valueCoding)
        // Stored forms copy as they are only between the same value coding; otherwise every
        // value goes through Swift (decoded from the source's form, encoded in the destination's).
        let setBased = sourceLayout.valueCoding.name == destinationLayout.valueCoding.name
        let sourceQuote = sourceLayout.dialect.quote

        // Every source attribute, so that copies, policies and expressions can read them.
        for attribute in source.attributes {
            sourceColumns[attribute.name] = select(
                SQLText(
                    text: "t0.\(sourceLayout.quotedColumn(forAttribute: attribute.name, in: source))", arguments: []),
                type: attribute.type)
        }
        for relationship in source.relationships where !relationship.isToMany {
            if case .foreignKey(let column) = sourceLayout.storage(of: relationship, in: source, model: sourceModel) {
                sourceRelationshipColumns[relationship.name] = select(
                    SQLText(text: "t0.\(sourceQuote(column))", arguments: []), type: nil)
            }
        }

        for attribute in destination.attributes {
            let rule = mapping.attribute(named: attribute.name)?.value ?? .constant(attribute.defaultValue ?? .null)
            switch rule {
            case .constant(let value):
                attributes.append(
                    (
                        attribute.name, .constant(value),
                        SQLText(text: "?", arguments: [destinationLayout.valueCoding.encode(value)])
                    ))
            case .copy(let sourceName, let conversion, let valueIfNil):
                guard let index = sourceColumns[sourceName], let sourceAttribute = source.attribute(named: sourceName)
                else {
                    throw FerryError(
                        .migration,
                        "mapping \(mapping.name): \(source.name) has no attribute '\(sourceName)' to copy into \(attribute.name)",
                        at: mapping.location)
                }
                var text = "t0.\(sourceLayout.quotedColumn(forAttribute: sourceName, in: source))"
                var exact = setBased
                if conversion == nil && sourceAttribute.type != attribute.type { copiesAcrossTypes = true }
                if let conversion, conversion.isChecked {
                    exact = false  // each value is checked on the row path
                } else if let conversion {
                    switch (sourceAttribute.type, attribute.type) {
                    case (_, .decimal), (_, .string): text = "CAST(\(text) AS TEXT)"
                    case (_, .double): text = "CAST(\(text) AS REAL)"
                    case (.int16, _), (.int32, _), (.int64, _): break
                    default: exact = false
                    }
                    _ = conversion
                }
                var arguments: [DatabaseValue] = []
                if !valueIfNil.isNull {
                    text = "COALESCE(\(text), ?)"
                    arguments.append(destinationLayout.valueCoding.encode(valueIfNil))
                }
                attributes.append(
                    (
                        attribute.name, .column(index, conversion: conversion, valueIfNil: valueIfNil),
                        exact ? SQLText(text: text, arguments: arguments) : nil
                    ))
            case .expression(let text):
                let location = mapping.attribute(named: attribute.name)?.location
                let bound: BoundExpression
                do {
                    bound = try Expression.parse(text, location: location)
                        .bind(source: source, model: sourceModel, parameters: step.options.parameters, now: step.now)
                        .fitted(to: attribute)
                } catch {
                    throw error
                }
                var slots: [Int] = []
                var slotSQL: [String] = []
                for keyPath in bound.keyPaths {
                    let sql = Self.keyPathSQL(keyPath.components, in: source, model: sourceModel, layout: sourceLayout)
                    if keyPath.components.count == 1, let index = sourceColumns[keyPath.components[0]] {
                        slots.append(index)
                    } else {
                        slots.append(select(SQLText(text: sql, arguments: []), type: keyPath.attribute.type))
                    }
                    slotSQL.append(sql)
                }
                // Expressions compile to SQL over ferry's stored forms.
                let sql =
                    setBased
                    ? bound.sql(column: { slotSQL[$0] }, dialect: destinationLayout.dialect).map {
                        SQLText(text: $0.text, arguments: $0.arguments.map(destinationLayout.valueCoding.encode))
                    } : nil
                attributes.append((attribute.name, .expression(bound, slots: slots), sql))
            }
        }

        for relationship in destination.relationships {
            guard
                case .foreignKey(let column) = destinationLayout.storage(
                    of: relationship, in: destination, model: destinationModel)
            else { continue }
            let rule = mapping.relationship(named: relationship.name)?.value ?? .none
            var sql = SQLText(text: "NULL", arguments: [])
            switch rule {
            case .none:
                break
            case .carry(let sourceName):
                guard let sourceRelationship = source.relationship(named: sourceName) else {
                    throw FerryError(
                        .migration,
                        "mapping \(mapping.name): \(source.name) has no relationship '\(sourceName)' to carry into \(relationship.name)",
                        at: mapping.location)
                }
                var key = Self.relatedKeySQL(sourceRelationship, in: source, model: sourceModel, layout: sourceLayout)
                if let kept = Self.keptLinkSQL(
                    sourceRelationship, becoming: relationship, in: source, sourceModel: sourceModel,
                    destinationModel: destinationModel, layout: sourceLayout)
                {
                    key = kept
                }
                sql = try step.mappedKeySQL(
                    key, entity: relationship.destination, sourceEntity: sourceRelationship.destination)
            case .keyPath(let path):
                var entity = source
                for name in path {
                    guard let hop = entity.relationship(named: name), !hop.isToMany,
                        let next = sourceModel.entity(named: hop.destination)
                    else {
                        throw FerryError(
                            .migration,
                            "mapping \(mapping.name): \(path.joined(separator: ".")) is not a chain of to-one relationships of \(source.name) (at '\(name)')",
                            at: mapping.location)
                    }
                    entity = next
                }
                let key = Self.keyPathSQL(
                    path, in: source, model: sourceModel, layout: sourceLayout, selectingKey: true)
                sql = try step.mappedKeySQL(key, entity: relationship.destination, sourceEntity: entity.name)
            case .fromMapping(let name):
                guard let target = step.mapping.entity(named: name) else {
                    throw FerryError(
                        .migration,
                        "mapping \(mapping.name): relationship \(relationship.name) names an unknown mapping '\(name)'",
                        at: mapping.location)
                }
                if step.isIdentity(target) {
                    sql = SQLText(text: "t0.\(sourceQuote(sourceLayout.keyColumn))", arguments: [])
                } else {
                    sql = SQLText(
                        text:
                            "(SELECT destination FROM links.assoc WHERE mapping = ? AND source = t0.\(sourceQuote(sourceLayout.keyColumn)) LIMIT 1)",
                        arguments: [.text(name)])
                }
            }
            foreignKeys.append((column, select(sql, type: nil), sql))
            if let order = destinationLayout.orderColumn(
                forForeignKeyOf: relationship, in: destination, model: destinationModel)
            {
                var position = SQLText(text: "NULL", arguments: [])
                if case .carry(let sourceName) = rule, let sourceRelationship = source.relationship(named: sourceName),
                    let carried = sourceLayout.orderColumn(
                        forForeignKeyOf: sourceRelationship, in: source, model: sourceModel)
                {
                    position = SQLText(text: "t0.\(sourceQuote(carried))", arguments: [])
                }
                orderColumns.append((order, select(position, type: nil), position))
            }
        }

        if let text = mapping.filter {
            let predicate = try Predicate(format: text, location: mapping.filterLocation).bound(
                to: source, model: sourceModel)
            let compiled = try predicate.sql(for: source, model: sourceModel, layout: sourceLayout, alias: "t0")
            filter = SQLText(text: compiled.sql, arguments: compiled.arguments)
        } else {
            filter = nil
        }
        if let text = mapping.distinct {
            let bound = try Expression.parse(text, location: mapping.distinctLocation)
                .bind(source: source, model: sourceModel, parameters: step.options.parameters, now: step.now)
            var slots: [Int] = []
            for keyPath in bound.keyPaths {
                if keyPath.components.count == 1, let index = sourceColumns[keyPath.components[0]] {
                    slots.append(index)
                } else {
                    slots.append(
                        select(
                            SQLText(
                                text: Self.keyPathSQL(
                                    keyPath.components, in: source, model: sourceModel, layout: sourceLayout),
                                arguments: []), type: keyPath.attribute.type))
                }
            }
            distinct = bound
            distinctSlots = slots
        } else {
            distinct = nil
        }
        // Attributes are selected first, in model order, then the to-one keys (as
        // ``sourceColumnNames(of:model:layout:)`` lists them): the row after its key.
        let sourceNames = Self.sourceColumnNames(of: source, model: sourceModel, layout: sourceLayout)
        let attributeCount = source.attributes.count
        let inOrder = sourceNames.enumerated().allSatisfy { position, name in
            (position < attributeCount ? sourceColumns[name] : sourceRelationshipColumns[name]) == position + 1
        }
        guard inOrder else {
            throw FerryError(
                .migration, "mapping \(mapping.name): the source columns of \(source.name) are not selected in order")
        }
        sourceObjectColumns = MigrationColumns(names: sourceNames, offset: 1)
        insertColumns = attributes.map(\.name) + foreignKeys.map(\.column) + orderColumns.map(\.column)
        lazyRows =
            setBased
            ? Self.lazyRows(
                attributes: attributes, keys: foreignKeys + orderColumns, selectColumns: selectColumns,
                source: source, destination: destination, coding: destinationLayout.valueCoding) : nil
        let sourceName = source.name
        programs = attributes.map { attribute in
            switch attribute.source {
            case .constant(let value):
                return { _, _ in value }
            case .column(let index, let conversion, let valueIfNil):
                if let conversion, conversion.isChecked {
                    let name = attribute.name
                    return { row, key in
                        if row[index].isNull { return valueIfNil }
                        guard let value = conversion.convertedIfFits(row[index]) else {
                            throw FerryError(
                                .migration,
                                "\(sourceName) object \(key): \(name) value \(row[index]) does not fit \(conversion.to.rawValue); the inferred \(conversion.from.rawValue) → \(conversion.to.rawValue) conversion converts only values that fit exactly",
                                notes: [
                                    "nothing was changed: the original store is as it was",
                                    "fix the value, or write a mapping that converts \(name)",
                                ])
                        }
                        return value
                    }
                }
                if let conversion {
                    return { row, _ in row[index].isNull ? valueIfNil : conversion.apply(to: row[index]) }
                }
                return { row, _ in row[index].isNull ? valueIfNil : row[index] }
            case .expression(let expression, let slots):
                return { row, key in
                    try expression.evaluate(on: SlotContext(row: row, slots: slots, entity: sourceName, key: key))
                }
            }
        }
    }

    /// The slots of ``lazyRows``, or nil when some destination value is not a source value as
    /// stored (of the same type), a constant or a to-one key.
    private static func lazyRows(
        attributes: [(name: String, source: ValueSource, sql: SQLText?)],
        keys: [(column: String, index: Int, sql: SQLText)], selectColumns: [(sql: SQLText, type: AttributeType?)],
        source: EntityDescription, destination: EntityDescription, coding: any ValueCoding
    ) -> (source: [SelectedRowValues.Slot?], destination: [SelectedRowValues.Slot?], constants: [Value])? {
        guard selectColumns.count < 64, attributes.count + keys.count <= 64 else { return nil }
        func slot(_ column: Int, ifNil: Value = .null) -> SelectedRowValues.Slot {
            let type = selectColumns[column - 1].type
            return SelectedRowValues.Slot(
                column: Int32(column), type: type, storageClass: type.map(coding.storageClass(for:)) ?? .integer,
                valueIfNil: ifNil)
        }
        var destinationSlots: [SelectedRowValues.Slot?] = []
        var constants: [Value] = []
        for attribute in attributes {
            switch attribute.source {
            case .constant(let value):
                destinationSlots.append(nil)
                constants.append(value)
            case .column(let index, .none, let valueIfNil):
                guard let type = destination.attribute(named: attribute.name)?.type,
                    selectColumns[index - 1].type == type
                else { return nil }
                destinationSlots.append(slot(index, ifNil: valueIfNil))
                constants.append(.null)
            case .column, .expression:
                return nil
            }
        }
        for key in keys {
            destinationSlots.append(slot(key.index))
            constants.append(.null)
        }
        return ([nil] + selectColumns.indices.map { slot($0 + 1) }, destinationSlots, constants)
    }

    /// Adds a selected column; returns its index in the row (0 is the primary key).
    private mutating func select(_ sql: SQLText, type: AttributeType?) -> Int {
        selectColumns.append((sql, type))
        return selectColumns.count
    }

    /// The source entity's own rows: neither those of other entities sharing its table (Core
    /// Data's layout) nor its sub-entities' (which their own mappings migrate).
    private var fromClause: String { "FROM \(sourceLayout.quotedOwnRows(for: source)) AS t0" }

    /// The source's quoted key column.
    private var sourceKey: String { sourceLayout.dialect.quote(sourceLayout.keyColumn) }

    /// The set-based statement, or nil when some value needs the row path.
    func insertSelectSQL(into schema: String) -> SQLText? {
        let quote = destinationLayout.dialect.quote
        var columns = [quote(destinationLayout.keyColumn)]
        var values = ["t0.\(sourceKey)"]
        var arguments: [DatabaseValue] = []
        for attribute in attributes {
            guard let sql = attribute.sql else { return nil }
            columns.append(destinationLayout.quotedColumn(forAttribute: attribute.name, in: destination))
            values.append(sql.text)
            arguments += sql.arguments
        }
        for foreignKey in foreignKeys + orderColumns {
            columns.append(quote(foreignKey.column))
            values.append(foreignKey.sql.text)
            arguments += foreignKey.sql.arguments
        }
        // Core Data's Z_ENT, and Z_OPT carried from a Core Data source (1 otherwise).
        let carried = sourceLayout.versionColumn.map { "t0.\(sourceLayout.dialect.quote($0))" } ?? "1"
        for (column, value) in CoreDataMigrationDestination.rowBookkeeping(
            of: destination, in: destinationLayout, version: carried)
        {
            columns.append(quote(column))
            values.append(value)
        }
        let table = destinationLayout.dialect.qualified(destinationLayout.table(for: destination), in: schema)
        var text =
            "INSERT INTO \(table) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) \(fromClause)"
        if let filter {
            text += " WHERE \(filter.text)"
            arguments += filter.arguments
        }
        return SQLText(text: text, arguments: arguments)
    }

    /// True when the set-based statement writes only source values in their stored form (same
    /// value coding, same type, a constant at most for nil) and constants: its rows are as
    /// well-typed as the source's, so the step need not check their value forms again.
    var copiesStoredForms: Bool {
        !copiesAcrossTypes
            && attributes.allSatisfy { attribute in
                guard attribute.sql != nil else { return false }
                switch attribute.source {
                case .constant: return true
                case .column(_, let conversion, _): return conversion == nil
                case .expression: return false
                }
            }
    }

    /// The row path's query: the primary key, then every selected column.
    var selectSQL: SQLText {
        var text = "SELECT t0.\(sourceKey)"
        var arguments: [DatabaseValue] = []
        for column in selectColumns {
            text += ", \(column.sql.text)"
            arguments += column.sql.arguments
        }
        text += " \(fromClause)"
        if let filter {
            text += " WHERE \(filter.text)"
            arguments += filter.arguments
        }
        return SQLText(text: text + " ORDER BY t0.\(sourceKey)", arguments: arguments)
    }

    /// The selected row as typed values (index 0 is the primary key).
    func decodeRow(_ statement: Statement) -> [Value] {
        var row: [Value] = [.integer(statement.int64(at: 0))]
        row.reserveCapacity(selectColumns.count + 1)
        for (offset, column) in selectColumns.enumerated() {
            let raw = statement.value(at: offset + 1)
            if let type = column.type {
                row.append(sourceCoding.decode(raw, as: type))
            } else {
                row.append(raw.int64.map { .integer($0) } ?? .null)
            }
        }
        return row
    }

    /// The destination values for a selected row, aligned with ``insertColumns`` (no dictionary
    /// per row: this runs for every object of the row path).
    func destinationRow(row: [Value], sourceKey: Int64) throws -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(programs.count + foreignKeys.count + orderColumns.count)
        for program in programs {
            values.append(try program(row, sourceKey))
        }
        for foreignKey in foreignKeys {
            values.append(row[foreignKey.index])
        }
        for order in orderColumns {
            values.append(row[order.index])
        }
        return values
    }

    /// The source object as policies see it: attributes by name, to-one relationships as keys
    /// (read from the row by position: no dictionary per object).
    func sourceObject(row: [Value], key: Int64) -> MigrationObject {
        MigrationObject(
            entity: source.name, primaryKey: key, row: MigrationRow(columns: sourceObjectColumns, storage: row))
    }

    /// The names of a source entity's values as policies read them by position: its attributes
    /// in model order, then its to-one relationships stored as a key of its own.
    static func sourceColumnNames(
        of source: EntityDescription, model: ObjectModel, layout: any StoreLayout
    ) -> [String] {
        var names = source.attributes.map(\.name)
        for relationship in source.relationships where !relationship.isToMany {
            if case .foreignKey = layout.storage(of: relationship, in: source, model: model) {
                names.append(relationship.name)
            }
        }
        return names
    }

    // MARK: - SQL for relationships and key paths (over the source, as `main`)

    /// The key of the object a to-one (or the first of a to-many) relationship points to, for the
    /// source row `t0`.
    package static func relatedKeySQL(
        _ relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel,
        layout: any StoreLayout
    ) -> String {
        let quote = layout.dialect.quote
        let pk = quote(layout.keyColumn)
        switch layout.storage(of: relationship, in: entity, model: model) {
        case .foreignKey(let column):
            return "t0.\(quote(column))"
        case .inverseForeignKey(let table, let column):
            return "(SELECT \(pk) FROM \(quote(table)) WHERE \(quote(column)) = t0.\(pk) ORDER BY \(pk) LIMIT 1)"
        case .joinTable(let table, let sourceColumn, let targetColumn):
            return
                "(SELECT \(quote(targetColumn)) FROM \(quote(table)) WHERE \(quote(sourceColumn)) = t0.\(pk) ORDER BY \(quote(targetColumn)) LIMIT 1)"
        }
    }

    /// For a to-one whose inverse was to-many and is now to-one (a one-to-many that became
    /// one-to-one, as Core Data infers for Xcode models): the link only on the related object with
    /// the lowest primary key, NULL on the others, so that both sides agree on the one kept link
    /// (the other side reads the first link in key order, ``relatedKeySQL(_:in:model:layout:)``).
    /// Nil when the relationship is not such a to-one.
    package static func keptLinkSQL(
        _ sourceRelationship: RelationshipDescription, becoming relationship: RelationshipDescription,
        in entity: EntityDescription,
        sourceModel: ObjectModel, destinationModel: ObjectModel, layout: any StoreLayout
    ) -> String? {
        guard case .foreignKey(let column) = layout.storage(of: sourceRelationship, in: entity, model: sourceModel),
            let oldInverse = sourceRelationship.inverse,
            let oldTarget = sourceModel.entity(named: sourceRelationship.destination),
            sourceModel.relationship(named: oldInverse, in: oldTarget)?.isToMany == true,
            let newInverse = relationship.inverse,
            let newTarget = destinationModel.entity(named: relationship.destination),
            destinationModel.relationship(named: newInverse, in: newTarget)?.isToMany == false
        else { return nil }
        let quote = layout.dialect.quote
        let pk = quote(layout.keyColumn)
        return
            "CASE WHEN t0.\(pk) = (SELECT MIN(k.\(pk)) FROM \(layout.quotedTable(for: entity)) k WHERE k.\(quote(column)) = t0.\(quote(column))) THEN t0.\(quote(column)) END"
    }

    /// All (owner, target) key pairs of a relationship in the source store.
    package static func pairsSQL(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel,
        layout: any StoreLayout
    ) -> String {
        let quote = layout.dialect.quote
        let pk = quote(layout.keyColumn)
        switch layout.storage(of: relationship, in: entity, model: model) {
        case .foreignKey(let column):
            return
                "SELECT \(pk) AS owner, \(quote(column)) AS target FROM \(layout.quotedSource(for: entity)) AS t0 WHERE \(quote(column)) IS NOT NULL"
        case .inverseForeignKey(let table, let column):
            return
                "SELECT \(quote(column)) AS owner, \(pk) AS target FROM \(quote(table)) WHERE \(quote(column)) IS NOT NULL"
        case .joinTable(let table, let sourceColumn, let targetColumn):
            return "SELECT \(quote(sourceColumn)) AS owner, \(quote(targetColumn)) AS target FROM \(quote(table))"
        }
    }

    /// A key path of `$source` (to-one relationships, then an attribute) as SQL over `t0`; with
    /// `selectingKey`, every component is a relationship and the SQL is the key of the object at
    /// the end of the path.
    package static func keyPathSQL(
        _ components: [String], in entity: EntityDescription, model: ObjectModel, layout: any StoreLayout,
        selectingKey: Bool = false
    ) -> String {
        let quote = layout.dialect.quote
        let pk = quote(layout.keyColumn)
        let hops = selectingKey ? components : Array(components.dropLast())
        // Follow the chain with nested scalar subqueries, each over its own alias.
        var joins: [(table: String, alias: String, condition: String)] = []
        var previousAlias = "t0"
        var previousEntity = entity
        for (depth, name) in zip(1..., hops) {
            guard let hop = previousEntity.relationship(named: name), let target = model.entity(named: hop.destination)
            else { break }
            let alias = "t\(depth)"
            let condition: String
            switch layout.storage(of: hop, in: previousEntity, model: model) {
            case .foreignKey(let column):
                condition = "\(alias).\(pk) = \(previousAlias).\(quote(column))"
            case .inverseForeignKey(_, let column):
                condition = "\(alias).\(quote(column)) = \(previousAlias).\(pk)"
            case .joinTable(let table, let sourceColumn, let targetColumn):
                condition =
                    "\(alias).\(pk) = (SELECT \(quote(targetColumn)) FROM \(quote(table)) WHERE \(quote(sourceColumn)) = \(previousAlias).\(pk) LIMIT 1)"
            }
            joins.append((layout.quotedTable(for: target), alias, condition))
            previousAlias = alias
            previousEntity = target
        }
        let inner =
            selectingKey
            ? "\(previousAlias).\(pk)"
            : "\(previousAlias).\(layout.quotedColumn(forAttribute: components.last ?? "", in: previousEntity))"
        guard !joins.isEmpty else { return inner }
        let from = joins.map { "\($0.table) AS \($0.alias)" }.joined(separator: ", ")
        let conditions = joins.map(\.condition).joined(separator: " AND ")
        return "(SELECT \(inner) FROM \(from) WHERE \(conditions) LIMIT 1)"
    }
}
