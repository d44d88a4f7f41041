import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

/// schemas/*.schema.json (what editors complete and check) and the loaders agree: every key a
/// loader accepts is a property of the schema at the matching place, with a description, and
/// every job, model, mapping and expectations file in the repository that is meant to be valid
/// validates against its schema.
@Suite("JSON Schemas of definition files agree with the loaders")
struct DefinitionSchemaTests {
    enum Kind: String, CaseIterable, Sendable {
        case job, model, mapping, expectations
    }

    static func schema(_ kind: Kind) throws -> JSONSchema {
        try JSONSchema(path: TestPaths.packageRoot.appendingPathComponent("schemas/\(kind.rawValue).schema.json").path)
    }

    /// One place a loader checks keys (`DefinitionReader.checkKeys`) and the schema's definition
    /// for it (nil: the schema's root).
    struct Context: Sendable, CustomStringConvertible {
        var kind: Kind
        var definition: String?
        var keys: [String]
        var description: String { "\(kind.rawValue) schema, \(definition ?? "root")" }
    }

    static let contexts: [Context] = [
        Context(kind: .job, definition: nil, keys: JobLoader.jobKeys),
        Context(kind: .job, definition: "store", keys: JobLoader.storeKeys),
        Context(kind: .job, definition: "modelReference", keys: JobLoader.modelKeys),
        Context(kind: .job, definition: "step", keys: JobLoader.stepKinds),
        Context(kind: .job, definition: "migrate", keys: JobLoader.migrateKeys),
        Context(kind: .job, definition: "import", keys: JobLoader.importKeys),
        Context(kind: .job, definition: "field", keys: JobLoader.fieldKeys),
        Context(kind: .job, definition: "relationship", keys: JobLoader.relationshipKeys),
        Context(kind: .job, definition: "csv", keys: JobLoader.csvKeys),
        Context(kind: .job, definition: "json", keys: JobLoader.jsonKeys),
        Context(kind: .job, definition: "fixed", keys: JobLoader.fixedKeys),
        Context(kind: .job, definition: "fixedColumn", keys: JobLoader.fixedColumnKeys),
        Context(kind: .job, definition: "nested", keys: JobLoader.nestedKeys),
        Context(kind: .job, definition: "databaseSource", keys: JobLoader.databaseSourceKeys),
        Context(kind: .job, definition: "incremental", keys: JobLoader.incrementalKeys),
        Context(kind: .job, definition: "export", keys: JobLoader.exportKeys),
        Context(kind: .job, definition: "update", keys: JobLoader.updateKeys),
        Context(kind: .job, definition: "setValue", keys: JobLoader.setValueKeys),
        Context(kind: .job, definition: "delete", keys: JobLoader.deleteKeys),
        Context(kind: .job, definition: "verify", keys: ExpectationsLoader.keys + JobLoader.verifyExtraKeys),
        Context(kind: .job, definition: "count", keys: ExpectationsLoader.countKeys),
        Context(kind: .job, definition: "assertion", keys: ExpectationsLoader.assertionKeys),
        Context(kind: .job, definition: "record", keys: ExpectationsLoader.recordKeys),
        Context(kind: .expectations, definition: nil, keys: ExpectationsLoader.keys),
        Context(kind: .expectations, definition: "count", keys: ExpectationsLoader.countKeys),
        Context(kind: .expectations, definition: "assertion", keys: ExpectationsLoader.assertionKeys),
        Context(kind: .expectations, definition: "record", keys: ExpectationsLoader.recordKeys),
        Context(kind: .model, definition: "bundleIndex", keys: ModelLoader.indexKeys),
        Context(kind: .model, definition: "version", keys: ModelLoader.modelKeys),
        Context(kind: .model, definition: "entity", keys: ModelLoader.entityKeys),
        Context(kind: .model, definition: "attribute", keys: ModelLoader.attributeKeys),
        Context(kind: .model, definition: "relationship", keys: ModelLoader.relationshipKeys),
        Context(kind: .model, definition: "index", keys: ModelLoader.namedIndexKeys),
        Context(kind: .model, definition: "fetchRequest", keys: ModelLoader.fetchRequestKeys),
        Context(kind: .model, definition: "fetchedProperty", keys: ModelLoader.fetchedPropertyKeys),
        Context(kind: .model, definition: "configuration", keys: ModelLoader.configurationKeys),
        Context(kind: .mapping, definition: nil, keys: MappingLoader.topKeys),
        Context(kind: .mapping, definition: "entityMapping", keys: MappingLoader.entityKeys),
        Context(kind: .mapping, definition: "attributeValue", keys: MappingLoader.attributeValueKeys),
        Context(kind: .mapping, definition: "relationshipValue", keys: MappingLoader.relationshipValueKeys),
    ]

