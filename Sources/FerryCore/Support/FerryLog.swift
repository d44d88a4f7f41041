import Logging

/// ferry's diagnostics: one swift-log `Logger` per subsystem, made here and nowhere else.
///
/// Library code logs through these and never prints. The `ferry` command line bootstraps a
/// standard-error handler once (level from `--verbose` and `FERRY_LOG_LEVEL`, default `warning`);
/// a program that uses the libraries without bootstrapping gets swift-log's default handler. Each
/// logger is made on first use, so bootstrap before the first ferry call.
///
/// Levels: `debug` for a fast path that falls back to a slower one (with the reason), `notice`
/// for something a user may want to act on that did not fail the run (a temporary file left
/// behind), `warning` and above for what is wrong but not fatal.
package enum FerryLog {
    /// Import steps: readers, the import plan and its fast paths, inference.
    package static let importing = Logger(label: "ferry.import")
    /// Export steps and their output files.
    package static let export = Logger(label: "ferry.export")
    /// Migrations: Core Data and ferry stores, copies between stores.
    package static let migrate = Logger(label: "ferry.migrate")
    /// Stores: opening, locks, temporary and scratch files.
    package static let store = Logger(label: "ferry.store")
    /// PostgreSQL sessions, `COPY` and staging.
    package static let postgres = Logger(label: "ferry.postgres")
    /// Jobs: running steps, checkpoints, cleanup after a step.
    package static let job = Logger(label: "ferry.job")
}
