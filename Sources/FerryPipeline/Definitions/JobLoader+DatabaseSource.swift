import FerryCore
import FerryPostgres
import Foundation

extension JobLoader {
    /// The keys of a database source: one database, one selection.
    static let databaseSourceKeys = ["sqlite", "postgresql", "postgres", "coredata", "table", "query", "entity"]
    /// The import keys that describe a file, not a database.
    static let fileOnlyImportKeys = ["format", "encoding", "csv", "json", "fixed", "decimal_comma"]

    /// `source: {sqlite: legacy.db, table: customers}`, `{postgresql: URL, query: "SELECT …"}`,
    /// `{coredata: Shop.sqlite, entity: Customer}`: a database an import step reads.
    func loadDatabaseSource(_ node: YAMLNode, resolve: (String) -> String, reader: DefinitionReader) -> DatabaseSource? {
        guard let mapping = reader.mapping(node, for: "source") else { return nil }
        reader.checkKeys(mapping, allowed: Self.databaseSourceKeys, in: "a database source")
        let databases = mapping.entries.filter { ["sqlite", "postgresql", "postgres", "coredata"].contains($0.key) }
        guard databases.count == 1, let databaseEntry = databases.first else {
            reader.fail(
                databases.isEmpty
                    ? "a database source names its database: 'sqlite: FILE', 'postgresql: URL' or 'coredata: FILE'"
                    : "a database source names one database, not \(databases.map { "'\($0.key)'" }.joined(separator: " and "))",
                at: databases.dropFirst().first?.keyLocation ?? mapping.location)
            return nil
        }
        guard let target = reader.string(databaseEntry.value, for: databaseEntry.key) else { return nil }
        let database: DatabaseSource.Database
        switch databaseEntry.key {
        case "sqlite": database = .sqlite(path: resolve(target))
        case "coredata": database = .coreData(path: resolve(target))
        default:
            do {
                _ = try PostgresURL(target)
            } catch {
                reader.fail(error.message, at: databaseEntry.value.location)
                return nil
            }
            database = .postgresql(url: target)
        }
        let selections = mapping.entries.filter { ["table", "query", "entity"].contains($0.key) }
        let allowed = databaseEntry.key == "coredata" ? "'entity: NAME'" : "'table: NAME' or 'query: SELECT …'"
        guard selections.count == 1, let selectionEntry = selections.first else {
            reader.fail(
                selections.isEmpty
                    ? "a \(databaseEntry.key) source says what to read: \(allowed)"
                    : "a database source reads one thing, not \(selections.map { "'\($0.key)'" }.joined(separator: " and "))",
                at: selections.dropFirst().first?.keyLocation ?? mapping.location)
            return nil
        }
        guard let text = reader.string(selectionEntry.value, for: selectionEntry.key) else { return nil }
        let isCoreData = databaseEntry.key == "coredata"
        guard (selectionEntry.key == "entity") == isCoreData else {
            reader.fail("'\(selectionEntry.key)' does not apply to a \(databaseEntry.key) source; use \(allowed)", at: selectionEntry.keyLocation)
            return nil
        }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            reader.fail("'\(selectionEntry.key)' is empty", at: selectionEntry.value.location)
            return nil
        }
        let selection: DatabaseSource.Selection
        switch selectionEntry.key {
        case "table": selection = .table(text)
        case "query": selection = .query(text)
        default: selection = .entity(text)
        }
        return DatabaseSource(database: database, selection: selection, selectionLocation: selectionEntry.value.location)
    }
}
