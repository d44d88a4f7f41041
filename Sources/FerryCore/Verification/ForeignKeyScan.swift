/// Dangling references found with plain SQL, for stores whose engine has no
/// `PRAGMA foreign_key_check` (PostgreSQL): every to-one key column of the entities' tables and
/// both key columns of every join table are compared with the keys of the tables they point to.
/// Reports what SQLite's pragma reports: the table holding the reference, the row's key (nil for
/// a join table's row) and the table referred to.
struct ForeignKeyScan {
    let model: ObjectModel
    let layout: any StoreLayout

    /// Calls `note` for each dangling reference held by `entity`'s table (every table when nil),
    /// in table order then key order.
    func forEachDangling(
        in entity: EntityDescription?, on connection: any DatabaseConnection,
        _ note: (_ table: String, _ key: Int64?, _ parent: String) -> Void
    ) throws {
        let key = layout.dialect.quote(layout.keyColumn)
        var joinTables: Set<String> = []
        for source in entity.map({ [$0] }) ?? model.entities {
            for relationship in source.relationships {
                guard let destination = model.entity(named: relationship.destination) else { continue }
                let parent = layout.table(for: destination)
                switch layout.storage(of: relationship, in: source, model: model) {
                case .foreignKey(let column):
                    let reference = "t0.\(layout.dialect.quote(column))"
                    let rows = try connection.rows(
                        "SELECT t0.\(key) FROM \(layout.quotedTable(for: source)) AS t0 WHERE \(reference) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(layout.dialect.quote(parent)) AS d WHERE d.\(key) = \(reference)) ORDER BY t0.\(key)"
                    )
                    for row in rows { note(layout.table(for: source), row.first?.int64, parent) }
                case .joinTable(let table, let sourceColumn, let targetColumn)
                where entity == nil && !joinTables.contains(table):
                    joinTables.insert(table)
                    for (column, referred) in [(sourceColumn, layout.table(for: source)), (targetColumn, parent)] {
                        let rows = try connection.rows(
                            "SELECT count(*) FROM \(layout.dialect.quote(table)) AS l WHERE NOT EXISTS (SELECT 1 FROM \(layout.dialect.quote(referred)) AS d WHERE d.\(key) = l.\(layout.dialect.quote(column)))"
                        )
                        for _ in 0..<Int(rows.first?.first?.int64 ?? 0) { note(table, nil, referred) }
                    }
                case .joinTable, .inverseForeignKey:
                    continue
                }
            }
        }
    }
}
