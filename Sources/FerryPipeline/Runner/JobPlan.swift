import FerryCore
import FerryFormats
import Foundation

/// What a run of a job would do, found without touching anything (`ferry plan JOB`): per import
/// step its source files with their sizes and estimated record counts, the entity, the conflict
/// policy and the relationships resolved by key; per migrate step the migration's plan
/// (``MigrationPlanSummary``).
///
/// Nothing is written: source files are read (the first MiB of each), stores are opened
/// read-only through the migration planner, which reads a Core Data store in place only when
/// that touches nothing, else from a private copy.
package struct JobPlan: Encodable, Sendable {
    /// One source file of an import step.
    package struct SourceFile: Encodable, Sendable {
        /// The file, as the job names it (a pattern expanded).
        package var path: String
        /// Its size in bytes.
        package var bytes: Int64
        /// Its records: counted when the whole file was read, else estimated from the first MiB.
        package var records: Int?
        /// Whether `records` is extrapolated from a sample.
        package var estimated: Bool
        /// Why the records could not be counted.
        package var error: String?

        enum CodingKeys: String, CodingKey { case path, bytes, records, estimated, error }
    }

    /// A relationship an import step resolves by key.
    package struct ResolvedRelationship: Encodable, Sendable {
        /// The relationship.
        package var name: String
        /// The source field holding the key.
        package var field: String
        /// `Entity.attribute` the key is matched against.
        package var match: String
        /// What a key without a match does (`reject`, `null`).
        package var missing: String
    }

    /// One step of the job.
    package struct Step: Encodable, Sendable {
        /// 1-based, as in the run report.
        package var index: Int
        /// `import`, `migrate`, `export`, `verify`, `update`, `delete`.
        package var kind: String
        /// What the step does, in words.
        package var title: String
        /// The entity the step works on.
        package var entity: String?
        /// An import's data format.
        package var format: String?
        /// An import's source files.
        package var sources: [SourceFile]?
        /// An import's total bytes.
        package var bytes: Int64?
        /// An import's records, summed over its files (estimated when one file's is).
        package var records: Int?
        /// Whether `records` is an estimate.
        package var recordsEstimated: Bool?
        /// An import's `on_conflict` policy.
        package var onConflict: String?
        /// An import's mode (`append`, `sync`).
        package var mode: String?
        /// The relationships an import resolves by key.
        package var relationships: [ResolvedRelationship]?
        /// Where an import writes its rejects.
        package var rejects: String?
        /// An export's output file.
        package var output: String?
        /// A migrate step's plan.
        package var migration: MigrationPlanSummary?
        /// What else the plan knows about the step (what it cannot see in advance).
        package var notes: [String] = []

        enum CodingKeys: String, CodingKey {
            case index, kind, title, entity, format, sources, bytes, records, mode, relationships, rejects, output
            case migration, notes
            case recordsEstimated = "records_estimated"
            case onConflict = "on_conflict"
        }
    }

    /// The job's name.
    package var job: String
    /// The job file.
    package var jobFile: String
    /// The store (a PostgreSQL URL without its password).
    package var store: String
    /// What the run does to the store before its steps, in words.
    package var storeAction: String
    /// The model and the version the job works with.
    package var model: String
    package var modelVersion: String
    /// The steps in run order.
    package var steps: [Step]

    enum CodingKeys: String, CodingKey {
        case job, store, model, steps
        case jobFile = "job_file"
        case storeAction = "store_action"
        case modelVersion = "model_version"
    }
}

// MARK: - Planning

extension JobRunner {
    /// The plan of this runner's job: what ``run()`` would do, without touching anything.
    package func plan() -> JobPlan {
        var plan = JobPlan(
            job: job.name, jobFile: job.path, store: PathOrURL(job.store.path).shown,
            storeAction: Self.storeAction(job.store), model: model.name, modelVersion: model.version, steps: [])
        for (offset, step) in job.steps.enumerated() {
            plan.steps.append(self.plan(step, index: offset + 1))
        }
        return plan
    }

