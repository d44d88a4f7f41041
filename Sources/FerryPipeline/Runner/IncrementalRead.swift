import FerryCore
import FerryFormats
import Foundation

/// The incremental side of an import step: the mark an incremental database source reads past
/// (`incremental: {column: …}`), or the files a `files: new` import has not imported yet, both
/// kept in the store's run log (`RunLog`) and advanced in the transaction that commits the
/// rows they account for.
final class IncrementalRead {
    private let step: ImportStep
    private let job: String
    /// The database source's incremental column, when the step reads one.
    private let incremental: DatabaseSource.Incremental?
    /// The mark the run reads from: the one the last committed run left, else `initial:`.
    let startMark: IncrementalMark?
    /// The mark committed last (by an earlier run, or a batch of this one).
    private var committed: IncrementalMark?
    /// The reader of the database source (set once opened), whose last row gives the mark.
    var reader: DatabaseRecordReader?
    /// `files: new`: the files to read, in order.
    let files: [String]
    /// The identity of each file to read, recorded once the file is read and committed.
    private var identities: [String: ImportedFile] = [:]
    private var recorded: Set<String> = []
    /// What the report says.
    private(set) var incrementalReport: IncrementalReport?
    private(set) var selection: FileSelectionReport?

    /// The incremental state of `step` in `store` (nil when the step is not incremental).
    /// `selectedFiles` are the files an interrupted `files: new` run chose, which its `--resume`
    /// reads again as they were chosen.
    init?(step: ImportStep, job: String, store: Store, selectedFiles: [String]?) throws {
        let incremental = step.database?.incremental
        guard incremental != nil || step.newFilesOnly else { return nil }
        self.step = step
        self.job = job
        self.incremental = incremental
        let what = incremental != nil ? "an incremental read" : "'files: new'"
        let log: (mark: IncrementalMark?, files: Set<ImportedFile>) = try store.withDatabase { connection in
            guard let runLog = RunLog(on: connection, layout: store.layout) else {
                throw FerryError(
                    .usage,
                    "\(what) keeps its state in the store's run log, and this store's layout has none: use a store in ferry's layout",
                    at: incremental?.location ?? step.location)
            }
            if let incremental, let database = step.database {
                return (
                    try runLog.mark(
                        job: job, entity: step.entity, source: database.label, column: incremental.column), []
                )
            }
            return (nil, try runLog.importedFiles(job: job, entity: step.entity))
        }
        if let incremental {
            committed = log.mark
            startMark = log.mark ?? incremental.initial.map(Self.initialMark)
            incrementalReport = IncrementalReport(column: incremental.column, from: startMark?.value)
            files = []
            return
        }
        startMark = nil
        let all = try SourceFiles.expand(step.sources)
        var chosen: [String] = []
        var chosenIdentities: [String: ImportedFile] = [:]
        var report = FileSelectionReport()
        let importedPaths = Set(log.files.map(\.path))
        for path in all {
            let fingerprint = try SourceFingerprint(path: path)
            try fingerprint.hashToEnd()
            let identity = fingerprint.identity
            let file = ImportedFile(path: path, size: identity.size, sha256: identity.sha256)
            let isNew = selectedFiles.map { $0.contains(path) } ?? !log.files.contains(file)
            if isNew {
                chosen.append(path)
                chosenIdentities[path] = file
                report.new += 1
                if importedPaths.contains(path) { report.changed += 1 }
            } else {
                report.alreadyImported += 1
            }
        }
        files = chosen
        identities = chosenIdentities
        selection = report
    }

    /// `initial:` as a mark: a whole number binds as an integer, a number as a real, else text
    /// (a timestamp), so that SQLite compares it with the column's values as their type.
    static func initialMark(_ text: String) -> IncrementalMark {
        if Int64(text) != nil { return IncrementalMark(kind: "integer", value: text) }
        if Double(text) != nil { return IncrementalMark(kind: "real", value: text) }
        return IncrementalMark(kind: "text", value: text)
    }

    /// Whether a database source is read past a mark (its resume starts from the mark, not by
    /// skipping the records committed).
    var readsDatabase: Bool { incremental != nil }

    /// The step's reader: the database source from the start mark, or the new files.
    func openReader() throws -> any RecordReader {
        if let database = step.database {
            let opened = try DatabaseRecordReader.open(database, from: startMark)
            reader = opened
            return opened
        }
        return MultiFileReader(files: files) { [step] in try ReaderFactory.open(step: step, file: $0) }
    }

    /// Advances the state to what the transaction on `connection` commits: the mark of the last
    /// row read, or the files read to their end (`openedFiles` in order, the last one still being
    /// read unless `finished`).
    func commit(
        _ connection: any DatabaseConnection, layout: any StoreLayout, openedFiles: [String], finished: Bool
    )
        throws
    {
        guard let runLog = RunLog(on: connection, layout: layout) else { return }
        if let incremental, let database = step.database {
            guard let mark = reader?.lastMark, mark != committed else { return }
            try runLog.saveMark(
                mark, job: job, entity: step.entity, source: database.label, column: incremental.column)
            committed = mark
            incrementalReport?.to = mark.value
            return
        }
        let done = (finished ? openedFiles : Array(openedFiles.dropLast())).filter {
            !recorded.contains($0) && identities[$0] != nil
        }
        try runLog.recordImportedFiles(done.compactMap { identities[$0] }, job: job, entity: step.entity)
        recorded.formUnion(done)
    }

    /// Fills the step's report: the marks and `rows` read this run, or the files chosen.
    func fill(_ report: inout StepReport, rowsRead: Int) {
        if var incrementalReport {
            incrementalReport.rows = rowsRead
            report.incremental = incrementalReport
        }
        report.fileSelection = selection
    }
}
