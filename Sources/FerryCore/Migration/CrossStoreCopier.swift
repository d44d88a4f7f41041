import Foundation

/// `ferry copy` when the source or the destination is a PostgreSQL store: SQLite → PostgreSQL,
/// PostgreSQL → SQLite, PostgreSQL → PostgreSQL (same model and version).
///
/// Store-agnostic: every entity's rows, with their keys, to-one keys and join-table rows, are
/// copied by `StoreTableTransfer` (the one row copier between backends) into a new store beside
/// the destination: a scratch schema on PostgreSQL, a scratch file on SQLite, in one transaction
/// with foreign keys checked at its end. The
/// copy is then verified (per-entity counts, and checksums of every attribute, which compare
/// across backends) and only then put in place: a file rename on SQLite; on PostgreSQL, one
/// transaction that drops the replaced store's schema and renames the scratch schema. A failure
/// leaves the destination as it was and removes the scratch store.
struct CrossStoreCopier {
    let copier: StoreCopier

    /// A Core Data source copied into a ferry store file in a temporary folder (as a copy into
    /// a file would), then from there into PostgreSQL; the report names the Core Data store.
    private func throughFerryStore() throws -> StoreCopier.Report {
        let started = ContinuousClock.now
        // Removed by the next process that makes one when this one is killed.
        let folder = try CoreDataStoreCopy.makePrivateFolder(for: copier.sourcePath)
        defer { try? FileManager.default.removeItem(at: folder) }
        var first = StoreCopier(from: copier.sourcePath, to: folder.appendingPathComponent("store.sqlite").path)
        first.sourceBundle = copier.sourceBundle
        _ = try first.run()
        var onward = StoreCopier(from: first.destinationPath, to: copier.destinationPath)
        onward.replacesExisting = copier.replacesExisting
        onward.busyTimeout = copier.busyTimeout
        var report = try CrossStoreCopier(copier: onward).run()
        report.source = copier.sourcePath
        report.seconds = (ContinuousClock.now - started).seconds
        return report
    }

    func run() throws -> StoreCopier.Report {
        let started = ContinuousClock.now
        let sourcePath = copier.sourcePath
        let destinationPath = copier.destinationPath
        let sourceLocation = StoreLocation(sourcePath)
        let destinationEngine = StoreLocation(destinationPath).engine
        try PathOrURL.requireStore(sourcePath)
        try PathOrURL.requireStore(destinationPath)
        if !sourceLocation.isDatabaseServer {
            guard FileManager.default.fileExists(atPath: sourcePath) else {
                throw FerryError(.noInput, "the store '\(sourcePath)' does not exist")
            }
            if sourceLocation.isCoreData { return try throughFerryStore() }
        }
        if copier.sourceBundle != nil {
            throw FerryError(
                .usage,
                "--model reads a Core Data store; '\(Self.shown(sourcePath))' is a ferry store, which records its own model"
            )
        }
        guard let metadata = try Store.metadata(at: sourcePath), let model = metadata.model else {
            throw FerryError(
                .store,
                "'\(Self.shown(sourcePath))' is not a ferry store (it has no ferry metadata); to read a plain database's tables use ferry import"
            )
        }
        let source = try Store.open(at: sourcePath, model: model, options: .existingReadOnly)
        try FerryLayout().checkRepresentable(source.model)
        if sourceLocation.engine == destinationEngine,
            try destinationEngine.driver.sameStore(sourcePath, destinationPath)
        {
            throw FerryError(
                .usage, "'\(Self.shown(sourcePath))' and '\(Self.shown(destinationPath))' are the same store")
        }

        // The destination: locked for writing, checked, and a scratch store beside it, placed or
        // removed by the engine (a file renamed, a schema renamed).
        let scratch = try destinationEngine.driver.copyDestination(for: copier, model: source.model)
        var placed = false
        defer { if !placed { scratch.discard() } }

        let scratchPath = scratch.scratchPath
        var entities: [StoreCopier.Report.EntityCount] = []
        var checksummed: [String] = []
        do {
            let copy = try Store.open(at: scratchPath, model: source.model)
            try source.readDatabase { from in
                try copy.writeDatabase { to in
                    try StoreTableTransfer(model: source.model).copy(
                        from: from, source.layout, to: to, copy.layout, bookkeeping: false)
                }
            }
            // Verified before it is put in place: counts, then every attribute's checksum.
            let sourceCounts = try source.entityCounts()
            let copyCounts = try copy.entityCounts()
            for ((entity, expected), (_, copied)) in zip(sourceCounts, copyCounts) {
                guard expected == copied else {
                    throw FerryError(
                        .verification,
                        "the copy of '\(Self.shown(sourcePath))' has \(copied) \(entity) objects, the source \(expected); '\(Self.shown(destinationPath))' was not changed"
                    )
                }
                entities.append(StoreCopier.Report.EntityCount(entity: entity, source: expected, copied: copied))
            }
            for entity in source.model.entities where !entity.attributes.isEmpty {
                let attributes = entity.attributes.map(\.name)
                let before = try EntityChecksum.compute(store: source, entity: entity.name, attributes: attributes)
                let after = try EntityChecksum.compute(store: copy, entity: entity.name, attributes: attributes)
                guard before.matches(after) else {
                    throw FerryError(
                        .verification,
                        "the copy of \(entity.name) differs from the source (checksum \(after.value), source \(before.value)); '\(Self.shown(destinationPath))' was not changed"
                    )
                }
                checksummed.append(entity.name)
            }
        }
        try scratch.place()
        placed = true
        return StoreCopier.Report(
            source: Self.shown(sourcePath), destination: Self.shown(destinationPath), model: source.model.name,
            modelVersion: source.model.version,
            entities: entities, checksummed: checksummed, seconds: started.duration(to: .now).seconds)
    }

    /// A store for messages: a PostgreSQL URL without its password.
    static func shown(_ text: String) -> String {
        PathOrURL(text).shown
    }
}
