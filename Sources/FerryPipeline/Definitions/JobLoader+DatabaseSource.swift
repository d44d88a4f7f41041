import FerryCore
import FerryPostgres
import Foundation

extension JobLoader {
    /// The keys of a database source: one database, one selection.
    package static let databaseSourceKeys = [
        "sqlite", "postgresql", "postgres", "coredata", "table", "query", "entity", "incremental",
    ]
    /// The keys of a database source's `incremental:`.
    package static let incrementalKeys = ["column", "initial"]
    /// The import keys that describe a file, not a database.
    package static let fileOnlyImportKeys = ["format", "encoding", "csv", "json", "fixed", "decimal_comma"]

    /// `source: {sqlite: legacy.db, table: customers}`, `{postgresql: URL, query: "SELECT …"}`,
    /// `{coredata: Shop.sqlite, entity: Customer}`: a database an import step reads.
    func loadDatabaseSource(_ node: YAMLNode, resolve: (String) -> String, reader: DefinitionReader) -> DatabaseSource?
    {
        guard let mapping = reader.mapping(node, for: "source") else { return nil }
        reader.checkKeys(mapping, allowed: Self.databaseSourceKeys, in: "a database source")
        guard
            let databaseEntry = onlyEntry(
                of: ["sqlite", "postgresql", "postgres", "coredata"], in: mapping, reader: reader,
                missing: "a database source names its database: 'sqlite: FILE', 'postgresql: URL' or 'coredata: FILE'",
                several: "a database source names one database")
        else { return nil }
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
        let allowed = databaseEntry.key == "coredata" ? "'entity: NAME'" : "'table: NAME' or 'query: SELECT …'"
        guard
            let selectionEntry = onlyEntry(
                of: ["table", "query", "entity"], in: mapping, reader: reader,
                missing: "a \(databaseEntry.key) source says what to read: \(allowed)",
                several: "a database source reads one thing")
        else { return nil }
        guard let text = reader.string(selectionEntry.value, for: selectionEntry.key) else { return nil }
        let isCoreData = databaseEntry.key == "coredata"
        guard (selectionEntry.key == "entity") == isCoreData else {
            reader.fail(
                "'\(selectionEntry.key)' does not apply to a \(databaseEntry.key) source; use \(allowed)",
                at: selectionEntry.keyLocation)
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
        var source = DatabaseSource(
            database: database, selection: selection, selectionLocation: selectionEntry.value.location)
        if let node = mapping["incremental"] {
            guard !isCoreData else {
                reader.fail(
                    "'incremental' applies to SQLite and PostgreSQL sources, not to a Core Data store",
                    at: mapping.keyLocation("incremental") ?? node.location)
                return nil
            }
            guard let incremental = loadIncremental(node, reader: reader) else { return nil }
            source.incremental = incremental
        }
        return source
    }

    /// `incremental: {column: updated_at, initial: 2024-01-01}` (or `incremental: updated_at`).
    private func loadIncremental(_ node: YAMLNode, reader: DefinitionReader) -> DatabaseSource.Incremental? {
        if case .scalar = node.content {
            guard let column = reader.string(node, for: "incremental") else { return nil }
            return nonEmpty(column, at: node.location, reader: reader)
                ? DatabaseSource.Incremental(column: column, location: node.location) : nil
        }
        guard let mapping = reader.mapping(node, for: "incremental") else { return nil }
        reader.checkKeys(mapping, allowed: Self.incrementalKeys, in: "'incremental'")
        guard let columnNode = mapping["column"] else {
            reader.fail("'incremental' needs 'column': the increasing column to read past", at: node.location)
            return nil
        }
        guard let column = reader.string(columnNode, for: "column"),
            nonEmpty(column, at: columnNode.location, reader: reader)
        else { return nil }
        var incremental = DatabaseSource.Incremental(column: column, location: columnNode.location)
        if let initialNode = mapping["initial"] {
            guard let initial = reader.string(initialNode, for: "initial") else { return nil }
            incremental.initial = initial
        }
        return incremental
    }

    private func nonEmpty(_ text: String, at location: InputLocation, reader: DefinitionReader) -> Bool {
        guard text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return true }
        reader.fail("the incremental column is empty", at: location)
        return false
    }

    /// The one entry of `mapping` whose key is one of `keys`; none or several fail with `missing`
    /// or `several` (followed by the keys found).
    private func onlyEntry(
        of keys: [String], in mapping: YAMLMapping, reader: DefinitionReader, missing: String, several: String
    ) -> YAMLMapping.Entry? {
        let found = mapping.entries.filter { keys.contains($0.key) }
        guard found.count == 1, let entry = found.first else {
            reader.fail(
                found.isEmpty ? missing : "\(several), not \(found.map { "'\($0.key)'" }.joined(separator: " and "))",
                at: found.dropFirst().first?.keyLocation ?? mapping.location)
            return nil
        }
        return entry
    }
}
