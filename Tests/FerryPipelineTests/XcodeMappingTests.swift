import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("Xcode mapping models", .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct XcodeMappingTests {
    static func sample(_ relative: String) -> String { CoreDataSamples.root.appendingPathComponent(relative).path }
    static let revisedMappings = sample(
        "wibosco-CoreDataMigrationRevised/CoreDataMigration-Example/CoreData/Migration/Mappings")
    static let originalMappings = sample(
        "wibosco-CoreDataMigration-Example/CoreDataMigration-Example/CoreData/Migration/Mappings")
    static let revisedPackage = sample(
        "wibosco-CoreDataMigrationRevised/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld"
    )

    static func mappingPackages() throws -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: CoreDataSamples.root.path) else { return [] }
        var found: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if relative.hasSuffix(".xcmappingmodel") {
                found.append(CoreDataSamples.root.appendingPathComponent(relative).path)
            }
        }
        return found.sorted()
    }

    static func translate(_ path: String) throws -> MappingModel {
        let file = try XcodeMappingReader().read(path: path)
        let modelPath = try #require(file.modelPackagePath)
        let bundle = try ModelLoader().load(path: modelPath)
        let source = try #require(bundle.versions.first { $0.version == file.sourceVersion })
        let destination = try #require(bundle.versions.first { $0.version == file.destinationVersion })
        return try file.mappingModel(from: source, to: destination)
    }

    /// A copy of a real mapping model's `xcmapping.xml` with `edit` applied, as a package in `directory`.
    static func edited(
        _ path: String, name: String, in directory: TemporaryDirectory, _ edit: (String) -> String
    ) throws -> String {
        let text = try String(contentsOfFile: path + "/xcmapping.xml", encoding: .utf8)
        let changed = edit(text)
        #expect(changed != text, "the edit of \(path) changed nothing")
        let package = directory.file(name + ".xcmappingmodel")
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        _ = try directory.write(name + ".xcmappingmodel/xcmapping.xml", changed)
        return package
    }

    @Test("every real mapping model reads, finds its model package and translates")
    func everyRealMappingModel() throws {
        let packages = try Self.mappingPackages()
        #expect(packages.count >= 3)
        for package in packages {
            let mapping = try Self.translate(package)
            #expect(!mapping.entities.isEmpty, "\(package)")
            #expect(mapping.location?.file == package + "/xcmapping.xml")
        }
    }

    @Test("Migration1to2: $source.color is a copy of color into hexColor; blank mappings are implicit copies")
    func rename() throws {
        let file = try XcodeMappingReader().read(path: Self.originalMappings + "/Migration1to2.xcmappingmodel")
        #expect(file.name == "Migration1to2")
        #expect(file.sourceVersion == "CoreDataMigration_Example")
        #expect(file.destinationVersion == "CoreDataMigration_Example 2")
        let mapping = try Self.translate(Self.originalMappings + "/Migration1to2.xcmappingmodel")
        let post = try #require(mapping.entity(named: "Post"))
        #expect(post.source == "Post")
        #expect(post.policy == nil)
        guard case .copy("color", nil, .null)? = post.attribute(named: "hexColor")?.value else {
            Issue.record("hexColor: \(String(describing: post.attribute(named: "hexColor")?.value))")
            return
        }
        guard case .copy("date", nil, .null)? = post.attribute(named: "date")?.value else {
            Issue.record("date: \(String(describing: post.attribute(named: "date")?.value))")
            return
        }
    }

    @Test(
        "Migration2to3ModelMapping: an add mapping, mappingnumber order, the policy class name, Core Data's mapping names"
    )
    func addMappingAndPolicy() throws {
        let mapping = try Self.translate(Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel")
        #expect(mapping.entities.map(\.name) == ["Section", "Post"])
        let section = try #require(mapping.entity(named: "Section"))
        #expect(section.source == nil)
        guard case .constant(.integer(0))? = section.attribute(named: "index")?.value else {
            Issue.record("index: \(String(describing: section.attribute(named: "index")?.value))")
            return
        }
        #expect(section.relationship(named: "post")?.value == MappingModel.RelationshipValue.none)
        let post = try #require(mapping.entity(named: "PostToPost"), "Core Data's name finds the mapping")
        #expect(post.name == "Post")
        #expect(post.policy == "CoreDataMigration_Example.Post2ToPost3MigrationPolicy")
        #expect(post.attribute(named: "content") == nil)
        #expect(post.relationship(named: "sections")?.value == MappingModel.RelationshipValue.none)
    }

    @Test("the two-string key-path form: $source links the object another mapping made from the same source object")
    func sourceKeyPathForms() throws {
        let directory = TemporaryDirectory()
        let package = try Self.edited(
            Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel", name: "Linked", in: directory
        ) { text in
            text.replacingOccurrences(
                of: "<attribute name=\"name\" type=\"string\">post</attribute>",
                with:
                    "<attribute name=\"sourcekeypath\" type=\"string\">$source</attribute>\n<attribute name=\"sourcemappingname\" type=\"string\">PostToPost</attribute>\n<attribute name=\"name\" type=\"string\">post</attribute>"
            ).replacingOccurrences(
                of: "<attribute name=\"destinationname\" type=\"string\">Section</attribute>",
                with:
                    "<attribute name=\"sourcename\" type=\"string\">Post</attribute>\n<attribute name=\"destinationname\" type=\"string\">Section</attribute>"
            )
        }
        let bundle = try ModelLoader().load(path: Self.revisedPackage)
        let file = try XcodeMappingReader().read(path: package)
        let mapping = try file.mappingModel(from: bundle.versions[1], to: bundle.versions[2])
        // The mapping Section runs after the Post mapping it links to, whatever mappingnumber says.
        #expect(mapping.entities.map(\.name) == ["Post", "Section"])
        #expect(mapping.entity(named: "PostToSection")?.relationship(named: "post")?.value == .fromMapping("Post"))
        #expect(mapping.entity(named: "Section")?.source == "Post")
    }

    @Test(
        "bad mapping models: unknown entities and properties, a missing model, an unknown field are errors at their place in xcmapping.xml"
    )
    func badMappings() throws {
        let directory = TemporaryDirectory()
        let bundle = try ModelLoader().load(path: Self.revisedPackage)
        let unknown = try Self.edited(
            Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel", name: "Unknown", in: directory
        ) { text in
            text.replacingOccurrences(
                of: "<attribute name=\"name\" type=\"string\">hexColor</attribute>",
                with: "<attribute name=\"name\" type=\"string\">hexColour</attribute>"
            )
            .replacingOccurrences(
                of: "<attribute name=\"sourcename\" type=\"string\">Post</attribute>",
                with: "<attribute name=\"sourcename\" type=\"string\">Posts</attribute>")
        }
        do {
            _ = try XcodeMappingReader().read(path: unknown).mappingModel(
                from: bundle.versions[1], to: bundle.versions[2])
            Issue.record("an unknown source entity was accepted")
        } catch let errors as FerryErrors {
            let text = errors.description
            #expect(text.contains("Unknown.xcmappingmodel/xcmapping.xml:"), "\(text)")
            #expect(
                text.contains(
                    "PostsToPost maps from 'Posts', which is no entity of CoreDataMigration_Example version CoreDataMigration_Example 2; did you mean 'Post'?"
                ), "\(text)")
        }
        let wrongProperty = try Self.edited(
            Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel", name: "Property", in: directory
        ) { text in
            text.replacingOccurrences(
                of: "<attribute name=\"name\" type=\"string\">hexColor</attribute>",
                with: "<attribute name=\"name\" type=\"string\">hexColour</attribute>")
        }
        do {
            _ = try XcodeMappingReader().read(path: wrongProperty).mappingModel(
                from: bundle.versions[1], to: bundle.versions[2])
            Issue.record("an unknown attribute was accepted")
        } catch let errors as FerryErrors {
            #expect(
                errors.description.contains(
                    "PostToPost maps 'hexColour', which is no attribute of Post; did you mean 'hexColor'?"), "\(errors)"
            )
        }
        let field = try Self.edited(
            Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel", name: "Field", in: directory
        ) { text in
            text.replacingOccurrences(
                of: "<attribute name=\"mappingtypename\" type=\"string\">Undefined</attribute>",
                with: "<attribute name=\"filterpredicate\" type=\"string\">hexColor != nil</attribute>")
        }
        #expect(throws: FerryErrors.self) { try XcodeMappingReader().read(path: field) }
        do {
            _ = try XcodeMappingReader().read(path: field)
        } catch let errors as FerryErrors {
            #expect(
                errors.description.contains("the XDDEVENTITYMAPPING field 'filterpredicate' is not read by ferry"),
                "\(errors)")
        }
        let noModel = try Self.edited(
            Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel", name: "NoModel", in: directory
        ) { text in
            text.replacingOccurrences(of: "type=\"XDDEVMAPPINGMODEL\"", with: "type=\"XDDEVENTITYMAPPING\"")
        }
        #expect(throws: FerryErrors.self) { try XcodeMappingReader().read(path: noModel) }
    }

    @Test(
        "the search matches the versions a mapping names, structurally when they are not in the bundle, and refuses two for one step"
    )
    func search() throws {
        let bundle = try ModelLoader().load(path: Self.revisedPackage)
        let (v2, v3) = (bundle.versions[1], bundle.versions[2])
        let named = try XcodeMappingSearch(folders: [Self.revisedMappings]).mapping(from: v2, to: v3, in: bundle)
        #expect(named?.location?.file.hasSuffix("Migration2to3ModelMapping.xcmappingmodel/xcmapping.xml") == true)
        #expect(
            try XcodeMappingSearch(folders: [Self.revisedMappings]).mapping(
                from: bundle.versions[0], to: v2, in: bundle) == nil)

        let directory = TemporaryDirectory()
        _ = try Self.edited(
            Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel", name: "Renamed", in: directory
        ) { text in
            text.replacingOccurrences(of: "CoreDataMigration_Example 2.xcdatamodel", with: "Old Two.xcdatamodel")
                .replacingOccurrences(of: "CoreDataMigration_Example 3.xcdatamodel", with: "Old Three.xcdatamodel")
        }
        let structural = try XcodeMappingSearch(folders: [directory.path]).mapping(from: v2, to: v3, in: bundle)
        #expect(structural?.location?.file.hasSuffix("Renamed.xcmappingmodel/xcmapping.xml") == true)
        // It does not fit the step 1 → 2 (no Section in version 2).
        #expect(
            try XcodeMappingSearch(folders: [directory.path]).mapping(from: bundle.versions[0], to: v2, in: bundle)
                == nil)

        try FileManager.default.copyItem(
            atPath: Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel",
            toPath: directory.file("A.xcmappingmodel"))
        try FileManager.default.copyItem(
            atPath: Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel",
            toPath: directory.file("B.xcmappingmodel"))
        do {
            _ = try XcodeMappingSearch(folders: [directory.path]).mapping(from: v2, to: v3, in: bundle)
            Issue.record("two mapping models for one step were accepted")
        } catch let errors as FerryErrors {
            #expect(
                errors.description.contains(
                    "2 mapping models are made for CoreDataMigration_Example 2 → CoreDataMigration_Example 3"),
                "\(errors)")
        }
    }

    @Test("truncated and corrupted mapping models are errors, never crashes")
    func hostileBytes() throws {
        let directory = TemporaryDirectory()
        let bundle = try ModelLoader().load(path: Self.revisedPackage)
        let original = try String(
            contentsOfFile: Self.originalMappings + "/Migration1to2.xcmappingmodel/xcmapping.xml", encoding: .utf8)
        let originalBundle = try ModelLoader().load(
            path: try #require(
                try XcodeMappingReader().read(path: Self.originalMappings + "/Migration1to2.xcmappingmodel")
                    .modelPackagePath))
        let bytes = Array(original.utf8)
        let package = directory.file("Hostile.xcmappingmodel")
        try FileManager.default.createDirectory(atPath: package, withIntermediateDirectories: true)
        var failures = 0
        var variants: [[UInt8]] = stride(from: 0, to: bytes.count, by: 97).map { Array(bytes.prefix($0)) }
        // Every 5th character of the archived expression changed, one at a time.
        if let start = original.range(of: "type=\"binary\">")?.upperBound {
            let offset = original.utf8.distance(from: original.utf8.startIndex, to: start)
            for index in stride(from: offset, to: min(offset + 900, bytes.count), by: 5)
            where bytes[index] != UInt8(ascii: "<") {
                var changed = bytes
                changed[index] = changed[index] == UInt8(ascii: "A") ? UInt8(ascii: "/") : UInt8(ascii: "A")
                variants.append(changed)
            }
        }
        #expect(variants.count > 100)
        for variant in variants {
            try Data(variant).write(to: URL(fileURLWithPath: package + "/xcmapping.xml"))
            do {
                let file = try XcodeMappingReader().read(path: package)
                _ = try? file.mappingModel(from: originalBundle.versions[0], to: originalBundle.versions[1])
                _ = try? file.mappingModel(from: bundle.versions[1], to: bundle.versions[2])
            } catch let errors as FerryErrors {
                failures += 1
                #expect(errors.errors.allSatisfy { $0.location?.file.hasPrefix(package) == true }, "\(errors)")
            }
        }
        #expect(failures > 10)
    }

    @Test("MappingYAMLWriter's output loads back into the same mapping")
    func yamlRoundTrip() throws {
        let bundle = try ModelLoader().load(path: Self.revisedPackage)
        let mapping = try Self.translate(Self.revisedMappings + "/Migration2to3ModelMapping.xcmappingmodel")
        let directory = TemporaryDirectory()
        let path = try directory.write(
            "CoreDataMigration_Example 2-to-CoreDataMigration_Example 3.yml",
            try MappingYAMLWriter.text(of: mapping, comment: ["round trip"]))
        let loaded = try MappingLoader().load(path: path, source: bundle.versions[1], destination: bundle.versions[2])
        #expect(loaded.entities.map(\.name).sorted() == mapping.entities.map(\.name).sorted())
        for right in mapping.entities {
            let left = try #require(loaded.entity(named: right.name))
            #expect(left.source == right.source)
            #expect(left.policy == right.policy)
            #expect(left.relationships.map(\.value) == right.relationships.map(\.value))
            #expect(
                left.attributes.map { "\($0.destination)=\($0.value)" }
                    == right.attributes.map { "\($0.destination)=\($0.value)" })
        }
    }
}
