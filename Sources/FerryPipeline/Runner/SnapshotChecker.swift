import FerryCore
import Foundation

/// `ferry check`, the CI mode: takes a copy of a snapshot store of a shipped version, migrates it
/// to the bundle's current version, and verifies it, as one suite of results per snapshot.
///
/// The snapshot itself is never modified. The suite's results, in order: the detected version,
/// the migration, the per-entity checksum proof that copied values are unchanged, then every
/// check of the expectations (by default all built-in checks).
package struct SnapshotChecker {
    package let bundle: ModelBundle
    package var expectations: Expectations?
    /// The version snapshots migrate to (default: the bundle's current version).
    package var targetVersion: String?
    package var registry: PolicyRegistry
    /// Values of `$name` in mapping files' expressions.
    package var parameters: [String: Value] = [:]
    package var mappingProvider: (ObjectModel, ObjectModel) throws -> MappingModel

    package init(bundle: ModelBundle, expectations: Expectations? = nil, registry: PolicyRegistry = .shared) {
        self.bundle = bundle
        self.expectations = expectations
        self.registry = registry
        self.mappingProvider = MigrationMappings.provider(for: bundle)
    }

    /// The snapshot stores a path names: the file itself, or every `.sqlite` file in a folder.
    package static func snapshots(at path: String) throws -> [String] {
        if let scheme = PathOrURL(path).scheme, scheme != "file" {
            // A server's store (postgresql://…) is not a file ferry can copy aside and migrate.
            throw FerryError(
                .usage,
                "snapshot '\(PathOrURL(path).shown)' is a \(scheme): URL; ferry check migrates copies of snapshot files: copy the store into one first (ferry copy URL snapshot.sqlite)"
            )
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw FerryError(.usage, "snapshot '\(path)' does not exist")
        }
        guard isDirectory.boolValue else { return [path] }
        let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".sqlite") }
            .sorted()
        guard !names.isEmpty else { throw FerryError(.usage, "folder '\(path)' holds no .sqlite snapshot") }
        return names.map { (path as NSString).appendingPathComponent($0) }
    }

    /// Checks one snapshot; never throws: every failure is a result of the suite.
    package func check(snapshot: String) -> VerificationReport {
        let started = ContinuousClock.now
        let name = (snapshot as NSString).lastPathComponent
        var report = VerificationReport(name: name, store: snapshot, timestamp: DateCoding.nowText())
        defer {}
        func finish(_ report: inout VerificationReport) {
            report.elapsedSeconds = started.duration(to: .now).seconds
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-check-\(UUID().uuidString)")
        defer { StoreFiles.removeWorkFile(scratch.path) }
        let copy = scratch.appendingPathComponent(name).path

        // The copy (with its -wal), so the snapshot is never touched.
        var clock = ContinuousClock.now
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: snapshot + suffix) {
                try FileManager.default.copyItem(atPath: snapshot + suffix, toPath: copy + suffix)
                // The private copy is ferry's to migrate, whatever the snapshot's mode (a read-only
                // snapshot in CI stays read-only; its copy must not be refused as one).
                try FileIO.makeOwnerWritable(copy + suffix)
            }
        } catch {
            report.results.append(
                CheckResult(
                    check: "copy", name: "copy \(name)", outcome: .error, message: "cannot copy the snapshot: \(error)")
            )
            finish(&report)
            return report
        }

        clock = .now
        // Its version.
        let version: ObjectModel
        let isCoreData = StoreLocation(copy).isCoreData
        do {
            let method: String
            if isCoreData {
                let match = try CoreDataVersionDetector.detect(storeAt: copy, bundle: bundle)
                (version, method) = (match.version, " (by \(match.method))")
            } else {
                guard let metadata = try Store.metadata(at: copy) else {
                    throw FerryError(.store, "'\(snapshot)' is not a ferry store (it has no ferry metadata)")
                }
                (version, method) = (
                    try VersionDetector.detect(metadata: metadata, bundle: bundle, store: snapshot), ""
                )
            }
            report.results.append(
                CheckResult(
                    check: "version", name: "version", outcome: .passed, measured: ["version": .text(version.version)],
                    message: "\(bundle.name) version \(version.version)\(method)",
                    elapsedSeconds: clock.duration(to: .now).seconds))
        } catch {
            report.results.append(
                CheckResult(
                    check: "version", name: "version", outcome: .failed,
                    message: Self.describe(error, copy: copy, snapshot: snapshot),
                    elapsedSeconds: clock.duration(to: .now).seconds))
            finish(&report)
            return report
        }

        clock = .now
        // The migration to the current version, a result per step, with the checksum proof: as
        // `ferry migrate` would do it (a Core Data snapshot into a Core Data store of the version).
        let target = targetVersion ?? bundle.currentVersion
        var options = MigrationOptions(targetVersion: target, backup: false, registry: registry)
        options.parameters = parameters
        options.checksums = true
        let migrator = Migrator(storePath: copy, bundle: bundle, options: options, mappingProvider: mappingProvider)
        let steps = StepClock()
        migrator.observer = steps
        let migration: MigrationReport
        do {
            migration = try migrator.run()
            for step in migration.steps {
                let objects = step.entities.reduce(0) { $0 + $1.written }
                report.results.append(
                    CheckResult(
                        check: "migrate", name: "migrate \(step.from) → \(step.to)", outcome: .passed,
                        measured: ["objects": .integer(objects)],
                        message: step.mappingFile.map { "mapping \($0)" } ?? "inferred (lightweight)",
                        elapsedSeconds: step.seconds))
            }
            if migration.steps.isEmpty {
                report.results.append(
                    CheckResult(
                        check: "migrate", name: "migrate \(version.version) → \(target)", outcome: .passed,
                        measured: ["objects": .integer(0)],
                        message: "already at version \(target)", elapsedSeconds: clock.duration(to: .now).seconds))
            }
        } catch {
            // The steps before the failing one passed; the migration as a whole changed nothing.
            for (from, to, seconds) in steps.finished {
                report.results.append(
                    CheckResult(
                        check: "migrate", name: "migrate \(from) → \(to)", outcome: .passed, message: "migrated",
                        elapsedSeconds: seconds))
            }
            let failing = steps.current.map { "\($0.from) → \($0.to)" } ?? "\(version.version) → \(target)"
            report.results.append(
                CheckResult(
                    check: "migrate", name: "migrate \(failing)", outcome: .failed,
                    message: Self.describe(error, copy: copy, snapshot: snapshot),
                    elapsedSeconds: steps.current.map { $0.started.duration(to: .now).seconds }
                        ?? clock.duration(to: .now).seconds))
            finish(&report)
            return report
        }
        for step in migration.steps {
            for entity in step.entities where entity.source != nil {
                let unchanged = entity.unchanged ?? []
                let transformed = entity.notComparable ?? []
                var message =
                    unchanged.isEmpty
                    ? "no attribute is copied unchanged" : "unchanged: \(unchanged.joined(separator: ", "))"
                if !transformed.isEmpty {
                    message += "; not comparable (transformed): \(transformed.joined(separator: ", "))"
                }
                report.results.append(
                    CheckResult(
                        check: "checksum", name: "checksum \(step.from) → \(step.to) \(entity.mapping)",
                        entity: entity.destination, outcome: .passed,
                        measured: ["objects": .integer(entity.written)], message: message))
            }
        }

        // Every check on the migrated copy.
        do {
            guard let current = bundle.version(target) else {
                throw FerryError(.usage, "model \(bundle.name) has no version '\(target)'")
            }
            let store: Store
            if !isCoreData {
                store = try Store.open(at: copy, model: current, options: Store.Options(createIfMissing: false))
            } else if migration.steps.isEmpty {
                // Nothing migrated: the copy is the snapshot as it was, its version detected again.
                store = try Store.openCoreData(at: copy, bundle: bundle)
            } else {
                store = try CoreDataMigrationDestination.open(at: copy, model: current)
            }
            let resolved = (expectations ?? Expectations()).checks(model: store.model)
            if !resolved.problems.isEmpty { throw FerryErrors(resolved.problems) }
            let verification = Verifier(model: store.model).run(resolved.checks, on: store, name: name)
            report.results += verification.results
        } catch {
            report.results.append(
                CheckResult(
                    check: "verify", name: "verify", outcome: .error,
                    message: Self.describe(error, copy: copy, snapshot: snapshot)))
        }
        finish(&report)
        return report
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? FerryError { return error.description }
        return "\(error)"
    }

    /// Messages about the scratch copy name the snapshot instead.
    static func describe(_ error: any Error, copy: String, snapshot: String) -> String {
        // The migration already names its scratch files as copies of the store (the copy here).
        describe(error).replacingOccurrences(of: copy, with: snapshot)
    }
}

/// Which version step of a migration is running, and how long the finished ones took: names
/// the step that failed.
private final class StepClock: MigrationObserver {
    private(set) var finished: [(from: String, to: String, seconds: Double)] = []
    private(set) var current: (from: String, to: String, started: ContinuousClock.Instant)?

    func migrationStepStarted(_ index: Int, of total: Int, from: String, to: String) {
        if let current { finished.append((current.from, current.to, current.started.duration(to: .now).seconds)) }
        current = (from, to, .now)
    }

    func migrationEntityStarted(_ mapping: String) {}
    func migrationProgress(mapping: String, processed: Int) {}
}
