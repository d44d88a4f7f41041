import ArgumentParser
import FerryCore
import FerryPipeline
import Foundation

/// `ferry init FILE... [--store S] [--output DIR]`: a model and a job for data files, inferred
/// from them, that `ferry run` runs as they are.
struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Write a model and a job that import data files: ferry run runs the job as it is.",
        discussion: """
            Looks at each FILE (CSV, TSV, JSON, NDJSON): its dialect, encoding and header, the types \
            of its columns, its key (a column named like one, e.g. id or author_id in authors.csv, \
            whose values are distinct and never empty), and columns whose values are all keys of \
            another file (author_id in books.csv), which become relationships. Writes DIR/model.yml \
            and DIR/job.yml with a comment on each choice and the schema line editors read. Without \
            FILE, writes an example job over generated sample data (DIR/authors.csv and \
            DIR/books.csv). Never overwrites a file: if one it would write exists, nothing is written \
            (exit 64).
            """)

    @Argument(help: ArgumentHelp("The data files to import (CSV, TSV, JSON, NDJSON).", valueName: "file"))
    var files: [String] = []

    @Option(help: ArgumentHelp("The store the job writes (default: NAME.sqlite beside the job).", valueName: "store"))
    var store: String?

    @Option(help: ArgumentHelp("The folder to write model.yml and job.yml to.", valueName: "dir"))
    var output: String = "."

    func run() throws {
        try runReportingErrors {
            let folder = URL(fileURLWithPath: output).standardizedFileURL
            let name = AttributeNaming.identifier(folder.lastPathComponent, fallback: "data")
            let modelPath = folder.appendingPathComponent("model.yml").path
            let jobPath = folder.appendingPathComponent("job.yml").path
            let sampleFiles = files.isEmpty ? Self.sampleData.map { folder.appendingPathComponent($0.name).path } : []
            for path in [modelPath, jobPath] + sampleFiles where FileManager.default.fileExists(atPath: path) {
                throw FerryError(
                    .usage,
                    "'\(path)' exists: ferry init never overwrites a file, and wrote nothing; remove it or give another --output folder"
                )
            }
            for file in files where !FileManager.default.fileExists(atPath: file) {
                throw FerryError(.noInput, "'\(file)' does not exist; nothing was written")
            }
            var inputs = files
            if files.isEmpty {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for (sample, path) in zip(Self.sampleData, sampleFiles) {
                    try Data(sample.text.utf8).write(to: URL(fileURLWithPath: path), options: .withoutOverwriting)
                }
                inputs = sampleFiles
            }
            let result = try FileSetInference.infer(paths: inputs, modelName: name)
            var writer = InitYAMLWriter(
                result: result, name: name,
                store: store.map { Self.relativePath($0, from: folder) } ?? "\(name).sqlite",
                relativePath: { Self.relativePath($0, from: folder) })
            writer.isExample = files.isEmpty
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(writer.modelText().utf8).write(to: URL(fileURLWithPath: modelPath), options: .withoutOverwriting)
            try Data(writer.jobText().utf8).write(to: URL(fileURLWithPath: jobPath), options: .withoutOverwriting)
            let model = result.plan.model
            let relationships = model.entities.flatMap(\.relationships).filter { !$0.isToMany }.count
            if files.isEmpty { print("wrote sample data: \(sampleFiles.joined(separator: ", "))") }
            print(
                "wrote \(modelPath) (\(model.entities.count) entit\(model.entities.count == 1 ? "y" : "ies"), \(relationships) relationship\(relationships == 1 ? "" : "s")) and \(jobPath)"
            )
            for note in result.plan.notes { print("note: \(note)") }
            print("run it with: ferry run \(jobPath)")
            return 0
        }
    }

    /// `path` (relative to the current directory) as the job in `folder` names it: relative to
    /// the folder (`../data/authors.csv`), or absolute when they share only the root; a URL as it is.
    static func relativePath(_ path: String, from folder: URL) -> String {
        guard !PathOrURL(path).isURL else { return path }
        let target = URL(fileURLWithPath: path).standardizedFileURL
        let parts = target.pathComponents
        let base = folder.standardizedFileURL.pathComponents
        var common = 0
        while common < parts.count, common < base.count, parts[common] == base[common] { common += 1 }
        guard common > 1 else { return target.path }
        return (Array(repeating: "..", count: base.count - common) + parts[common...]).joined(separator: "/")
    }

    /// The example's data: authors and the books they wrote (books.csv's author_id refers to
    /// authors.csv's key).
    static let sampleData: [(name: String, text: String)] = [
        (
            "authors.csv",
            """
            author_id,name,born,country
            1,Ursula K. Le Guin,1929-10-21,US
            2,Stanisław Lem,1921-09-12,PL
            3,Octavia E. Butler,1947-06-22,US
            4,Italo Calvino,1923-10-15,IT

            """
        ),
        (
            "books.csv",
            """
            book_id,title,author_id,published,pages,in_print
            1,The Left Hand of Darkness,1,1969,304,true
            2,Solaris,2,1961,204,true
            3,Kindred,3,1979,264,true
            4,Invisible Cities,4,1972,165,true
            5,The Dispossessed,1,1974,387,true
            6,The Cyberiad,2,1965,295,false

            """
        ),
    ]
}
