import FerryCore
import FerryPostgresStore
import Foundation

extension JobRunner {
    /// Runs the job on a PostgreSQL store.
    ///
    /// - In place, by default: each step in its own transactions, as on a store file.
    /// - `rebuild: true`: the steps build a new store in a work schema beside the store's
    ///   (`SCHEMA_ferry_rebuild_…`); when every step succeeded, one transaction renames the old
    ///   schema aside, gives the new one its name and drops the old one. A failure, or a killed
    ///   process, leaves the store as it was (the work schema of a failed run is dropped).
    /// - The run holds the store's writer lock (`PostgreSQLWriterLock`) from before its first
    ///   step to after its last, a rebuild's until the swap: another import, update or job on
    ///   the store waits for it (up to its busy timeout), then writes into the store it left.
    /// - A dry run of a store that exists runs every step in one transaction, rolled back at the
    ///   end; of a store that does not exist yet, or with `rebuild: true`, in a scratch schema
    ///   (`SCHEMA_ferry_dry_run_…`) dropped afterwards. Nothing of the store changes.
    /// - `copy_from:` (a store file or URL) replaces the store with a verified copy of that
    ///   store before the steps run (`ferry copy --replace`); a dry run leaves it out, as on a file.
    func runOnPostgreSQL(_ initial: RunReport) -> RunReport {
        var report = initial
        let target = job.store.path
        let suffix = "\(ProcessInfo.processInfo.processIdentifier)_\(UUID().uuidString.prefix(8).lowercased())"
        var workPath = target
        // Held until the run ends: while it lives no other run drops the work schema.
        var workClaim: PostgresDatabase?
        defer { withExtendedLifetime(workClaim) {} }
        // The store's writer lock, from the first step to the last (a rebuild's until its new
        // schema is swapped in): another writer waits for the whole run, then sees what it did.
        var writerLock: PostgreSQLWriterLock?
        defer { withExtendedLifetime(writerLock) {} }
        do {
            let exists = dryRun && !job.store.rebuild ? try Store.postgreSQLStoreExists(target) : true
            if dryRun && (job.store.rebuild || !exists) {
                workPath = try Store.postgreSQLWorkURL(target, mark: "ferry_dry_run", suffix: suffix)
            } else if job.store.rebuild {
                workPath = try Store.postgreSQLWorkURL(target, mark: "ferry_rebuild", suffix: suffix)
            }
            // A dry run in a scratch schema changes nothing of the store: it needs no lock.
            if !dryRun || workPath == target {
                writerLock = try PostgreSQLWriterLock.acquire(for: target, timeout: .seconds(30))
            }
            if workPath != target { workClaim = try Store.claimPostgreSQLWorkSchema(workPath, beside: target) }
        } catch {
            report.fail(step: 0, kind: "open", error: error)
            report.endedAt = RunReport.timestamp()
            return report
        }
        if let copyFrom = job.store.copyFrom, !dryRun {
            do {
                try Self.copyStore(from: copyFrom, to: target)
            } catch {
                report.fail(step: 0, kind: "copy", error: error)
                report.endedAt = RunReport.timestamp()
                return report
            }
        }
        runSteps(storePath: workPath, create: workPath != target || job.store.create, into: &report)
        if workPath != target {
            // Messages name the user's store, never ferry's work schema.
            let shown = Self.shown(workPath)
            let name =
                job.store.rebuild && !dryRun
                ? "the new store being built for '\(Self.shown(target))'"
                : "the dry run's scratch store for '\(Self.shown(target))'"
            for index in report.steps.indices {
                report.steps[index].error = report.steps[index].error?.replacingOccurrences(
                    of: "'\(shown)'", with: name
                ).replacingOccurrences(of: shown, with: name)
            }
            if report.outcome == "succeeded" && !dryRun {
                do {
                    try Store.replacePostgreSQLSchema(target, with: workPath)
                } catch {
                    try? Store.dropPostgreSQLSchema(workPath)
                    report.fail(step: job.steps.count + 1, kind: "swap", error: error)
                }
            } else {
                try? Store.dropPostgreSQLSchema(workPath)
            }
        }
        report.endedAt = RunReport.timestamp()
        return report
    }
}