    private func plan(_ step: Step, index: Int) -> JobPlan.Step {
        var planned = JobPlan.Step(index: index, kind: step.kind, title: step.kind)
        switch step {
        case .import(let step):
            planned.title = step.title
            planned.entity = step.entity
            planned.format = step.database == nil ? step.formatName : "database"
            planned.onConflict = step.onConflict.rawValue
            planned.mode = step.mode.rawValue
            planned.rejects = step.rejectsPath
            planned.relationships = step.relationships.map { relationship in
                let destination =
                    model.entity(named: step.entity).flatMap {
                        model.relationship(named: relationship.relationship, in: $0)
                    }?
                    .destination ?? "?"
                return JobPlan.ResolvedRelationship(
                    name: relationship.relationship, field: relationship.field,
                    match: "\(destination).\(relationship.match)", missing: relationship.missing.rawValue)
            }
            if step.database != nil {
                planned.notes.append("a database source: its rows are counted when the step reads them")
            } else {
                do {
                    let files = try SourceFiles.expand(step.sources).map {
                        SourceEstimate.estimate(step: step, file: $0)
                    }
                    planned.sources = files
                    planned.bytes = files.reduce(0) { $0 + $1.bytes }
                    if files.allSatisfy({ $0.records != nil }) {
                        planned.records = files.reduce(0) { $0 + ($1.records ?? 0) }
                        planned.recordsEstimated = files.contains { $0.estimated }
                    }
                } catch {
                    planned.notes.append("\(error)")
                }
            }
        case .migrate(let step):
            planned.title = "migrate to version \(step.to ?? model.version)"
            do {
                let (path, note) = migrationStore()
                if let note { planned.notes.append(note) }
                if let path {
                    let migrator = try self.migrator(for: step, storePath: path)
                    planned.migration = MigrationPlanSummary(try migrator.plan(), registry: registry)
                }
            } catch {
                planned.notes.append("\(error)")
            }
        case .export(let step):
            planned.title = "export \(step.entity) to \(step.output)"
            planned.entity = step.entity
            planned.format = step.format.rawValue
            planned.output = step.output
        case .verify(let step):
            planned.title = "verify the store"
            let counts = step.expectations.counts.map { entry in
                switch entry.count {
                case .expectation(let expected): "\(entry.entity) \(expected)"
                case .imported: "\(entry.entity) as imported"
                case .synced(let maxKept?): "\(entry.entity) as synced (at most \(maxKept) kept)"
                case .synced(nil): "\(entry.entity) as synced"
                }
            }
            if !counts.isEmpty { planned.notes.append("expected counts: \(counts.joined(separator: ", "))") }
        case .update(let step):
            planned.title = "update \(step.entity) where \(step.predicate)"
            planned.entity = step.entity
        case .delete(let step):
            planned.title = "delete \(step.entity) where \(step.predicate)"
            planned.entity = step.entity
        }
        return planned
    }

    /// The store a migrate step would read, as far as the plan can know it before the run: the
    /// snapshot a `copy_from:` store is copied from, else the store when it exists.
    private func migrationStore() -> (path: String?, note: String?) {
        if let copy = job.store.copyFrom {
            return (copy, "read from \(copy), which the run copies over the store first")
        }
        if job.store.isInMemory || job.store.rebuild {
            return (nil, "the store is built by the run: its rows are not known before it")
        }
        if StoreLocation(job.store.path).mayExist {
            return (job.store.path, nil)
        }
        return (nil, "the store does not exist yet: the earlier steps create it")
    }

    /// What a run does to the store before its steps.
    static func storeAction(_ store: StoreReference) -> String {
        let location = StoreLocation(store.path)
        let shown = location.shown
        if store.isInMemory { return "an in-memory store, dropped when the run ends" }
        if let copy = store.copyFrom { return "\(shown) is replaced by a copy of \(copy) first" }
        let exists = location.existsOnDisk
        if store.rebuild {
            return "a new store is built beside \(shown) and swapped in when every step succeeds"
        }
        switch exists {
        case true?: return "\(shown) exists and is changed in place"
        case false?: return store.create ? "\(shown) is created" : "\(shown) must exist, and does not: the run fails"
        case nil: return "\(shown) (a PostgreSQL store) is changed in place"
        }
    }
}

// MARK: - Estimates

