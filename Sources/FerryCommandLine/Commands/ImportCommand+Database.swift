import FerryCore
import FerryFormats
import FerryPipeline
import FerryPostgres

extension ImportCommand {
    /// The database `--table` or `--query` reads, or nil for a data file: a `postgresql://` URL,
    /// a Core Data store (whose `--table` is an entity) or any other SQLite file.
    func databaseSource() throws -> DatabaseSource? {
        guard table != nil || query != nil else { return nil }
        if table != nil && query != nil { throw FerryError(.usage, "pass --table or --query, not both") }
        guard files.count == 1, file != "-" else {
            throw FerryError(
                .usage,
                "--table and --query read one database: give its file or postgresql:// URL once (not standard input)")
        }
        if format != nil {
            throw FerryError(.usage, "--format applies to data files; a database's columns have their own types")
        }
        if encoding != nil || decimalComma || !jsonPointer.isEmpty || jsonShape != nil || keyField != nil {
            throw FerryError(
                .usage, "--encoding, --decimal-comma and the JSON flags apply to data files, not to a database")
        }
        let database: DatabaseSource.Database
        if PostgresURL.isPostgresURL(file) {
            do {
                _ = try PostgresURL(file)
            } catch {
                throw FerryError(.usage, error.message)
            }
            database = .postgresql(url: file)
        } else if StoreLocation(file).isCoreData {
            guard table != nil else {
                throw FerryError(
                    .usage,
                    "'\(file)' is a Core Data store: read an entity with --table ENTITY (a query would read Core Data's own tables)"
                )
            }
            database = .coreData(path: file)
        } else {
            database = .sqlite(path: file)
        }
        let selection: DatabaseSource.Selection
        if let table {
            if case .coreData = database { selection = .entity(table) } else { selection = .table(table) }
        } else {
            guard entity != nil else { throw FerryError(.usage, "--query needs --entity: the entity its rows become") }
            selection = .query(query ?? "")
        }
        return DatabaseSource(
            database: database, selection: selection,
            selectionLocation: InputLocation(file: table != nil ? "--table" : "--query"))
    }
}