    /// The object schema at a context: the definition itself, or its one branch (through
    /// `anyOf` and `$ref`) that has properties.
    static func objectSchema(_ schema: JSONSchema, _ definition: String?) -> [String: Any]? {
        guard let definition else { return schema.root }
        var pending: [[String: Any]] = [schema.resolve("#/definitions/\(definition)")].compactMap { $0 }
        while let next = pending.first {
            pending.removeFirst()
            if next["properties"] != nil { return next }
            if let reference = next["$ref"] as? String, let target = schema.resolve(reference) {
                pending.append(target)
            }
            pending += (next["anyOf"] as? [[String: Any]]) ?? []
        }
        return nil
    }

    @Test("every key a loader accepts is in the schema at the matching place, and nothing else", arguments: contexts)
    func loaderKeysMatchSchema(_ context: Context) throws {
        let schema = try Self.schema(context.kind)
        let object = try #require(Self.objectSchema(schema, context.definition), "\(context): no object schema")
        let properties = try #require(object["properties"] as? [String: Any])
        let inLoaderOnly = Set(context.keys).subtracting(properties.keys).sorted()
        let inSchemaOnly = Set(properties.keys).subtracting(context.keys).sorted()
        #expect(inLoaderOnly.isEmpty, "\(context): the loader accepts \(inLoaderOnly), the schema lacks them")
        #expect(inSchemaOnly.isEmpty, "\(context): the schema has \(inSchemaOnly), the loader refuses them")
        #expect(object["additionalProperties"] as? Bool == false, "\(context): other keys must be refused")
    }

