import FerryCore
import FerryFormats
import Foundation

/// Infers a model from a source database's schema and plans the import of every table, as
/// pgloader does for SQLite: a table becomes an entity, a column an attribute (its type from the
/// declaration where the values fit it, else from the values), the primary key and unique
/// indexes uniqueness constraints, NOT NULL a required attribute, and a single-column foreign
/// key a to-one relationship (named after the column without `_id`) with a to-many inverse,
/// resolved during the import by the referenced key. Tables are ordered so that referenced rows
/// come first.
///
/// A foreign key that would close a cycle (a table referencing itself, or two tables each
/// other) cannot be ordered: it stays a plain attribute holding the key, and the plan says so.
/// Composite foreign keys stay attributes too.
package enum DatabaseModelInference {
    /// The inferred model and one import step per table, in import order.
    package struct Plan: Sendable {
        package var model: ObjectModel
        package var steps: [ImportStep]
        /// The source table of each step.
        package var tables: [String]
        /// Foreign keys kept as plain attributes, and why.
        package var notes: [String]
    }

    /// The plan for every table of `database`, each table's types from its declarations and a
    /// sample of its rows.
    ///
    /// The columns are read for what they hold (``ColumnContents``): a SQLite `DATETIME` column
    /// of epoch milliseconds becomes a date converted from them, a PostgreSQL `text` column of
    /// `15/03/2021` dates a date read in that order, and the choice is a note of the plan and the
    /// attribute's `ferry.source` user info. `columnTypes` (by table, then column) are the user's
    /// types, whose conversions are chosen the same way; `dateFormats` read day/month text dates
    /// whose order the values leave open.
    package static func plan(
        database: DatabaseSource.Database, schema: SourceSchema, modelName: String, sampleSize: Int,
        columnTypes: [String: [String: AttributeType]] = [:], dateFormats: [DateFormat] = []
    ) throws -> Plan {
        // The choices of each entity's attributes, by attribute name.
        var choices: [String: [String: (column: String, choice: ColumnContents.Choice)]] = [:]
        var habitNotes: [String] = []
        var plan = try plan(schema: schema, modelName: modelName) { table, entityName in
            let reader = try DatabaseRecordReader.open(
                DatabaseSource(database: database, selection: .table(table.name)))
            let sampled = try SampledReader(reader, sampleSize: max(1, sampleSize))
            var overrides = reader.declaredTypes(fitting: sampled.samples)
            let types = columnTypes[table.name] ?? [:]
            let chosen: [String: ColumnContents.Choice]
            switch database {
            case .sqlite(let path):
                chosen = try ColumnContents.sqlite(
                    path: path, table: table, overrides: types, dateFormats: dateFormats)
            case .postgresql(let url):
                chosen = try ColumnContents.postgres(
                    url: url, schema: schema.name, table: table, overrides: types, dateFormats: dateFormats)
            default:
                // A typed store's columns hold what they declare: only the user's types convert.
                chosen = types.mapValues { type in
                    var choice = ColumnContents.chosen(type, declared: "", counts: ColumnContents.Counts())
                    choice.holding = "column"
                    choice.emptyIsNull = type != .string
                    return choice
                }
            }
            let names = AttributeNaming.attributeNames(for: reader.fieldNames)
            for (index, field) in reader.fieldNames.enumerated() {
                guard let choice = chosen[field] else { continue }
                overrides[field] = choice.type
                choices[entityName, default: [:]][names[index]] = (field, choice)
                if choice.isHabit || choice.isOverride {
                    habitNotes.append(choice.note(table: table.name, column: field))
                }
            }
            return ModelInference.infer(
                entityNamed: entityName, fieldNames: reader.fieldNames, samples: sampled.samples,
                overrides: overrides, textIsUntyped: false)
        }
        plan.notes = habitNotes + plan.notes
        for (index, table) in plan.tables.enumerated() {
            plan.steps[index].database = DatabaseSource(database: database, selection: .table(table))
            plan.steps[index].coercion.nullTokens = []
            let entityName = plan.steps[index].entity
            guard let chosen = choices[entityName],
                let entityIndex = plan.model.entities.firstIndex(where: { $0.name == entityName })
            else { continue }
            var entity = plan.model.entities[entityIndex]
            for (attribute, (column, choice)) in chosen.sorted(by: { $0.key < $1.key }) {
                // A column that became a relationship is matched by key, not converted.
                guard let position = entity.attributes.firstIndex(where: { $0.name == attribute }) else { continue }
                if choice.isHabit || choice.isOverride {
                    entity.attributes[position].userInfo["ferry.source"] = choice.note(table: table, column: column)
                }
                var mapping =
                    plan.steps[index].fields.first { $0.attribute == attribute }
                    ?? FieldMapping(attribute: attribute, source: .field(column))
                choice.apply(to: &mapping)
                plan.steps[index].fields.removeAll { $0.attribute == attribute }
                plan.steps[index].fields.append(mapping)
            }
            plan.model.entities[entityIndex] = entity
        }
        return plan
    }

    /// The plan for tables whose entities `infer` gives (from a sample of each table's records,
    /// named `entityName`): keys, relationships and import order as for a database. The steps'
    /// `source` is the table's name; the caller says where the records come from.
    package static func plan(
        schema: SourceSchema, modelName: String,
        infer: (SourceSchema.Table, _ entityName: String) throws -> ModelInference.Result
    ) throws -> Plan {
        guard !schema.tables.isEmpty else {
            throw FerryError(.invalidInput, "the database has no tables to import")
        }
        // Entity names: the tables' names made identifiers, kept distinct.
        var entityNames: [String: String] = [:]
        var taken: Set<String> = []
        for table in schema.tables {
            var name = AttributeNaming.identifier(table.name, fallback: "table")
            var suffix = 2
            while taken.contains(name.lowercased()) {
                name = AttributeNaming.identifier(table.name, fallback: "table") + "_\(suffix)"
                suffix += 1
            }
            taken.insert(name.lowercased())
            entityNames[table.name] = name
        }

        // Entities from the columns, with the types the declarations and the values agree on.
        var notes: [String] = []
        var entities: [String: EntityDescription] = [:]
        var fieldOfAttribute: [String: [String: String]] = [:]
        for table in schema.tables {
            let entityName = entityNames[table.name, default: table.name]
            let inferred = try infer(table, entityName)
            var entity = inferred.entity
            let notNull = Set(table.columns.filter(\.notNull).map(\.name)).union(table.primaryKey)
            for (index, field) in inferred.fieldNames.enumerated() where notNull.contains(field) {
                entity.attributes[index].isOptional = false
            }
            for (index, field) in inferred.fieldNames.enumerated() {
                guard let sql = table.columns.first(where: { $0.name == field })?.defaultSQL else { continue }
                if let value = Self.defaultValue(sql, for: entity.attributes[index]) {
                    entity.attributes[index].defaultValue = value
                } else if sql.uppercased() != "NULL" && !sql.hasPrefix("nextval(") {
                    // A serial column's sequence numbers the source's rows; the rows keep their values.
                    notes.append(
                        "\(table.name).\(field): the default \(sql) is not a \(entity.attributes[index].type.rawValue) value (an expression, or a value of another type); not kept in the model"
                    )
                }
            }
            fieldOfAttribute[entityName] = Dictionary(
                zip(entity.attributes.map(\.name), inferred.fieldNames), uniquingKeysWith: { first, _ in first })
            let attributeOfField = Dictionary(
                zip(inferred.fieldNames, entity.attributes.map(\.name)), uniquingKeysWith: { first, _ in first })
            for key in (table.primaryKey.isEmpty ? [] : [table.primaryKey]) + table.uniqueKeys {
                let names = key.compactMap { attributeOfField[$0] }
                if names.count == key.count, !entity.uniquenessConstraints.contains(names) {
                    entity.uniquenessConstraints.append(names)
                }
            }
            for key in table.indexes {
                let names = key.compactMap { attributeOfField[$0] }
                if names.count == key.count, !entity.indexes.contains(where: { $0.attributes == names }) {
                    entity.indexes.append(IndexDescription(attributes: names))
                }
            }
            entities[entityName] = entity
        }

        // Single-column foreign keys become relationships unless they would close a cycle.
        var dependsOn: [String: Set<String>] = [:]
        var relationshipsOfTable: [String: [RelationshipMapping]] = [:]
        func reaches(_ from: String, _ to: String) -> Bool {
            var seen: Set<String> = []
            var stack = [from]
            while let next = stack.popLast() {
                if next == to { return true }
                if seen.insert(next).inserted { stack.append(contentsOf: dependsOn[next] ?? []) }
            }
            return false
        }
        for table in schema.tables {
            let entityName = entityNames[table.name, default: table.name]
            for key in table.foreignKeys {
                guard key.columns.count == 1, let column = key.columns.first,
                    let target = schema.table(named: key.table), let targetEntity = entityNames[target.name]
                else {
                    notes.append(
                        "\(table.name)(\(key.columns.joined(separator: ", "))) → \(key.table): a composite key or an unknown table; kept as plain values"
                    )
                    continue
                }
                let referenced =
                    key.referencedColumns.first ?? (target.primaryKey.count == 1 ? target.primaryKey[0] : "")
                let isKey = target.primaryKey == [referenced] || target.uniqueKeys.contains([referenced])
                guard isKey, let match = fieldOfAttribute[targetEntity]?.first(where: { $0.value == referenced })?.key
                else {
                    notes.append(
                        "\(table.name).\(column) → \(key.table): the referenced column is not a single-column key; kept as plain values"
                    )
                    continue
                }
                guard targetEntity != entityName, !reaches(targetEntity, entityName) else {
                    let why =
                        targetEntity == entityName ? "the table references itself" : "the tables reference each other"
                    notes.append(
                        "\(table.name).\(column) → \(key.table): \(why) (a cycle ferry cannot order); kept as plain values"
                    )
                    continue
                }
                guard var entity = entities[entityName], var destination = entities[targetEntity],
                    let position = entity.attributes.firstIndex(where: {
                        fieldOfAttribute[entityName]?[$0.name] == column
                    })
                else { continue }
                // The key column becomes the relationship: customer_id → customer.
                let attribute = entity.attributes.remove(at: position)
                var name = AttributeNaming.identifier(
                    Self.relationshipName(forColumn: column), fallback: attribute.name)
                if entity.propertyNames.contains(name) { name = attribute.name }
                Self.moveConstraints(of: attribute.name, to: name, in: &entity, table: table.name, notes: &notes)
                var inverse = entityName
                var suffix = 2
                while destination.propertyNames.contains(inverse) || (targetEntity == entityName && inverse == name) {
                    inverse = "\(entityName)_by_\(name)" + (suffix > 2 ? "_\(suffix)" : "")
                    suffix += 1
                }
                entity.relationships.append(
                    RelationshipDescription(
                        name: name, destination: targetEntity, inverse: inverse, isOptional: attribute.isOptional))
                destination.relationships.append(
                    RelationshipDescription(name: inverse, destination: entityName, isToMany: true, inverse: name))
                entities[entityName] = entity
                entities[targetEntity] = destination
                dependsOn[entityName, default: []].insert(targetEntity)
                relationshipsOfTable[table.name, default: []].append(
                    RelationshipMapping(relationship: name, field: column, match: match))
            }
        }

        // Referenced tables first (the graph has no cycle: the edges closing one were left out).
        var ordered: [SourceSchema.Table] = []
        var done: Set<String> = []
        func visit(_ table: SourceSchema.Table) {
            let entityName = entityNames[table.name, default: table.name]
            guard !done.contains(entityName) else { return }
            done.insert(entityName)
            for dependency in (dependsOn[entityName] ?? []).sorted() {
                if let referenced = schema.tables.first(where: { entityNames[$0.name] == dependency }) {
                    visit(referenced)
                }
            }
            ordered.append(table)
        }
        schema.tables.forEach(visit)

        let model = ObjectModel(
            name: modelName, version: "1",
            entities: schema.tables.compactMap { entities[entityNames[$0.name, default: $0.name]] })
        let problems = ModelChecker.check(model)
        if !problems.isEmpty { throw FerryErrors(problems) }
        let steps = ordered.map { table -> ImportStep in
            let entityName = entityNames[table.name, default: table.name]
            var step = ImportStep(source: table.name, format: .csv, entity: entityName)
            step.fields = (entities[entityName]?.attributes ?? []).compactMap { attribute in
                guard let field = fieldOfAttribute[entityName]?[attribute.name], field != attribute.name else {
                    return nil
                }
                return FieldMapping(attribute: attribute.name, source: .field(field))
            }
            step.relationships = relationshipsOfTable[table.name] ?? []
            return step
        }
        return Plan(model: model, steps: steps, tables: ordered.map(\.name), notes: notes)
    }

    /// A key column that became a to-one relationship keeps its constraints: uniqueness
    /// constraints (a composite primary key such as Chinook's `PlaylistTrack(PlaylistId,
    /// TrackId)`, a unique index over several columns) name the relationship instead, so a later
    /// import cannot duplicate rows. An index on the column alone is the store's own index of the
    /// relationship; an index over it and other columns cannot be expressed (a model's indexes
    /// name attributes) and is noted.
    static func moveConstraints(
        of attribute: String, to relationship: String, in entity: inout EntityDescription, table: String,
        notes: inout [String]
    ) {
        entity.uniquenessConstraints = entity.uniquenessConstraints.map { constraint in
            constraint.map { $0 == attribute ? relationship : $0 }
        }
        for index in entity.indexes where index.attributes.contains(attribute) && index.attributes.count > 1 {
            notes.append(
                "\(table)(\(index.attributes.joined(separator: ", "))): an index over the relationship \(relationship) and other columns; not kept in the model (the relationship has an index of its own)"
            )
        }
        entity.indexes.removeAll { $0.attributes.contains(attribute) }
    }

    /// The default value of a column whose SQL default is a literal of the attribute's type
    /// (`0`, `-1.5`, `'new'`, `TRUE`; PostgreSQL's `'new'::character varying`), nil for an
    /// expression (`CURRENT_TIMESTAMP`, `nextval(…)`), NULL, or a value the type does not hold.
    static func defaultValue(_ sql: String, for attribute: AttributeDescription) -> Value? {
        var text = sql.trimmingCharacters(in: .whitespaces)
        while text.hasPrefix("("), text.hasSuffix(")") { text = String(text.dropFirst().dropLast()) }
        let literal: String
        if text.hasPrefix("'"), let close = text.dropFirst().lastIndex(of: "'") {
            let rest = text[text.index(after: close)...]
            // Only a cast may follow the quoted text: 'new'::character varying.
            guard rest.isEmpty || rest.hasPrefix("::") else { return nil }
            literal = text[text.index(after: text.startIndex)..<close].replacingOccurrences(of: "''", with: "'")
        } else if let number = text.split(separator: ":", maxSplits: 1).first,
            !number.isEmpty,
            number.allSatisfy({ $0.isNumber || $0 == "-" || $0 == "." || $0 == "e" || $0 == "E" || $0 == "+" })
        {
            literal = String(number)
        } else if ["TRUE", "FALSE"].contains(text.uppercased()) {
            literal = text.lowercased()
        } else {
            return nil
        }
        guard case .success(let value) = Coercion.coerce(literal, to: attribute.type), value != .null else {
            return nil
        }
        return value
    }

    /// A foreign key column's name without its key suffix: `customer_id` → `customer`,
    /// `ArtistId` → `Artist`.
    package static func relationshipName(forColumn column: String) -> String {
        if column.count > 3, column.lowercased().hasSuffix("_id") { return String(column.dropLast(3)) }
        let characters = Array(column)
        if characters.count > 2, column.hasSuffix("Id"), characters[characters.count - 3].isLowercase {
            return String(column.dropLast(2))
        }
        return column
    }
}