/// A source file's size and record count: the records in the first MiB, extrapolated to the
/// file's size (exact when the file is that small).
///
/// Readers take their file from the disk in chunks; each time a record needs a new chunk, the
/// records before it filled the chunks read so far. The estimate is the rate at the first such
/// point past 1 MiB, so it does not depend on the chunk size.
package enum SourceEstimate {
    /// The bytes read before extrapolating.
    package static let sampleBytes: Int64 = 1 << 20

    /// The estimate of one file of an import step.
    package static func estimate(step: ImportStep, file: String) -> JobPlan.SourceFile {
        let size = ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.int64Value ?? 0
        var estimate = JobPlan.SourceFile(path: file, bytes: size, records: nil, estimated: false, error: nil)
        do {
            let reader = try ReaderFactory.open(step: step, file: file)
            try reader.prepare()
            var consumed = reader.progressFraction ?? 0
            var count = 0
            while try reader.next() != nil {
                count += 1
                let fraction = reader.progressFraction ?? 0
                guard fraction > consumed else { continue }
                // The records before this one came from the first `consumed` of the file.
                if fraction < 1, consumed > 0, Double(size) * consumed >= Double(sampleBytes) {
                    estimate.records = Int((Double(count - 1) / consumed).rounded())
                    estimate.estimated = true
                    return estimate
                }
                consumed = fraction
            }
            estimate.records = count
        } catch {
            estimate.error = "\(error)"
        }
        return estimate
    }
}

// MARK: - Migrations

/// What a migration would do: per version step, inferred or mapped, the policies it runs, and
/// per entity mapping the strategy and an estimate of the rows it moves (from the store's row
/// counts). `ferry plan` and `ferry migrate --plan` show it.
package struct MigrationPlanSummary: Encodable, Sendable {
    /// One entity mapping of a step.
    package struct Entity: Encodable, Sendable {
        /// The mapping's name.
        package var mapping: String
        /// The entity it makes objects of.
        package var destination: String
        /// The entity it reads, or nil for a new, empty entity.
        package var source: String?
        /// `INSERT … SELECT`, `row by row (…)`, `starts empty`; nil when chosen at run time.
        package var strategy: String?
        /// The custom policy it runs.
        package var policy: String?
        /// Rows it reads: the source's row count in the store (for later steps, carried through
        /// the earlier steps' mappings).
        package var rows: Int?
    }

    /// One version step.
    package struct Step: Encodable, Sendable {
        /// The versions.
        package var from: String
        package var to: String
        /// `inferred`, or the mapping file or Xcode mapping model.
        package var mapping: String
        /// The custom policies the step runs, and whether this ferry has each one.
        package var policies: [String]
        /// The entity mappings in run order.
        package var entities: [Entity]
        /// Rows read over the step's mappings.
        package var rows: Int?
        /// Whether `rows` is carried through earlier steps (the first step's are the store's counts).
        package var rowsEstimated: Bool

        enum CodingKeys: String, CodingKey {
            case from, to, mapping, policies, entities, rows
            case rowsEstimated = "rows_estimated"
        }
    }

    /// The store's version and the target.
    package var from: String
    package var to: String
    /// The steps in order (empty when the store is at the target).
    package var steps: [Step]
    /// Objects per entity in the store, by the store's version's entity names.
    package var counts: [String: Int]

    /// The summary of `plan`; `registry` says which policies this ferry has.
    package init(_ plan: Migrator.Plan, registry: PolicyRegistry) {
        from = plan.source.version
        to = plan.target.version
        counts = plan.counts
        steps = []
        var rows = plan.counts
        for (index, mapping) in plan.steps.enumerated() {
            let strategies = index < plan.strategies.count ? plan.strategies[index] : [:]
            var next: [String: Int] = [:]
            var step = Step(
                from: mapping.source.version, to: mapping.destination.version,
                mapping: mapping.location.map { $0.file } ?? "inferred", policies: [], entities: [], rows: nil,
                rowsEstimated: index > 0)
            for entity in mapping.entities {
                let read = entity.source.flatMap { rows[$0] }
                if entity.source == nil {
                    next[entity.destination, default: 0] += 0
                } else if let read, entity.distinct == nil {
                    next[entity.destination, default: 0] += read
                }
                step.entities.append(
                    Entity(
                        mapping: entity.name, destination: entity.destination, source: entity.source,
                        strategy: strategies[entity.name]?.description, policy: entity.policy,
                        rows: entity.source == nil ? 0 : read))
                if let policy = entity.policy {
                    let known = registry.policyNames.contains(policy)
                    step.policies.append(known ? policy : "\(policy) (not registered in this ferry: the step fails)")
                }
            }
            let counted = step.entities.compactMap(\.rows)
            step.rows = counted.count == step.entities.count ? counted.reduce(0, +) : nil
            steps.append(step)
            rows = next
        }
    }
}
