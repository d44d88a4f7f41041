import FerryCore
import FerryPipeline
import Foundation

/// `ferry store info` and `ferry store version` for Core Data SQLite stores: read from a private
/// copy, so the user's store, `-wal` and `-shm` are never written.
enum CoreDataStoreCommands {
    struct Info: Encodable {
        struct EntityInfo: Encodable {
            var number: Int64
            var name: String
            var parent: String?
            var abstract: Bool
            var table: String?
            var count: Int
            var hash: String?
        }
        struct HistoryInfo: Encodable {
            var name: String
            var count: Int
        }
        var store: String
        var kind = "core_data"
        var uuid: String
        var storeType: String?
        var frameworkVersion: Int64?
        var sqliteVersion: Int
        var journalMode: String
        var walFrames: Int
        var walHasData: Bool
        var versionIdentifiers: [String]
        var otherMetadataKeys: [String]
        var cachedModel: String?
        var cachedModelError: String?
        var version: VersionInfo?
        var entities: [EntityInfo]
        var history: [HistoryInfo]
        enum CodingKeys: String, CodingKey {
            case store, kind, uuid, version, entities, history
            case storeType = "store_type"
            case frameworkVersion = "framework_version"
            case sqliteVersion = "sqlite_version"
            case journalMode = "journal_mode"
            case walFrames = "wal_frames"
            case walHasData = "wal_has_data"
            case versionIdentifiers = "version_identifiers"
            case otherMetadataKeys = "other_metadata_keys"
            case cachedModel = "cached_model"
            case cachedModelError = "cached_model_error"
        }
    }

    struct VersionInfo: Encodable {
        var store: String
        var model: String
        var version: String
        var method: String
        var alsoMatching: [String]
        var current: String
        var upToDate: Bool
        var path: [String]
        enum CodingKeys: String, CodingKey {
            case store, model, version, method, current, path
            case alsoMatching = "also_matching"
            case upToDate = "up_to_date"
        }
    }

    /// The version of `bundle` the store is at, with the way there.
    static func version(of file: CoreDataStoreFile, model: String, compiledModel: String?) throws -> VersionInfo {
        let bundle = try loadModel(model)
        let compiled = try compiledModel.map(CompiledModelVersions.read)
        let match = try CoreDataVersionDetector.detect(store: file, bundle: bundle, compiled: compiled)
        let version = match.version.version
        let path = (try? bundle.path(from: version, to: bundle.currentVersion).map(\.version)) ?? []
        return VersionInfo(
            store: file.path, model: bundle.name, version: version, method: match.method.rawValue,
            alsoMatching: match.alsoMatching,
            current: bundle.currentVersion, upToDate: version == bundle.currentVersion, path: path)
    }

    static func info(_ store: String, model: String?, compiledModel: String?, json: Bool) throws -> Int32 {
        let file = try CoreDataStoreFile.read(store)
        var cached: ObjectModel?
        var cacheError: String?
        do {
            cached = try file.cachedModel()
        } catch let error as FerryError {
            cacheError = error.message
        }
        let names = Dictionary(file.entities.map { ($0.number, $0.name) }, uniquingKeysWith: { first, _ in first })
        let entities = file.entities.map { record in
            Info.EntityInfo(
                number: record.number, name: record.name,
                parent: record.superNumber == 0 ? nil : names[record.superNumber],
                abstract: cached?.entity(named: record.name)?.isAbstract ?? false, table: record.table,
                count: record.rows,
                hash: file.metadata.versionHashes[record.name].map { Data($0).base64EncodedString() })
        }
        let info = Info(
            store: store, uuid: file.metadata.uuid, storeType: file.metadata.storeType,
            frameworkVersion: file.metadata.frameworkVersion,
            sqliteVersion: file.sqliteVersion, journalMode: file.journalMode.description, walFrames: file.walFrames,
            walHasData: file.walHasData, versionIdentifiers: file.metadata.versionIdentifiers,
            otherMetadataKeys: file.metadata.otherKeyNames,
            cachedModel: cached.map { "\($0.entities.count) entities" }, cachedModelError: cacheError,
            version: try model.map { try version(of: file, model: $0, compiledModel: compiledModel) },
            entities: entities,
            history: file.historyTables.map { Info.HistoryInfo(name: $0.name, count: $0.rows) })
        if json {
            try writeJSON(info, to: "-")
            return 0
        }
        print("store:      \(store)")
        print("kind:       Core Data SQLite store (\(info.storeType ?? "no NSStoreType"))")
        print("uuid:       \(info.uuid)")
        print(
            "framework:  Core Data \(info.frameworkVersion.map(String.init) ?? "unknown"), written by SQLite \(info.sqliteVersion)"
        )
        let wal =
            info.walHasData ? "the -wal holds \(info.walFrames) frames (read with the store)" : "no data in a -wal"
        print("journal:    \(info.journalMode); \(wal)")
        if let version = info.version {
            print("version:    \(version.model) \(version.version) (by \(describe(version.method)))")
        }
        if let cached = info.cachedModel {
            print("cache:      \(cached) (Z_MODELCACHE)")
        } else if let cacheError {
            print("cache:      unreadable: \(cacheError)")
        }
        if !info.otherMetadataKeys.isEmpty {
            print("metadata:   also \(info.otherMetadataKeys.joined(separator: ", "))")
        }
        print("entities:")
        let width = entities.map { $0.name.count + ($0.abstract ? 11 : 0) }.max() ?? 0
        for entity in entities {
            let name = entity.name + (entity.abstract ? " (abstract)" : "")
            let parent = entity.parent.map { "  sub-entity of \($0)" } ?? ""
            print(
                "  \(String(entity.number).leftPad(3)) \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(Console.grouped(entity.count).leftPad(12))  \(entity.table ?? "no table")\(parent)"
            )
        }
        if !info.history.isEmpty {
            print("history:")
            for table in info.history { print("  \(table.name)  \(Console.grouped(table.count))") }
        }
        return 0
    }

    static func versionCommand(_ store: String, model: String, compiledModel: String?, json: Bool) throws -> Int32 {
        let file = try CoreDataStoreFile.read(store)
        let info = try version(of: file, model: model, compiledModel: compiledModel)
        if json {
            try writeJSON(info, to: "-")
            return 0
        }
        print("store:    \(store)")
        var line = "version:  \(info.model) \(info.version) (by \(describe(info.method)))"
        if !info.alsoMatching.isEmpty { line += "; also matches \(info.alsoMatching.joined(separator: ", "))" }
        print(line)
        StoreVersionCommand.printStatus(version: info.version, current: info.current, path: info.path)
        return 0
    }

    private static func describe(_ method: String) -> String {
        CoreDataVersionDetector.Method(rawValue: method)?.description ?? method
    }
}
