/// Dangling references found with plain SQL, for stores whose engine has no
/// `PRAGMA foreign_key_check` (PostgreSQL): every to-one key column of the entities' tables and
/// both key columns of every join table are compared with the keys of the tables they point to.
/// Reports what SQLite's pragma reports: the table holding the reference, the row's key (nil for
/// a join table's row) and the table referred to.
struct ForeignKeyScan {
    let model: ObjectModel
    let layout: any StoreLayout

    /// Calls `note` for each dangling reference held by `entity`'s table (every table when nil),
    /// in table order then key order. One query per table (a server may be across a network):
    /// each reference's scan, tagged with its place, in one `UNION ALL`.
    func forEachDangling(
        in entity: EntityDescription?, on connection: any DatabaseConnection,
        _ note: (_ table: String, _ key: Int64?, _ parent: String) -> Void
    ) throws {
        let key = layout.dialect.quote(layout.keyColumn)
        var joinTables: Set<String> = []
        for source in entity.map({ [$0] }) ?? model.entities {
            // Each scan's table holding the references and table referred to, by place, and its SQL.
            var scans: [(table: String, parent: String)] = []
            var queries: [String] = []
            for relationship in source.relationships {
                guard let destination = model.entity(named: relationship.destination) else { continue }
                let parent = layout.table(for: destination)
                switch layout.storage(of: relationship, in: source, model: model) {
                case .foreignKey(let column):
                    let reference = "t0.\(layout.dialect.quote(column))"
                    queries.append(
                        "SELECT \(scans.count), t0.\(key), 1 FROM \(layout.quotedTable(for: source)) AS t0 WHERE \(reference) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(layout.dialect.quote(parent)) AS d WHERE d.\(key) = \(reference))"
                    )
                    scans.append((layout.table(for: source), parent))
                case .joinTable(let table, let sourceColumn, let targetColumn)
                where entity == nil && !joinTables.contains(table):
                    joinTables.insert(table)
                    for (column, referred) in [(sourceColumn, layout.table(for: source)), (targetColumn, parent)] {
                        queries.append(
                            "SELECT \(scans.count), NULL, count(*) FROM \(layout.dialect.quote(table)) AS l WHERE NOT EXISTS (SELECT 1 FROM \(layout.dialect.quote(referred)) AS d WHERE d.\(key) = l.\(layout.dialect.quote(column)))"
                        )
                        scans.append((table, referred))
                    }
                case .joinTable, .inverseForeignKey:
                    continue
                }
            }
            guard !queries.isEmpty else { continue }
            for row in try connection.rows(queries.joined(separator: " UNION ALL ") + " ORDER BY 1, 2") {
                guard let place = row[0].int64, place >= 0, place < scans.count else { continue }
                let scan = scans[Int(place)]
                for _ in 0..<Int(row[2].int64 ?? 0) { note(scan.table, row[1].int64, scan.parent) }
            }
        }
    }
}
