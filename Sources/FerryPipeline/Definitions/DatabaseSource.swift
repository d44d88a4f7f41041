import FerryCore
import FerryPostgres

/// A database an import step reads instead of a file (see docs/files.md, "Databases as
/// sources"): a table or a query of a SQLite or PostgreSQL database, or an entity of a Core Data
/// store.
public struct DatabaseSource: Sendable, Hashable {
    /// Which database, and how it is reached.
    public enum Database: Sendable, Hashable {
        /// A SQLite file (any SQLite database, a ferry store among them), opened read-only.
        case sqlite(path: String)
        /// A PostgreSQL server, by URL (`postgresql://…` or `postgres://…`).
        case postgresql(url: String)
        /// A Core Data store, read through a private copy.
        case coreData(path: String)

        /// The database as shown to users: the path, or the URL without its password.
        public var label: String {
            switch self {
            case .sqlite(let path), .coreData(let path): return path
            case .postgresql(let url): return (try? PostgresURL(url).description) ?? "a PostgreSQL URL"
            }
        }
    }

    /// What the step reads from the database.
    public enum Selection: Sendable, Hashable {
        /// Every row of a table (or view), in its storage order.
        case table(String)
        /// The rows of a read-only query (`SELECT …`, `WITH …`).
        case query(String)
        /// Every object of a Core Data entity (sub-entities' objects included).
        case entity(String)
    }

    /// An incremental read (`incremental: {column: updated_at}`): only the rows whose column is
    /// at or past the last value a run committed (see docs/files.md, "Incremental loads").
    public struct Incremental: Sendable, Hashable {
        /// The increasing column (a timestamp, an increasing key).
        public var column: String
        /// The value to start from when no run has committed one yet (nil: every row).
        public var initial: String?
        /// Where the column is named in the job, for errors about it.
        public var location: InputLocation?

        /// An incremental read of `column`, from `initial` on the first run.
        public init(column: String, initial: String? = nil, location: InputLocation? = nil) {
            self.column = column
            self.initial = initial
            self.location = location
        }
    }

    /// The database read.
    public var database: Database
    /// What of it is read: a table, a query or an entity.
    public var selection: Selection
    /// Where the selection is written (the `table:`, `query:` or `entity:` value, or a CLI flag),
    /// for errors about it: a missing table, the database's message about bad SQL.
    public var selectionLocation: InputLocation?
    /// The increasing column the source is read past, when it is read incrementally.
    public var incremental: Incremental?

    /// A source reading `selection` of `database`.
    public init(database: Database, selection: Selection, selectionLocation: InputLocation? = nil) {
        self.database = database
        self.selection = selection
        self.selectionLocation = selectionLocation
    }

    /// The file the source reads, nil for a server.
    public var file: String? {
        switch database {
        case .sqlite(let path), .coreData(let path): return path
        case .postgresql: return nil
        }
    }

    /// The database as shown to users: the path, or the URL without its password.
    public var databaseLabel: String { database.label }

    /// The source as a label in reports, locations and rejects: `legacy.db (table customers)`,
    /// `postgresql://app@db/shop (query)`, `Shop.sqlite (entity Customer)`.
    public var label: String {
        switch selection {
        case .table(let name): return "\(databaseLabel) (table \(name))"
        case .query: return "\(databaseLabel) (query)"
        case .entity(let name): return "\(databaseLabel) (entity \(name))"
        }
    }

    /// A default entity name for the rows: the entity's name, or the table's name (without its
    /// schema) made an identifier; nil for a query.
    public var defaultEntityName: String? {
        switch selection {
        case .entity(let name): return name
        case .table(let name):
            return AttributeNaming.identifier(
                String(name.split(separator: ".").last ?? Substring(name)), fallback: "records")
        case .query: return nil
        }
    }
}
