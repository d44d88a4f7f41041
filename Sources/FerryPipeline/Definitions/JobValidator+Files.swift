import FerryCore
import FerryFormats
import Foundation

extension JobValidator {
    /// The files a job reads and writes, for ``OutputConflicts``: the store, the job file, its
    /// model, every import source and `copy_from` are inputs; every rejects file and export
    /// output is an output. A command adds its own outputs (`--report`, `--junit`) before
    /// checking.
    ///
    /// A source that an earlier export step of the job writes is the job's own intermediate
    /// file (export, then import elsewhere), not an input to protect.
    package func files(of job: Job) -> OutputConflicts {
        var files = OutputConflicts(store: job.store.path, location: job.store.location)
        files.input(job.path, role: "the job file")
        files.input(job.modelPath, role: "the model", location: job.modelLocation)
        files.input(job.store.copyFrom, role: "the store's copy_from", location: job.store.location)
        var exported: Set<String> = []
        for step in job.steps {
            switch step {
            case .export(let step): exported.insert(step.output)
            case .import(let step):
                // A pattern's files are those it matches now.
                let paths = step.inputFiles.flatMap {
                    SourceFiles.isPattern($0) ? (try? SourceFiles.matching($0)) ?? [] : [$0]
                }
                for path in paths where !exported.contains(path) {
                    files.input(path, role: "the source", location: step.location)
                }
            default: break
            }
        }
        for step in job.steps {
            switch step {
            case .import(let step): files.output(step.rejectsPath, role: "the rejects file", location: step.location)
            case .export(let step): files.output(step.output, role: "the export output", location: step.location)
            default: break
            }
        }
        return files
    }

    /// Problems with the files a job names: a URL where a file path is needed (a PostgreSQL
    /// store is refused until this build supports one), and any rejects file or export output
    /// that is the store, one of its companion files, a source or the job's own files.
    package func validateFiles(_ job: Job) -> [FerryError] {
        var errors: [FerryError] = []
        if job.steps.isEmpty {
            // Loading such a job is fine (a library may add steps); running or validating it is not.
            errors.append(
                FerryError(
                    .invalidDefinition, "the job's 'steps' list is empty: a job needs at least one step",
                    at: job.stepsLocation ?? InputLocation(file: job.path, line: 1, column: 1)))
        }
        do {
            try PathOrURL.requireStore(job.store.path, location: job.store.location)
        } catch {
            errors.append(error)
        }
        for step in job.steps {
            var named: [(String?, String)] = []
            switch step {
            case .import(let step): named = step.inputFiles.map { ($0, "source") } + [(step.rejectsPath, "rejects")]
            case .export(let step): named = [(step.output, "output")]
            default: break
            }
            for case (let path?, let role) in named {
                do {
                    try PathOrURL.requireFile(path, role: role, location: step.location)
                } catch {
                    errors.append(error)
                }
            }
        }
        return errors + files(of: job).problems()
    }

    /// Import sources that do not exist and that no earlier export step of the job writes
    /// (`ferry validate` reports them with code `.noInput`, exit 66; a run would fail at that step).
    package func missingSources(_ job: Job) -> [FerryError] {
        var errors: [FerryError] = []
        var written: Set<String> = []
        for step in job.steps {
            switch step {
            case .export(let step): written.insert(step.output)
            case .import(let step):
                for source in step.inputFiles
                where source != "-" && !written.contains(source) && !PathOrURL(source).isURL {
                    if SourceFiles.isPattern(source) {
                        if (try? SourceFiles.matching(source)) == nil {
                            errors.append(FerryError(.noInput, "source '\(source)' matches no file", at: step.location))
                        }
                    } else if !FileManager.default.fileExists(atPath: source) {
                        errors.append(FerryError(.noInput, "source '\(source)' does not exist", at: step.location))
                    }
                }
            default: break
            }
        }
        return errors
    }
}
