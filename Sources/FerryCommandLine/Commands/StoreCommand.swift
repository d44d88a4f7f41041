import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "Inspect stores.",
        subcommands: [StoreInfoCommand.self, StoreVersionCommand.self])
}

struct StoreInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract:
            "Show a store's model, version, hashes, entity counts and recent runs (for a Core Data store: its metadata, entities and counts, journal and cached model)."
    )

    @Argument(help: ArgumentHelp("The store file.", valueName: "store"))
    var store: String

    @Flag(help: "Print JSON.")
    var json = false

    @Option(help: "How many recent runs to show.")
    var runs: Int = 10

    @Option(help: ArgumentHelp("For a Core Data store: the model bundle whose version to name.", valueName: "bundle"))
    var model: String?

    @Option(
        help: ArgumentHelp(
            "For a Core Data store: a compiled model (.momd folder or its VersionInfo.plist) to match hashes against.",
            valueName: "path"))
    var compiledModel: String?

    struct Info: Encodable {
        struct EntityInfo: Encodable {
            var name: String
            var count: Int
            var hash: String?
        }
        struct RunInfo: Encodable {
            var id: Int64
            var job: String
            var step: String
            var entity: String?
            var startedAt: String
            var endedAt: String?
            var outcome: String
            var read, inserted, updated, skipped, rejected: Int64
            enum CodingKeys: String, CodingKey {
                case id, job, step, entity, outcome, read, inserted, updated, skipped, rejected
                case startedAt = "started_at"
                case endedAt = "ended_at"
            }
        }
        var store: String
        var model: String
        var version: String
        var modelHash: String
        var formatVersion: Int
        var createdAt: String?
        var entities: [EntityInfo]
        var runs: [RunInfo]
        enum CodingKeys: String, CodingKey {
            case store, model, version, entities, runs
            case modelHash = "model_hash"
            case formatVersion = "format_version"
            case createdAt = "created_at"
        }
    }

    func run() throws {
        try runReportingErrors {
            try CommandFiles.requireExistingStore(store)
            if StoreLocation(store).isCoreData {
                return try CoreDataStoreCommands.info(store, model: model, compiledModel: compiledModel, json: json)
            }
            guard let metadata = try Store.metadata(at: store) else {
                throw FerryError(.store, "'\(store)' is not a ferry store (it has no ferry metadata)")
            }
            let (connection, layout) = try Store.inspectionSession(at: store)
            var entities: [Info.EntityInfo] = []
            let names = metadata.model?.entityNames ?? metadata.entityHashes.keys.sorted()
            for name in names {
                let count =
                    try connection.scalar(
                        "SELECT count(*) FROM \(layout.dialect.quote(layout.table(forEntityNamed: name)))")?.int64 ?? 0
                entities.append(Info.EntityInfo(name: name, count: Int(count), hash: metadata.entityHashes[name]))
            }
            let recent = try (RunLog(on: connection, layout: layout)?.recent(limit: runs < 0 ? nil : runs) ?? []).map {
                run in
                Info.RunInfo(
                    id: run.id ?? 0, job: run.job, step: run.step, entity: run.entity, startedAt: run.startedAt,
                    endedAt: run.endedAt,
                    outcome: run.outcome, read: Int64(run.read), inserted: Int64(run.inserted),
                    updated: Int64(run.updated),
                    skipped: Int64(run.skipped), rejected: Int64(run.rejected))
            }
            let info = Info(
                store: store, model: metadata.modelName, version: metadata.modelVersion, modelHash: metadata.modelHash,
                formatVersion: metadata.formatVersion, createdAt: metadata.createdAt, entities: entities, runs: recent)
            if json {
                try writeJSON(info, to: "-")
                return 0
            }
            print("store:    \(store)")
            print("model:    \(info.model) version \(info.version)")
            print("hash:     \(info.modelHash)")
            if let created = info.createdAt { print("created:  \(created)") }
            print("entities:")
            let width = entities.map(\.name.count).max() ?? 0
            for entity in entities {
                print(
                    "  \(entity.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(Console.grouped(entity.count).leftPad(12))"
                )
            }
            print("recent runs:")
            if recent.isEmpty { print("  none") }
            for run in recent {
                print(
                    "  #\(run.id) \(run.startedAt) \(run.job) \(run.step) \(run.entity ?? ""): \(run.outcome), read \(run.read), inserted \(run.inserted), updated \(run.updated), skipped \(run.skipped), rejected \(run.rejected)"
                )
            }
            return 0
        }
    }
}

