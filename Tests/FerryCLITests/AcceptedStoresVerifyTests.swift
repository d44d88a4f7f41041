import FerryCore
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// Whatever ferry accepts, its own `ferry verify --checks all` accepts (issue 12): every data
/// file of the test suite's fixtures, the samples and the shared conformance data is imported,
/// into every fixture model whose attributes it names and into a model inferred from it, and
/// every sample job is run; each store that an import or a job leaves with rows in it must
/// pass every check (exit 0).
///
/// Nothing is listed by hand: models are the YAML files `ferry model show` loads, data files
/// are found by extension, and a model's entity is tried with a data file when the file's
/// fields name one of its attributes (else every record would be rejected).
@Suite(
    "whatever ferry imports, its own verify accepts: every fixture, through the real binary", .timeLimit(.minutes(10)))
struct AcceptedStoresVerifyTests {
    static let dataExtensions: Set<String> = ["csv", "tsv", "json", "ndjson", "jsonl"]

    /// `Tests/*/Fixtures` and `samples`.
    static var fixtureRoots: [URL] {
        let tests = TestPaths.packageRoot.appendingPathComponent("Tests")
        let suites = (try? FileManager.default.contentsOfDirectory(atPath: tests.path)) ?? []
        return suites.sorted().map { tests.appendingPathComponent($0).appendingPathComponent("Fixtures") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
            + [TestPaths.packageRoot.appendingPathComponent("samples")]
    }

    /// Every file under `roots` whose extension is one of `extensions`, sorted (build folders skipped).
    static func files(under roots: [URL], extensions: Set<String>) -> [String] {
        var found: [String] = []
        for root in roots {
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey])
            else { continue }
            for case let url as URL in walker {
                if url.lastPathComponent == ".build" {
                    walker.skipDescendants()
                    continue
                }
                if extensions.contains(url.pathExtension.lowercased()),
                    (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
                {
                    found.append(url.path)
                }
            }
        }
        return found.sorted()
    }

    // MARK: - Models and data

    struct Entity: Sendable {
        var name: String
        var attributes: Set<String>
    }

    struct Model: Sendable {
        var path: String
        var entities: [Entity]
    }

    /// Every YAML file `ferry model show` loads as a model (its current version), once per
    /// distinct set of entity hashes (a bundle's `model.yml` and its current version file are one).
    static func models() throws -> [Model] {
        var models: [Model] = []
        var seen: Set<[String]> = []
        for path in files(under: fixtureRoots, extensions: ["yml", "yaml"]) {
            let shown = try runFerry(["model", "show", path, "--json"])
            guard shown.exitCode == 0 else { continue }
            let bundle = try jsonObject(text: shown.stdout)
            let versions = try #require(bundle["versions"] as? [[String: Any]], "\(path)")
            guard let current = versions.first(where: { $0["current"] as? Bool == true }) ?? versions.last,
                let entities = current["entities"] as? [[String: Any]]
            else { continue }
            let hashes = entities.compactMap { $0["hash"] as? String }.sorted()
            guard seen.insert(hashes).inserted else { continue }
            models.append(
                Model(
                    path: path,
                    entities: entities.compactMap { entity in
                        guard let name = entity["name"] as? String, let attributes = entity["attributes"] as? [String]
                        else { return nil }
                        // "email: string?" → "email"
                        return Entity(name: name, attributes: Set(attributes.map { String($0.prefix { $0 != ":" }) }))
                    }))
        }
        return models
    }

