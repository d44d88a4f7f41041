/// Core Data's SQLite layout (COREDATA.md §2.3–2.7), for reading and writing the rows of a store
/// Core Data made. Recognising such a store and reading its metadata and cached model is another
/// part's work; this is the naming.
///
/// - Entities are numbered 1…N (`Z_ENT`): roots sorted by name, each followed depth-first by its
///   sub-entities, sorted by name.
/// - One table per root entity, `Z` + the uppercased root name, shared by its sub-entities; its
///   `Z_ENT` column tells them apart (``entityFilter(for:)``). Key `Z_PK`, version `Z_OPT`.
/// - Attribute columns `Z` + the uppercased name.
/// - A to-one relationship is an integer column `Z<NAME>` on its side (both sides of a
///   one-to-one); when its destination has sub-entities, `Z<n>_<NAME>` beside it holds the
///   target's `Z_ENT` (``entityColumn(forForeignKeyOf:in:model:)``).
/// - A to-many whose inverse is to-one is the inverse's key. A many-to-many is a join table with
///   columns `Z_<k><NAME>`, holding keys of entity number `k`, `NAME` being the relationship
///   whose destination that entity is; which side names the table is not known, so the table is
///   found among the store's tables by its two columns (``reading(_:model:)``).
/// - Values as ``CoreDataValueCoding`` says; no ferry bookkeeping tables.
package struct CoreDataLayout: StoreLayout {
    /// Each entity's `Z_ENT`.
    package let entityNumbers: [String: Int64]
    /// Entity name → the name of its root entity.
    private let roots: [String: String]
    /// Entity name → its own number and those of all its sub-entities, ascending.
    private let hierarchy: [String: [Int64]]
    /// Join tables of the store: table name → its column names (uppercased).
    private let joinTables: [String: Set<String>]

    /// The layout of a store of `model`, whose many-to-many join tables are among `tables`
    /// (table name → column names; ``reading(_:model:)`` lists them from a store).
    package init(model: ObjectModel, tables: [String: [String]] = [:]) {
        let names = Set(model.entities.map(\.name))
        var children: [String: [String]] = [:]
        var rootNames: [String] = []
        for entity in model.entities {
            if let parent = entity.parent, names.contains(parent) {
                children[parent, default: []].append(entity.name)
            } else {
                rootNames.append(entity.name)
            }
        }
        var numbers: [String: Int64] = [:]
        var roots: [String: String] = [:]
        var hierarchy: [String: [Int64]] = [:]
        // Depth-first in pre-order; returns the numbers of the subtree.
        func visit(_ name: String, root: String) -> [Int64] {
            let number = Int64(numbers.count + 1)
            numbers[name] = number
            roots[name] = root
            var subtree = [number]
            for child in (children[name] ?? []).sorted() where numbers[child] == nil {
                subtree += visit(child, root: root)
            }
            hierarchy[name] = subtree
            return subtree
        }
        for root in rootNames.sorted() { _ = visit(root, root: root) }
        self.entityNumbers = numbers
        self.roots = roots
        self.hierarchy = hierarchy
        self.joinTables = tables.filter { Self.isJoinTableName($0.key) }.mapValues { Set($0.map { $0.uppercased() }) }
    }

    /// The layout of the store on `connection` for `model`, with the store's join tables.
    package static func reading(_ connection: Connection, model: ObjectModel) throws -> CoreDataLayout {
        var tables: [String: [String]] = [:]
        for row in try connection.rows("SELECT name FROM sqlite_schema WHERE type = 'table'") {
            guard let name = row.first?.text, isJoinTableName(name) else { continue }
            tables[name] = try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(name)]).compactMap {
                $0.first?.text
            }
        }
        return CoreDataLayout(model: model, tables: tables)
    }

    /// `Z_` followed by a digit: a join table (entity tables are `Z` + a name, system tables `Z_` + a word).
    private static func isJoinTableName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return bytes.count > 2 && bytes[0] == UInt8(ascii: "Z") && bytes[1] == UInt8(ascii: "_")
            && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[2])
    }

    package var valueCoding: any ValueCoding { CoreDataValueCoding() }
    package var dialect: any SQLDialect { SQLiteDialect() }
    package var keyColumn: String { "Z_PK" }
    package var versionColumn: String? { "Z_OPT" }
    /// The column telling the entities of a shared table apart.
    package static let entityColumn = "Z_ENT"
    package var bookkeeping: BookkeepingTables? { nil }

    package func table(for entity: EntityDescription) -> String { table(forEntityNamed: entity.name) }

    package func table(forEntityNamed name: String) -> String { "Z" + (roots[name] ?? name).uppercased() }

    package func entityFilter(for entity: EntityDescription) -> EntityFilter? {
        guard let root = roots[entity.name], let numbers = hierarchy[entity.name] else { return nil }
        // A root without sub-entities has its table to itself.
        guard (hierarchy[root]?.count ?? 0) > 1 else { return nil }
        return EntityFilter(column: Self.entityColumn, values: numbers)
    }

    package func column(forAttribute attribute: String, in entity: EntityDescription) -> String {
        "Z" + attribute.uppercased()
    }

    package func storage(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> RelationshipStorage {
        let name = relationship.name.uppercased()
        if !relationship.isToMany { return .foreignKey(column: "Z" + name) }
        let inverse = model.inverse(of: relationship, in: entity)
        if let inverse, !inverse.isToMany {
            return .inverseForeignKey(
                destinationTable: table(forEntityNamed: relationship.destination),
                column: "Z" + inverse.name.uppercased())
        }
        // Many-to-many: `Z_<k><NAME>` holds keys of entity k, NAME the relationship leading to it.
        let sourceNumber = entityNumbers[inverse?.destination ?? entity.name] ?? 0
        let targetNumber = entityNumbers[relationship.destination] ?? 0
        let sourceColumn = "Z_\(sourceNumber)" + (inverse.map { $0.name.uppercased() } ?? name + "INVERSE")
        var targetColumn = "Z_\(targetNumber)\(name)"
        // A relationship that is its own inverse (`friends` ↔ `friends`) would name both columns
        // alike: the second gets Core Data's collision suffix (COREDATA.md §2.4, `Z_4PARENTS1`).
        if targetColumn == sourceColumn { targetColumn += "1" }
        let table = joinTables.filter { $0.value.contains(sourceColumn) && $0.value.contains(targetColumn) }.keys
            .sorted().first
        return .joinTable(
            table: table ?? "Z_\(sourceNumber)\(name)", sourceColumn: sourceColumn, targetColumn: targetColumn)
    }

    /// The column `Z<n>_<NAME>` holding the target's `Z_ENT` beside a to-one relationship's key,
    /// when its destination has sub-entities (nil otherwise).
    package func entityColumn(
        forForeignKeyOf relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> String? {
        guard !relationship.isToMany, let numbers = hierarchy[relationship.destination], numbers.count > 1 else {
            return nil
        }
        return "Z\(numbers[0])_\(relationship.name.uppercased())"
    }

    /// The column ordering the objects of an ordered to-many beside the key of its to-one
    /// inverse: `ZBOOK` → `Z_FOK_BOOK` (COREDATA.md §2.5).
    package static func orderColumn(forForeignKey column: String) -> String { "Z_FOK_" + column.dropFirst() }

    /// The column of an ordered many-to-many's join table that orders the objects of its key
    /// column `column`: `Z_3ASSETS` → `Z_FOK_3ASSETS` (COREDATA.md §2.5).
    package static func orderColumn(forJoinColumn column: String) -> String { "Z_FOK_" + column.dropFirst(2) }

    /// The order columns of a many-to-many `relationship`'s join table, each with the key column
    /// that partitions it: `Z_FOK_<target>` per owner when the relationship is ordered,
    /// `Z_FOK_<owner>` per target when its inverse is. Empty for other relationships.
    package func joinOrderColumns(
        of relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> [(order: String, partition: String)] {
        guard case .joinTable(_, let owner, let target) = storage(of: relationship, in: entity, model: model) else {
            return []
        }
        var columns: [(order: String, partition: String)] = []
        if relationship.isOrdered { columns.append((Self.orderColumn(forJoinColumn: target), owner)) }
        if model.inverse(of: relationship, in: entity)?.isOrdered == true {
            columns.append((Self.orderColumn(forJoinColumn: owner), target))
        }
        return columns
    }

    /// The `Z_FOK_<NAME>` column beside the key of a to-one `relationship` whose inverse is an
    /// ordered to-many (nil otherwise): the object's position among its owner's objects.
    package func orderColumn(
        forForeignKeyOf relationship: RelationshipDescription, in entity: EntityDescription, model: ObjectModel
    ) -> String? {
        guard case .foreignKey(let column) = storage(of: relationship, in: entity, model: model),
            let inverse = model.inverse(of: relationship, in: entity), inverse.isToMany, inverse.isOrdered
        else { return nil }
        return Self.orderColumn(forForeignKey: column)
    }

    package var engine: StoreEngine { .coreDataSQLite }

    package func orderColumn(besideForeignKey column: String) -> String? { Self.orderColumn(forForeignKey: column) }

    package func joinOrderColumn(forKeyColumn column: String) -> String? { Self.orderColumn(forJoinColumn: column) }

    /// Core Data's `Z_PK`, `Z_ENT`, `Z_OPT` and the columns beside keys (``CoreDataInsertBookkeeping``).
    package func insertBookkeeping(
        on connection: Connection, model: ObjectModel, entity: EntityDescription,
        keyColumns: [(parameter: Int, relationship: RelationshipDescription)], suppliedAttributes: Set<String>
    ) throws -> (any InsertBookkeeping)? {
        try CoreDataInsertBookkeeping(
            connection: connection, model: model, layout: self, entity: entity, keyColumns: keyColumns,
            suppliedAttributes: suppliedAttributes)
    }

    /// Both sides of each one-to-one (``CoreDataOneToOneMirror``).
    package func oneToOneMirror(
        on connection: Connection, model: ObjectModel, entity: EntityDescription,
        relationships: [RelationshipDescription]
    ) throws -> (any OneToOneMirroring)? {
        try CoreDataOneToOneMirror(
            connection: connection, model: model, layout: self, entity: entity, relationships: relationships)
    }

    package func uniqueIndexName(entity: String, columns: [String]) -> String {
        "Z_\(entity)_UNIQUE_\(columns.joined(separator: "_"))"
    }

    package func indexName(entity: String, index: IndexDescription) -> String {
        "Z_\(entity)_\(index.name ?? index.attributes.joined(separator: "_"))"
    }

    package func foreignKeyIndexName(entity: String, column: String) -> String {
        "\(table(forEntityNamed: entity))_\(column)_INDEX"
    }

    package func joinTargetIndexName(table: String) -> String { "\(table)_INDEX" }

    /// Core Data's layout holds entity inheritance; nothing in a model read from Core Data is refused.
    package func checkRepresentable(_ model: ObjectModel) throws {}
}
