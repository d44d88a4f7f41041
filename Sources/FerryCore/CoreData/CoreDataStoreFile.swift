import Foundation

/// What a Core Data SQLite store holds besides its rows: metadata, entity numbering, row
/// counts per entity, history tables, journal mode, and the model it caches (COREDATA.md §2).
///
/// Read from a private copy (``CoreDataStoreCopy``): the user's files are never opened for
/// writing, and rows that live only in the `-wal` are seen.
///
/// ```swift
/// let store = try CoreDataStoreFile.read("App.sqlite")
/// print(store.metadata.uuid, store.entities.map(\.name))
/// let model = try store.cachedModel()
/// ```
package struct CoreDataStoreFile: Sendable {
    /// One row of `Z_PRIMARYKEY` with the number of rows of that entity (not of its sub-entities).
    package struct EntityRecord: Sendable, Hashable {
        /// `Z_ENT`.
        package var number: Int64
        /// `Z_NAME` (the name at store creation; may be stale after a rename migration).
        package var name: String
        /// `Z_SUPER`: the parent's number, 0 for a root.
        package var superNumber: Int64
        /// `Z_MAX`: the primary-key high-water mark (kept on roots only).
        package var maxKey: Int64
        /// The table holding this entity's rows (the root's table), when it exists.
        package var table: String?
        /// Rows whose `Z_ENT` is this entity's number.
        package var rows: Int
    }

    /// A persistent-history table (`ACHANGE`, `ATRANSACTION`, …) and its row count.
    package struct HistoryTable: Sendable, Hashable {
        package var name: String
        package var rows: Int
    }

    /// The store's journal mode, from bytes 18 and 19 of the SQLite header.
    package enum JournalMode: Sendable, Hashable, CustomStringConvertible {
        case rollback
        case wal
        case unknown(write: UInt8, read: UInt8)

        package var description: String {
            switch self {
            case .rollback: return "delete"
            case .wal: return "wal"
            case .unknown(let write, let read): return "unknown (header bytes \(write)/\(read))"
            }
        }
    }

    /// How much an inflated `Z_MODELCACHE` may grow (real caches are 2–11 KB).
    package static let modelCacheLimit = 64 * 1024 * 1024

    /// The user's store path.
    package var path: String
    package var journalMode: JournalMode
    /// Frames in the `-wal` file beside the store (0 when there is none or it is empty); rows may
    /// live only there.
    package var walFrames: Int
    /// The SQLite version that last wrote the file (header offset 96), e.g. 3024000.
    package var sqliteVersion: Int
    package var metadata: CoreDataStoreMetadata
    /// Model entities (`Z_ENT` below 16000), by number.
    package var entities: [EntityRecord]
    /// Persistent-history pseudo-entities (`Z_ENT` 16000 and above).
    package var historyEntities: [EntityRecord]
    /// Persistent-history tables (names starting with `A`), by name.
    package var historyTables: [HistoryTable]
    /// Every table's column names, as `sqlite_master` lists them (for structural matching).
    package var tableColumns: [String: [String]]
    /// Every index name.
    package var indexNames: [String]
    /// The compressed `Z_MODELCACHE` blob, when the store has one.
    package var modelCache: [UInt8]?

    /// True when the store's `-wal` holds frames.
    package var walHasData: Bool { walFrames > 0 }

    /// True when the file at `path` is a SQLite database with Core Data's `Z_METADATA` and
    /// `Z_PRIMARYKEY` tables, whatever its extension. Reads the main file without locking or
    /// writing anything; only when the schema is not there and a `-wal` holds data does it look
    /// at a private copy.
    package static func isCoreDataStore(_ path: String) -> Bool {
        guard (try? header(of: path)) != nil else { return false }
        if let tables = try? tableNames(immutable: path), hasSystemTables(tables) { return true }
        guard walFrameCount(path + "-wal") > 0, let copy = try? CoreDataStoreCopy(of: path) else { return false }
        defer { copy.remove() }
        guard let connection = try? copy.database, let tables = try? tableNames(connection) else { return false }
        return hasSystemTables(tables)
    }

    /// Refuses a Core Data store where ferry would open the file in place (`export`, `verify`,
    /// `import`, `update`, `delete`, `migrate`, `run`): SQLite would checkpoint its `-wal` into
    /// it and rewrite its `-shm`. Does nothing for any other file.
    package static func refuseInPlace(_ path: String, command: String) throws {
        guard isCoreDataStore(path) else { return }
        throw FerryError(
            .store,
            "'\(path)' is a Core Data store: ferry \(command) does not work on Core Data stores yet; nothing was opened (opening it in place would rewrite its -wal and -shm)",
            notes: [
                "ferry store info, ferry store version and ferry model show read a Core Data store from a private copy",
                "ferry check STORE --model MODEL migrates a private copy of a Core Data store and verifies it; ferry migrate --dry-run shows the plan",
            ])
    }

    /// Reads everything but the rows from a private copy of the store at `path`.
    ///
    /// - Throws: `FerryError` (`.store`) when the file is missing, not SQLite, not a Core Data
    ///   store, or its `Z_METADATA` is missing or malformed.
    package static func read(_ path: String) throws -> CoreDataStoreFile {
        let header = try header(of: path)
        let copy = try CoreDataStoreCopy(of: path)
        defer { copy.remove() }
        return try read(copy, header: header)
    }

    /// Reads an already copied store (see ``CoreDataStoreCopy``).
    package static func read(
        _ copy: CoreDataStoreCopy, header: [UInt8]? = nil, countingRows: Bool = true
    ) throws -> CoreDataStoreFile {
        try read(connection: copy.database, path: copy.original, header: header, countingRows: countingRows)
    }

    /// Reads the store at `path` through `connection`: a private copy's, or one opened on the
    /// store itself with ``immutableURI(_:)`` when ``readsInPlace(_:)``.
    ///
    /// Without `countingRows` (a migration, which needs the metadata, entities and columns but
    /// no row counts) no table is scanned: every ``EntityRecord/rows`` is 0, ``historyTables`` is
    /// empty, and each entity's ``EntityRecord/table`` is its root's by name.
    package static func read(
        connection: Connection, path: String, header: [UInt8]? = nil, countingRows: Bool = true
    ) throws -> CoreDataStoreFile {
        let header = try header ?? Self.header(of: path)
        let tables = try tableNames(connection)
        guard hasSystemTables(tables) else {
            let missing = systemTables.filter { !tables.contains($0) }.joined(separator: " and ")
            throw FerryError(
                .store, "'\(path)' is a SQLite database but not a Core Data store (it has no \(missing) table)")
        }
        let metadata = try readMetadata(connection, path: path)
        var columns: [String: [String]] = [:]
        for table in tables {
            columns[table] = try connection.rows("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap {
                $0.first?.text
            }
        }
        // Rows per Z_ENT over every entity table: robust to stale Z_NAMEs and shared root tables.
        var rows: [Int64: Int] = [:]
        var tableOf: [Int64: String] = [:]
        var history: [HistoryTable] = []
        for table in tables.sorted() where countingRows && columns[table]?.contains("Z_ENT") == true {
            if table.hasPrefix("Z"), !table.hasPrefix("Z_") {
                for row in try connection.rows("SELECT Z_ENT, count(*) FROM \(SQL.quote(table)) GROUP BY Z_ENT") {
                    guard let number = row[0].int64, let count = row[1].int64 else { continue }
                    rows[number, default: 0] += Int(count)
                    tableOf[number] = table
                }
            } else if table.hasPrefix("A") {
                let count = try connection.scalar("SELECT count(*) FROM \(SQL.quote(table))")?.int64 ?? 0
                history.append(HistoryTable(name: table, rows: Int(count)))
            }
        }
        var records: [EntityRecord] = []
        for row in try connection.rows("SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT") {
            guard let number = row[0].int64, let name = row[1].text else {
                throw FerryError(.store, "store '\(path)': Z_PRIMARYKEY has a row without an entity number or name")
            }
            records.append(
                EntityRecord(
                    number: number, name: name, superNumber: row[2].int64 ?? 0, maxKey: row[3].int64 ?? 0,
                    table: tableOf[number], rows: rows[number] ?? 0))
        }
        // An entity without rows lives in its root's table.
        let byNumber = Dictionary(records.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        for index in records.indices where records[index].table == nil {
            var root = records[index]
            var seen: Set<Int64> = [root.number]
            while root.superNumber != 0, let parent = byNumber[root.superNumber], seen.insert(parent.number).inserted {
                root = parent
            }
            let table = "Z" + root.name.uppercased()
            if tables.contains(table) { records[index].table = table }
        }
        let indexes = try connection.rows(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        .compactMap { $0.first?.text }
        var cache: [UInt8]?
        if tables.contains("Z_MODELCACHE"),
            let value = try connection.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")
        {
            if case .blob(let bytes) = value { cache = bytes }
        }
        return CoreDataStoreFile(
            path: path, journalMode: journalMode(header), walFrames: walFrameCount(path + "-wal"),
            sqliteVersion: Int(bigEndian(header, at: 96, size: 4)), metadata: metadata,
            entities: records.filter { $0.number < 16000 }, historyEntities: records.filter { $0.number >= 16000 },
            historyTables: history, tableColumns: columns, indexNames: indexes, modelCache: cache)
    }

    /// The model the store caches in `Z_MODELCACHE`: the model it was created with or last
    /// migrated to. Named after the store file, version `cache`.
    ///
    /// - Throws: `FerryError` naming the store when there is no cache or it is corrupt.
    package func cachedModel() throws -> ObjectModel {
        let source = "the cached model (Z_MODELCACHE) of store '\(path)'"
        guard let modelCache, !modelCache.isEmpty else {
            throw FerryError(.store, "store '\(path)' has no cached model (Z_MODELCACHE is missing or empty)")
        }
        let archive = try RawDeflate.inflate(modelCache, limit: Self.modelCacheLimit, source: source)
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        return try CachedModelDecoder.decode(archive, name: name, version: "cache", source: source)
    }

    // MARK: - File level

    static let systemTables = ["Z_METADATA", "Z_PRIMARYKEY"]

    private static func hasSystemTables(_ tables: Set<String>) -> Bool {
        systemTables.allSatisfy(tables.contains)
    }

    /// The first 100 bytes of the file, checked to be a SQLite header.
    static func header(of path: String) throws -> [UInt8] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw FerryError(.store, "store '\(path)' does not exist")
        }
        guard !isDirectory.boolValue else { throw FerryError(.store, "'\(path)' is a folder, not a store file") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FerryError(.io, "cannot read store '\(path)': permission denied")
        }
        defer { try? handle.close() }
        let bytes = [UInt8]((try? handle.read(upToCount: 100)) ?? Data())
        guard bytes.count == 100, bytes.starts(with: Array("SQLite format 3\u{0}".utf8)) else {
            throw FerryError(.store, "'\(path)' is not a SQLite database (it does not start with the SQLite header)")
        }
        return bytes
    }

    private static func journalMode(_ header: [UInt8]) -> JournalMode {
        switch (header[18], header[19]) {
        case (1, 1): return .rollback
        case (2, 2): return .wal
        case let (write, read): return .unknown(write: write, read: read)
        }
    }

    /// Complete frames in a WAL file: a 32-byte header (page size at offset 8), then frames of
    /// a 24-byte header and one page.
    static func walFrameCount(_ path: String) -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? handle.close() }
        let header = [UInt8]((try? handle.read(upToCount: 32)) ?? Data())
        guard header.count == 32, let size = try? handle.seekToEnd(), size >= 32 else { return 0 }
        var pageSize = Int(bigEndian(header, at: 8, size: 4))
        if pageSize == 1 { pageSize = 65536 }
        guard pageSize >= 512 else { return 0 }
        return Int(size - 32) / (24 + pageSize)
    }

    private static func bigEndian(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        (0..<size).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[offset + $1]) }
    }

    // MARK: - Tables

    private static func tableNames(_ connection: Connection) throws -> Set<String> {
        Set(try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0.first?.text })
    }

    /// Table names of the main file, opened `immutable=1`: SQLite neither locks nor writes it.
    private static func tableNames(immutable path: String) throws -> Set<String> {
        guard let uri = immutableURI(path) else { return [] }
        let connection = try Connection(path: uri, readOnly: true, create: false)
        return try tableNames(connection)
    }

    /// The `file:` URI opening the main file at `path` with `immutable=1`: SQLite neither locks
    /// nor writes it, nor opens its `-wal`, `-journal` or `-shm` (nil when the path cannot be encoded).
    package static func immutableURI(_ path: String) -> String? {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return absolute.addingPercentEncoding(withAllowedCharacters: allowed).map { "file:\($0)?immutable=1" }
    }

    /// True when the main file holds every commit of the store (its `-wal` has no frames and
    /// there is no `-journal` to roll back), so that it can be read in place through
    /// ``immutableURI(_:)`` instead of through a private copy.
    package static func readsInPlace(_ path: String) -> Bool {
        inPlaceObstacle(path) == nil
    }

    /// Why the store at `path` cannot be read in place (its `-wal` holds commits, or a
    /// `-journal` waits to be rolled back), for the diagnostic of the private copy; nil when it can.
    package static func inPlaceObstacle(_ path: String) -> String? {
        let frames = walFrameCount(path + "-wal")
        if frames != 0 { return "its -wal holds \(frames) frame(s) not yet in the main file" }
        if FileManager.default.fileExists(atPath: path + "-journal") { return "a -journal waits to be rolled back" }
        return nil
    }

    private static func readMetadata(_ connection: Connection, path: String) throws -> CoreDataStoreMetadata {
        let rows = try connection.rows("SELECT Z_VERSION, Z_UUID, Z_PLIST FROM Z_METADATA")
        guard let row = rows.first else {
            throw FerryError(.store, "store '\(path)': Z_METADATA has no row (a Core Data store has exactly one)")
        }
        guard rows.count == 1 else {
            throw FerryError(
                .store, "store '\(path)': Z_METADATA has \(rows.count) rows (a Core Data store has exactly one)")
        }
        guard case .blob(let plist) = row[2] else {
            throw FerryError(
                .store,
                "store '\(path)': Z_METADATA.Z_PLIST is \(row[2].isNull ? "NULL" : "not a blob"); expected a binary property list"
            )
        }
        return try CoreDataStoreMetadata(
            version: row[0].int64 ?? 0, uuid: row[1].text ?? "", plist: plist, source: "Z_METADATA of store '\(path)'")
    }
}
