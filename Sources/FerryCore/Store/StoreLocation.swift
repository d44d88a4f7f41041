import Foundation

/// Where a store lives, read once from the text that names it (a `--store` flag, a job's
/// `store:`, a source or destination of `ferry copy`): a file in ferry's or Core Data's layout,
/// or a schema in a PostgreSQL database.
///
/// This is the one place that classifies a store's name. The pipeline and the command line parse
/// the text once where the store is named and pass the value on; what they then need to know
/// about the store's engine they ask its ``engine`` (``StoreEngine/capabilities``), never the
/// text again.
///
/// ```swift
/// StoreLocation("postgresql://db/shop?schema=sales")  // .postgres(url: …, schema: "sales")
/// StoreLocation("out/shop.sqlite")                      // .file("out/shop.sqlite", layout: .unknown) before it exists
/// StoreLocation("App.sqlite")                           // .file("App.sqlite", layout: .coreData)
/// ```
///
/// A file's layout is what the disk said when the text was parsed: a location parsed before a
/// run creates its store says ``FileLayout/unknown``.
public enum StoreLocation: Sendable, Hashable {
    /// How the tables of a store file are laid out, as far as the file on disk tells.
    public enum FileLayout: Sendable, Hashable {
        /// A file that is there and is not a Core Data store: ferry's layout (opening it refuses
        /// anything else, naming what it found).
        case ferry
        /// A Core Data SQLite store (`Z_METADATA` and `Z_PRIMARYKEY`, whatever its extension).
        case coreData
        /// No file yet, an in-memory database (`:memory:`) or a SQLite `file:` URI: the layout is
        /// the one the store is created in.
        case unknown
    }

    /// A SQLite file (or `:memory:`, or a SQLite `file:` URI) at `path`, as given.
    case file(String, layout: FileLayout)
    /// A schema in a PostgreSQL database: the URL as given, and the schema it names (`ferry` when
    /// it names none, or when the URL cannot be read: opening the store then says why).
    case postgres(url: String, schema: String)

    /// Classifies `text`: a `postgres://` or `postgresql://` URL is a PostgreSQL store; anything
    /// else is a file, whose layout is read from what is on disk (without writing or locking
    /// anything). Never throws: a URL ferry cannot open, or a file that is not a store, is refused
    /// where the store is opened, with the same messages as always.
    public init(_ text: String) {
        if let server = Self.serverEngine(text)?.driver.server {
            self = .postgres(url: text, schema: server.schema(of: text))
        } else if text == ":memory:" || text.hasPrefix("file:") {
            self = .file(text, layout: .unknown)
        } else if CoreDataStoreFile.isCoreDataStore(text) {
            self = .file(text, layout: .coreData)
        } else if FileManager.default.fileExists(atPath: text) {
            self = .file(text, layout: .ferry)
        } else {
            self = .file(text, layout: .unknown)
        }
    }

    /// True when `text` names a store in a database server (a `postgres://` or `postgresql://`
    /// URL): the part of the rule that needs no look at the disk, for code that has only to tell
    /// a server from a file (``isDatabaseServer`` of the parsed location says the same).
    package static func namesDatabaseServer(_ text: String) -> Bool {
        serverEngine(text) != nil
    }

    /// The engine of the database server a URL names (by its scheme), nil for a file: the part
    /// of the rule that needs no look at the disk, where ``Store`` reaches a server engine's
    /// own code (``StoreEngineDriver/server``).
    package static func serverEngine(_ text: String) -> StoreEngine? {
        PathOrURL(text).scheme.flatMap(StoreEngines.server(forScheme:))
    }

    /// The text the location was parsed from.
    public var text: String {
        switch self {
        case .file(let path, _): return path
        case .postgres(let url, _): return url
        }
    }

    /// The file's path; nil for a store in a database server.
    public var filePath: String? {
        if case .file(let path, _) = self { return path }
        return nil
    }

    /// True for a store in a database server (not a file).
    public var isDatabaseServer: Bool { filePath == nil }

    /// The layout of a store file (``FileLayout/unknown`` for a store in a database server, whose
    /// layout is always ferry's).
    public var layout: FileLayout {
        if case .file(_, let layout) = self { return layout }
        return .unknown
    }

    /// True for ``FileLayout/coreData``: a Core Data store, read through a private copy and
    /// never opened in place.
    public var isCoreData: Bool { layout == .coreData }

    /// True for `:memory:`.
    public var isInMemory: Bool { text == ":memory:" }

    /// What the file system says about the store: true or false for a file (`:memory:` and
    /// `file:` URIs count as missing, as ``Store/open(at:model:options:)`` counts them); nil for a
    /// store in a database server, whose existence only the server can tell.
    public var existsOnDisk: Bool? {
        switch self {
        case .postgres: return nil
        case .file(_, let layout): return layout != .unknown
        }
    }

    /// True unless the file system says no store is there: a file that exists, or a store in a
    /// database server (asked when opened).
    public var mayExist: Bool { existsOnDisk ?? true }

    /// The engine that stores objects here.
    public var engine: StoreEngine {
        switch self {
        case .postgres(let url, _):
            return Self.serverEngine(url) ?? .unregistered(scheme: PathOrURL(url).scheme ?? "postgresql")
        case .file(_, .coreData): return .coreDataSQLite
        case .file: return .sqlite
        }
    }

    /// The text for messages: a PostgreSQL URL without its password (`***`).
    public var shown: String { PathOrURL(text).shown }
}
