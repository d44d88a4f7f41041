import FerryFormats

extension ImportStep {
    /// What the step does, for progress lines: `import Order from orders.csv`, or for a pattern or
    /// list matching several files `import Order from 3 files (nightly/*.csv)`.
    package var title: String {
        // A pattern that matches nothing is reported when the step opens its source.
        let fileCount = database == nil ? (try? SourceFiles.expand(sources).count) ?? 1 : 1
        return "import \(entity) from \(fileCount == 1 ? source : "\(fileCount) files (\(source))")"
    }

    /// The step's format as a job file names it: `pgcopy` for PostgreSQL COPY text (read by the
    /// CSV reader), else the format's name (`csv`, `json`, `ndjson`, `fixed`).
    package var formatName: String {
        format == .csv && csv.copyText ? "pgcopy" : format.rawValue
    }
}