struct StoreVersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Show which version of a model bundle a store is at, and the steps to the current version.",
        discussion: """
            The version is found by the model hash the store recorded. For a Core Data store (any \
            file with Z_METADATA and Z_PRIMARYKEY tables), by the entity hashes of --compiled-model \
            when given, else by the model the store caches (Z_MODELCACHE), else by its tables and \
            columns. Exit codes: 0 the store is at \
            one of the bundle's versions · 64 it matches none (the error lists the versions and which \
            entities differ from the closest one), or the model is missing or invalid · 1 the store \
            cannot be read.
            """)

    @Argument(help: ArgumentHelp("The store file.", valueName: "store"))
    var store: String

    @Option(help: ArgumentHelp("The model bundle (folder, model.yml, or a model file).", valueName: "bundle"))
    var model: String

    @Option(
        help: ArgumentHelp(
            "For a Core Data store: a compiled model (.momd folder or its VersionInfo.plist) whose entity hashes are compared first.",
            valueName: "path"))
    var compiledModel: String?

    @Flag(help: "Print JSON.")
    var json = false

    struct Info: Encodable {
        var store: String
        var model: String
        var version: String
        var hash: String
        var recordedVersion: String
        var current: String
        var upToDate: Bool
        var path: [String]
        enum CodingKeys: String, CodingKey {
            case store, model, version, hash, current, path
            case recordedVersion = "recorded_version"
            case upToDate = "up_to_date"
        }
    }

    func run() throws {
        try runReportingErrors {
            try CommandFiles.requireExistingStore(store)
            if StoreLocation(store).isCoreData {
                return try CoreDataStoreCommands.versionCommand(
                    store, model: model, compiledModel: compiledModel, json: json)
            }
            guard let metadata = try Store.metadata(at: store) else {
                throw FerryError(.store, "'\(store)' is not a ferry store (it has no ferry metadata)")
            }
            let bundle = try loadModel(model)
            let version = try VersionDetector.detect(metadata: metadata, bundle: bundle, store: store)
            let path = (try? bundle.path(from: version.version, to: bundle.currentVersion).map(\.version)) ?? []
            let info = Info(
                store: store, model: bundle.name, version: version.version, hash: version.versionHash,
                recordedVersion: metadata.modelVersion, current: bundle.currentVersion,
                upToDate: version.version == bundle.currentVersion, path: path)
            if json {
                try writeJSON(info, to: "-")
                return 0
            }
            print("store:    \(store)")
            var line = "version:  \(bundle.name) \(info.version) (hash \(info.hash.prefix(12)))"
            if info.recordedVersion != info.version { line += "; the store recorded version '\(info.recordedVersion)'" }
            print(line)
            Self.printStatus(version: info.version, current: info.current, path: path, advice: "; run ferry migrate")
            return 0
        }
    }

    /// The `current:` and `status:` lines: up to date, steps behind (the path there), or ahead.
    static func printStatus(version: String, current: String, path: [String], advice: String = "") {
        print("current:  \(current)")
        if version == current {
            print("status:   up to date")
        } else if path.count > 1 {
            let steps = path.count - 1
            print(
                "status:   \(steps) \(steps == 1 ? "step" : "steps") behind (\(path.joined(separator: " → ")))\(advice)"
            )
        } else {
            print("status:   at version \(version), which comes after the current version \(current)")
        }
    }
}

extension String {
    func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