    /// The loaders' `checkKeys` calls: a new one needs a row in `contexts` (and its keys in the
    /// schema), which this count reminds of.
    @Test("every checkKeys call of the loaders has its row here")
    func everyCheckKeysCallIsCovered() throws {
        let folder = TestPaths.packageRoot.appendingPathComponent("Sources/FerryPipeline").path
        var calls = 0
        let files = try #require(FileManager.default.enumerator(atPath: folder))
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: "\(folder)/\(file)", encoding: .utf8)
            calls += text.components(separatedBy: ".checkKeys(").count - 1
        }
        // 34 calls check the keys of the 40 contexts above (the expectations' four contexts are
        // read by one function for files and verify steps alike, so they count twice here).
        #expect(
            calls == 34,
            "Sources/FerryPipeline has \(calls) checkKeys calls: add the new context to DefinitionSchemaTests.contexts and to schemas/*.schema.json, then update this count"
        )
    }

    @Test("every property of every schema has a description", arguments: Kind.allCases)
    func everyPropertyIsDescribed(_ kind: Kind) throws {
        let schema = try Self.schema(kind)
        var undescribed: [String] = []
        func walk(_ node: Any, at path: String) {
            if let object = node as? [String: Any] {
                if let properties = object["properties"] as? [String: Any] {
                    for (key, property) in properties
                    where ((property as? [String: Any])?["description"] as? String ?? "").isEmpty {
                        undescribed.append("\(path)/properties/\(key)")
                    }
                }
                for (key, member) in object { walk(member, at: "\(path)/\(key)") }
            } else if let array = node as? [Any] {
                for (index, member) in array.enumerated() { walk(member, at: "\(path)/\(index)") }
            }
        }
        walk(schema.root, at: "#")
        #expect(undescribed.isEmpty, "\(kind.rawValue): \(undescribed.sorted())")
        #expect(!(schema.root["description"] as? String ?? "").isEmpty)
    }

    @Test("the schemas' choices are the loaders' choices")
    func choicesMatch() throws {
        let job = try Self.schema(.job)
        let model = try Self.schema(.model)
        func choices(_ schema: JSONSchema, _ definition: String, _ key: String) -> Set<String> {
            let property = (Self.objectSchema(schema, definition)?["properties"] as? [String: Any])?[key]
            let branches = ((property as? [String: Any])?["anyOf"] as? [[String: Any]]) ?? []
            return Set(branches.compactMap { $0["enum"] as? [String] }.flatMap { $0 })
        }
        #expect(choices(job, "import", "on_conflict") == Set(ConflictPolicy.allCases.map(\.rawValue)))
        #expect(choices(job, "import", "mode") == Set(ImportMode.allCases.map(\.rawValue)))
        #expect(
            choices(job, "import", "unkeyed_rejects") == Set(SyncOptions.UnkeyedRejects.allCases.map(\.rawValue)))
        #expect(choices(job, "import", "key_style") == Set(SourceKeyStyle.allCases.map(\.rawValue)))
        #expect(choices(job, "relationship", "missing") == Set(RelationshipMapping.Missing.allCases.map(\.rawValue)))
        #expect(
            choices(job, "delete", "delete_rules") == Set(BatchDeleteRequest.DeleteRules.allCases.map(\.rawValue)))
        #expect(choices(job, "verify", "checks") == Set(CheckLevel.allCases.map(\.rawValue)))
        #expect(choices(model, "relationship", "delete_rule") == Set(DeleteRule.allCases.map(\.rawValue)))
        let typeNames = try #require(model.resolve("#/definitions/typeName")?["enum"] as? [String])
        #expect(Set(typeNames) == Set(ModelLoader.typeNames))
    }

    // MARK: - The repository's files

    /// Fixtures that are deliberately invalid (they test the loaders' errors).
    static let invalidOnPurpose: Set<String> = [
        "Tests/FerryCLITests/Fixtures/jobs/broken.yml",
        "Tests/FerryPipelineTests/Fixtures/jobs/broken.yml",
        "Tests/FerryPipelineTests/Fixtures/expectations/broken.yml",
        "Tests/FerryPipelineTests/Fixtures/mappings/bad-values.yml",
        "Tests/FerryPipelineTests/Fixtures/mappings/unknown-keys.yml",
        "Tests/FerryPipelineTests/Fixtures/models/broken/syntax.yml",
        "Tests/FerryPipelineTests/Fixtures/models/broken/unknown-key.yml",
        "Tests/FerryPipelineTests/Fixtures/models/broken/wrong-types.yml",
    ]

    /// The kind of definition a YAML file of the repository holds, from where it is; nil for
    /// YAML that is no ferry definition (CI, the GitHub Action).
    static func kind(of path: String) -> Kind? {
        let name = (path as NSString).lastPathComponent
        if path.hasPrefix("ci/") || path.hasPrefix(".") || name == "action.yml" { return nil }
        if path.contains("expectations") { return .expectations }
        if path.contains("/mappings/") || name.contains("-to-") { return .mapping }
        if path.hasPrefix("pipelines/") || path.contains("/jobs/") || name.hasSuffix("-job.yml") || name == "job.yml" {
            return .job
        }
        return .model
    }

    /// Every .yml/.yaml file of the repository (git's list when there is one, else a walk).
    static func repositoryYAMLFiles() throws -> [String] {
        let root = TestPaths.packageRoot.path
        var files: [String] = []
        let walker = try #require(FileManager.default.enumerator(atPath: root))
        for case let file as String in walker {
            // Build folders (samples/*/.build too), outputs and benchmark data are not the repository's.
            let components = file.split(separator: "/")
            let top = components.first.map(String.init) ?? file
            if components.last?.hasPrefix(".") == true || ["out", "Fuzz", "bench-out"].contains(top) {
                walker.skipDescendants()
                continue
            }
            if file.hasSuffix(".yml") || file.hasSuffix(".yaml") { files.append(file) }
        }
        return files.sorted()
    }

    @Test("every job, model, mapping and expectations file of the repository validates against its schema")
    func repositoryFilesValidate() throws {
        let files = try Self.repositoryYAMLFiles()
        var checked: [Kind: Int] = [:]
        for file in files {
            guard let kind = Self.kind(of: file) else { continue }
            let path = TestPaths.packageRoot.appendingPathComponent(file).path
            if Self.invalidOnPurpose.contains(file) {
                // Still invalid (else it belongs with the others): the schema catches what the loader does.
                if let value = try? YAMLValue.load(path: path) {
                    #expect(!(try Self.schema(kind).violations(of: value)).isEmpty, "\(file) now validates")
                }
                continue
            }
            let violations = try Self.schema(kind).violations(of: try YAMLValue.load(path: path))
            #expect(violations.isEmpty, "\(file) (\(kind.rawValue)):\n\(violations.joined(separator: "\n"))")
            checked[kind, default: 0] += 1
        }
        // The samples and pipelines hold each kind; a walk that finds none of one went wrong.
        for kind in Kind.allCases { #expect(checked[kind, default: 0] >= 4, "only \(checked) files checked") }
    }

    /// The kind of a whole definition shown in the docs, from its top-level keys; nil for a
    /// fragment (a step, a few keys).
    static func kind(ofExample value: Any) -> Kind? {
        guard let top = value as? [String: Any], !top.isEmpty else { return nil }
        let keys = Set(top.keys)
        if keys.isSuperset(of: ["store", "steps"]) { return .job }
        let entities = (top["entities"] as? [String: Any])?.values.compactMap { $0 as? [String: Any] } ?? []
        let mappingKeys: Set<String> = ["source", "filter", "distinct", "policy", "entity"]
        if keys.contains("from") || keys.contains("to")
            || entities.contains(where: { !mappingKeys.isDisjoint(with: $0.keys) })
        {
            return .mapping
        }
        if keys.contains("entities") || keys.contains("versions") { return .model }
        if keys.isSubset(of: Set(ExpectationsLoader.keys)) { return .expectations }
        return nil
    }

    @Test("every whole job, model, mapping and expectations example in the docs validates against its schema")
    func documentedExamplesValidate() throws {
        let root = TestPaths.packageRoot
        let docs =
            try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/\($0)" } + ["pipelines/README.md"]
        let scratch = TemporaryDirectory()
        var checked = 0
        for doc in docs.sorted() {
            let text = try String(contentsOf: root.appendingPathComponent(doc), encoding: .utf8)
            var block: [String]?
            var start = 0
            for (number, line) in text.components(separatedBy: "\n").enumerated() {
                if block == nil, line.trimmingCharacters(in: .whitespaces) == "```yaml" {
                    block = []
                    start = number + 1
                } else if let lines = block, line.trimmingCharacters(in: .whitespaces) == "```" {
                    block = nil
                    // Fragments that are not YAML on their own (with ellipses) are not definitions.
                    let path = try scratch.write("example.yml", lines.joined(separator: "\n"))
                    guard let value = try? YAMLValue.load(path: path), let kind = Self.kind(ofExample: value) else {
                        continue
                    }
                    let violations = try Self.schema(kind).violations(of: value)
                    #expect(violations.isEmpty, "\(doc):\(start) (\(kind.rawValue)): \(violations)")
                    checked += 1
                } else {
                    block?.append(line)
                }
            }
        }
        #expect(checked >= 8, "only \(checked) examples found")
    }

    @Test("the schema refuses what the loader refuses: an unknown key, a wrong choice, a misplaced key")
    func schemaRefusesMistakes() throws {
        let job = try Self.schema(.job)
        let good: [String: Any] = [
            "store": "s.sqlite", "steps": [["import": ["source": "a.csv", "entity": "A", "on_conflict": "update"]]],
        ]
        #expect(job.violations(of: good).isEmpty)
        let misspelt: [String: Any] = ["store": "s.sqlite", "steps": [["improt": ["source": "a.csv"]]]]
        #expect(job.violations(of: misspelt).contains { $0.contains("'improt' is not in the schema") })
        let badChoice: [String: Any] = [
            "store": "s.sqlite", "steps": [["import": ["source": "a.csv", "entity": "A", "on_conflict": "upsert"]]],
        ]
        #expect(job.violations(of: badChoice).contains { $0.hasPrefix("$.steps[0].import.on_conflict:") })
        let parameter: [String: Any] = [
            "store": "s.sqlite", "steps": [["import": ["source": "a.csv", "entity": "A", "batch_size": "${size}"]]],
        ]
        #expect(job.violations(of: parameter).isEmpty)
        let twoKinds: [String: Any] = ["store": "s", "steps": [["import": [:], "export": [:]]]]
        #expect(job.violations(of: twoKinds).contains { $0.contains("more than 1") })
    }
}