    /// The field names of a data file's first record (CSV header, keys of the first JSON object),
    /// or nil when the file has none that ferry could read without more options.
    static func fieldNames(of path: String) -> Set<String>? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "csv", "tsv":
            let separator: Character = path.lowercased().hasSuffix(".tsv") ? "\t" : ","
            let text = String(decoding: data.prefix(64 * 1024), as: UTF8.self)
            guard let header = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).first else {
                return nil
            }
            return Set(
                header.split(separator: separator).map {
                    $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" \u{FEFF}"))
                })
        case "ndjson", "jsonl":
            guard let line = data.split(separator: UInt8(ascii: "\n")).first,
                let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            else { return nil }
            return Set(object.keys)
        default:
            guard let records = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]],
                let first = records.first
            else { return nil }
            return Set(first.keys)
        }
    }

    // MARK: - Import, then verify

    enum Outcome: Sendable {
        /// The import refused the file or the model (exit ≠ 0): nothing was accepted.
        case notImported
        /// Imported, with no record inserted.
        case empty
        /// Imported and verified.
        case verified
        /// Imported, and verify did not pass: the failure this suite exists to catch.
        case verifyFailed(String)
    }

    /// Runs `ferry import` with `arguments` into a new store in `dir`, then `ferry verify
    /// --checks all` on the store when something got in.
    static func importThenVerify(_ arguments: [String], label: String, in dir: TemporaryDirectory) throws -> Outcome {
        let store = dir.file("\(UUID().uuidString).sqlite")
        let imported = try runFerry(
            ["import"] + arguments + [
                "--store", store, "--rejects", store + ".rejects.ndjson", "--max-rejects", "100%",
            ])
        guard imported.exitCode == 0 else { return .notImported }
        if imported.stdout.contains(" inserted 0, updated 0,") { return .empty }
        let verified = try runFerry(["verify", store, "--checks", "all"])
        return verified.exitCode == 0 ? .verified : .verifyFailed("\(label)\n\(imported)\n\(verified)")
    }

    /// Runs every case, two at a time, and checks that no accepted store failed verification;
    /// returns how many stores were verified.
    static func check(
        _ cases: [(arguments: [String], label: String)], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Int {
        let dir = TemporaryDirectory("ferry-accepted")
        let outcomes = Mutex<[Outcome]>([])
        let errors = Mutex<[String]>([])
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < cases.count else { return }
                do {
                    let outcome = try importThenVerify(cases[index].arguments, label: cases[index].label, in: dir)
                    outcomes.withLock { $0.append(outcome) }
                } catch {
                    errors.withLock { $0.append("\(cases[index].label): \(error)") }
                }
            }
        }
        #expect(errors.withLock { $0 } == [], sourceLocation: sourceLocation)
        var verified = 0
        for outcome in outcomes.withLock({ $0 }) {
            switch outcome {
            case .verified: verified += 1
            case .verifyFailed(let report):
                Issue.record("ferry accepted what its verify rejects: \(report)", sourceLocation: sourceLocation)
            case .notImported, .empty: break
            }
        }
        return verified
    }

    // MARK: - Tests

    @Test("every fixture model × every data file naming its attributes: what imports verifies")
    func fixtureModels() throws {
        let models = try Self.models()
        #expect(models.count >= 5, "\(models.map(\.path))")
        var cases: [(arguments: [String], label: String)] = []
        for data in Self.files(under: Self.fixtureRoots, extensions: Self.dataExtensions) {
            guard let fields = Self.fieldNames(of: data) else { continue }
            for model in models {
                for entity in model.entities where !entity.attributes.isDisjoint(with: fields) {
                    cases.append(
                        (
                            ["--model", model.path, "--entity", entity.name, data],
                            "\(data) into \(entity.name) of \(model.path)"
                        ))
                }
            }
        }
        let verified = try Self.check(cases)
        // The rules fixture, the people, types and shop samples at least.
        #expect(verified >= 5, "only \(verified) of \(cases.count) imports left rows to verify")
    }

    @Test(
        "every data file of the fixtures, samples and shared conformance data, with an inferred model: what imports verifies"
    )
    func inferredModels() throws {
        var roots = Self.fixtureRoots
        if let shared = TestPaths.sharedData { roots.append(shared) }
        let cases = Self.files(under: roots, extensions: Self.dataExtensions).map { data in
            (arguments: ["--entity", "Record", data], label: "\(data) with an inferred model")
        }
        let verified = try Self.check(cases)
        #expect(verified >= 10, "only \(verified) of \(cases.count) imports left rows to verify")
    }

    /// A job's `model:` when it is a plain path, resolved against the job's folder.
    static func modelPath(ofJob job: String) -> String? {
        guard let text = try? String(contentsOfFile: job, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("model: ") && !$0.contains("{") })
        else { return nil }
        return URL(fileURLWithPath: job).deletingLastPathComponent().appendingPathComponent(
            String(line.dropFirst("model: ".count))
        ).standardizedFileURL.path
    }

    @Test("every sample job that succeeds leaves stores that verify")
    func sampleJobs() throws {
        // The jobs write beside themselves (../out): run copies of pipelines/ and samples/.
        let dir = TemporaryDirectory("ferry-sample-jobs")
        for folder in ["pipelines", "samples"] {
            try FileManager.default.copyItem(
                at: TestPaths.packageRoot.appendingPathComponent(folder), to: dir.url.appendingPathComponent(folder))
        }
        var verified = 0
        for job in Self.files(under: [dir.url.appendingPathComponent("pipelines")], extensions: ["yml"]) {
            let out = dir.file("out-\(URL(fileURLWithPath: job).deletingPathExtension().lastPathComponent)")
            let run = try runFerry(["run", job, "--param", "out=\(out)"])
            guard run.exitCode == 0 else { continue }
            let stores = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
            for store in stores.sorted() where store.hasSuffix(".sqlite") {
                // A Core Data store ferry created caches no model: it is verified with the job's.
                let model =
                    CoreDataStoreFile.isCoreDataStore(out + "/" + store)
                    ? Self.modelPath(ofJob: job).map { ["--model", $0] } ?? [] : []
                let verify = try runFerry(["verify", out + "/" + store, "--checks", "all"] + model)
                #expect(verify.exitCode == 0, "\(job) → \(store)\n\(verify)")
                verified += 1
            }
        }
        #expect(verified >= 1, "no sample job left a store to verify")
    }
}
