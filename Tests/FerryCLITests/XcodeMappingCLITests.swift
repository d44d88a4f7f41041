import FerryTestSupport
import Foundation
import Testing

/// Xcode mapping models end to end, through the real binaries: the wibosco apps' data (read from
/// their real Core Data stores) imported into ferry stores of the apps' Xcode models, migrated
/// through the apps' `.xcmappingmodel` packages with their `Post2ToPost3MigrationPolicy`
/// registered by class name in `ferry-test-policies` (Tests/FerryTestPolicies), and checked
/// against EXPECTED.md / SOURCE.md.
@Suite(
    "Xcode mapping models: ferry mapping show, ferry migrate --mappings, policies by class name", .serialized,
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct XcodeMappingCLITests {
    static func sample(_ relative: String) -> String { CoreDataSamples.root.appendingPathComponent(relative).path }
    static let revised = "wibosco-CoreDataMigrationRevised"
    static let original = "wibosco-CoreDataMigration-Example"
    static func package(_ app: String) -> String {
        sample("\(app)/CoreDataMigration-Example/CoreData/Model/CoreDataMigration_Example.xcdatamodeld")
    }
    static func mappings(_ app: String) -> String {
        sample("\(app)/CoreDataMigration-Example/CoreData/Migration/Mappings")
    }
    static func coreDataStore(_ app: String, _ number: Int) -> String {
        sample("\(app)/CoreDataMigration-ExampleTests/Resources/SQLite/CoreDataMigration_Example_\(number).sqlite")
    }
    static let v1 = "CoreDataMigration_Example"
    static let v2 = "CoreDataMigration_Example 2"
    static let v3 = "CoreDataMigration_Example 3"

    static func runPolicies(_ arguments: [String], set: String, registeredAs name: String) throws -> ProcessResult {
        try FerryProcess(
            arguments, env: ["FERRY_TEST_POLICY_SET": set, "FERRY_TEST_POLICY_NAME": name],
            executable: FerryBinary.sibling("ferry-test-policies")
        ).wait()
    }

    /// A ferry store of `version` of the app's model holding the posts of the app's real Core
    /// Data store number `number` (read from a copy of it), and a copy of the app's model
    /// package to migrate it with.
    static func prepareStore(
        _ app: String, store number: Int, version: String, in directory: TemporaryDirectory
    ) throws -> (store: String, package: String) {
        let copy = directory.file("coredata-\(number).sqlite")
        try FileManager.default.copyItem(atPath: coreDataStore(app, number), toPath: copy)
        let columns = try StoreSnapshot.texts(copy, "PRAGMA table_info(ZPOST)").compactMap { $0[1] }
        let names = [
            "ZPOSTID": "postID", "ZCOLOR": "color", "ZHEXCOLOR": "hexColor", "ZCONTENT": "content", "ZDATE": "date",
        ]
        let selected = names.keys.sorted().filter(columns.contains)
        var lines: [String] = []
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for row in try StoreSnapshot.texts(copy, "SELECT \(selected.joined(separator: ", ")) FROM ZPOST ORDER BY Z_PK")
        {
            var object: [String: Any] = [:]
            for (column, value) in zip(selected, row) {
                guard let name = names[column] else { continue }
                if column == "ZDATE", let seconds = value.flatMap(Double.init) {
                    object[name] = formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds))
                } else {
                    object[name] = value ?? NSNull()
                }
            }
            lines.append(
                String(
                    decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            )
        }
        let posts = try directory.write("Post.ndjson", lines.joined(separator: "\n") + "\n")
        let package = directory.file("CoreDataMigration_Example.xcdatamodeld")
        try FileManager.default.copyItem(atPath: Self.package(app), toPath: package)
        // An index whose current version is `version`, so that import makes a store of it.
        let index = try directory.write(
            "model.yml",
            "name: CoreDataMigration_Example\ncurrent: \(version)\nversions:\n"
                + [v1, v2, v3].prefix { $0 != version }.map {
                    "  - CoreDataMigration_Example.xcdatamodeld/\($0).xcdatamodel\n"
                }.joined()
                + "  - CoreDataMigration_Example.xcdatamodeld/\(version).xcdatamodel\n")
        let store = directory.file("posts.sqlite")
        let imported = try runFerry(["import", posts, "--store", store, "--model", index, "--quiet"])
        #expect(imported.exitCode == 0, "\(imported)")
        return (store, package)
    }

    // MARK: mapping show

    @Test("mapping show prints every real mapping model as a ferry mapping file, implicit values made explicit")
    func show() throws {
        let rename = try runFerry(["mapping", "show", Self.mappings(Self.original) + "/Migration1to2.xcmappingmodel"])
        #expect(rename.exitCode == 0, "\(rename)")
        #expect(rename.stdout.contains("from: CoreDataMigration_Example\nto: CoreDataMigration_Example 2\n"))
        #expect(
            rename.stdout.contains(
                "  Post:\n    source: Post\n    attributes:\n      date:\n        source: date\n      hexColor:\n        source: color\n"
            ))

        let sections = try runFerry([
            "mapping", "show", Self.mappings(Self.revised) + "/Migration2to3ModelMapping.xcmappingmodel/xcmapping.xml",
        ])
        #expect(sections.exitCode == 0, "\(sections)")
        #expect(sections.stdout.contains("  Section:\n    source: none\n"))
        #expect(sections.stdout.contains("      index:\n        value: \"0\"\n"))
        #expect(sections.stdout.contains("    policy: CoreDataMigration_Example.Post2ToPost3MigrationPolicy\n"))
        #expect(sections.stdout.contains("      sections: none\n"))
        #expect(!sections.stdout.contains("content"), "Post.content is dropped in version 3")

        // The printed file is a ferry mapping file: the migration it describes runs from it.
        let directory = TemporaryDirectory()
        let (store, package) = try Self.prepareStore(Self.original, store: 1, version: Self.v1, in: directory)
        let folder = directory.file("mappings")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try directory.write("mappings/\(Self.v1)-to-\(Self.v2).yml", rename.stdout)
        let migrated = try runFerry([
            "migrate", store, "--model", package, "--to", Self.v2, "--mappings", folder, "--no-backup",
        ])
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(migrated.stdout.contains("(\(folder)/\(Self.v1)-to-\(Self.v2).yml): Post 1,001"), "\(migrated)")
        let original = try StoreSnapshot.texts(
            directory.file("coredata-1.sqlite"), "SELECT ZPOSTID, ZCOLOR FROM ZPOST ORDER BY ZPOSTID")
        #expect(try StoreSnapshot.texts(store, "SELECT postID, hexColor FROM Post ORDER BY postID") == original)
    }

    @Test("mapping show on a ./-relative path prints what the absolute path prints (it died with SIGILL)")
    func showRelative() throws {
        let folder = Self.mappings(Self.original)
        let absolute = try runFerry(["mapping", "show", folder + "/Migration1to2.xcmappingmodel"])
        for relative in ["./Migration1to2.xcmappingmodel", "Migration1to2.xcmappingmodel/"] {
            let shown = try runFerry(["mapping", "show", relative], cwd: folder)
            #expect(!shown.wasSignaled && shown.exitCode == 0, "\(relative): \(shown)")
            #expect(shown.stdout == absolute.stdout, "\(relative)")
        }
    }

    @Test("mapping show: a missing package, malformed XML, a dangling id and an unknown model are clear errors")
    func showBadInput() throws {
        let missing = try runFerry(["mapping", "show", "/nonexistent/M.xcmappingmodel"])
        #expect(missing.exitCode != 0)
        #expect(missing.stderr.contains("no mapping model at '/nonexistent/M.xcmappingmodel'"), "\(missing)")

        let directory = TemporaryDirectory()
        let real = try String(
            contentsOfFile: Self.mappings(Self.original) + "/Migration1to2.xcmappingmodel/xcmapping.xml",
            encoding: .utf8)
        try FileManager.default.createDirectory(
            atPath: directory.file("Broken.xcmappingmodel"), withIntermediateDirectories: true)
        let broken = try directory.write("Broken.xcmappingmodel/xcmapping.xml", String(real.prefix(real.count / 2)))
        let malformed = try runFerry([
            "mapping", "show", directory.file("Broken.xcmappingmodel"), "--model", Self.package(Self.original),
        ])
        #expect(malformed.exitCode == 64, "\(malformed)")
        #expect(malformed.stderr.hasPrefix("\(broken):"), "\(malformed)")
        #expect(malformed.stderr.contains("malformed XML"), "\(malformed)")

        try FileManager.default.createDirectory(
            atPath: directory.file("Dangling.xcmappingmodel"), withIntermediateDirectories: true)
        let dangling = try directory.write(
            "Dangling.xcmappingmodel/xcmapping.xml",
            real.replacingOccurrences(of: "idrefs=\"z106 z103 z102\"", with: "idrefs=\"z106 z999 z102\""))
        let result = try runFerry([
            "mapping", "show", directory.file("Dangling.xcmappingmodel"), "--model", Self.package(Self.original),
        ])
        #expect(result.exitCode == 64, "\(result)")
        #expect(result.stderr.contains("\(dangling):"), "\(result)")
        #expect(
            result.stderr.contains("'attributemappings' of z105 names 'z999', which is no object of the document"),
            "\(result)")

        let unknownModel = try runFerry([
            "mapping", "show", Self.mappings(Self.original) + "/Migration1to2.xcmappingmodel", "--model",
            Self.package(Self.revised) + "/CoreDataMigration_Example 4.xcdatamodel",
        ])
        #expect(unknownModel.exitCode == 64, "\(unknownModel)")
        #expect(unknownModel.stderr.contains("has no source version 'CoreDataMigration_Example'"), "\(unknownModel)")
    }

    // MARK: migrate with mapping models and policies

    @Test(
        "Revised app: store 2 → 4 through Migration2to3ModelMapping, its policy registered without the module prefix: one Section per Post"
    )
    func revisedSectionPerPost() throws {
        let directory = TemporaryDirectory()
        let (store, package) = try Self.prepareStore(Self.revised, store: 2, version: Self.v2, in: directory)
        let before = try StoreSnapshot.take(store)

        // Plain ferry has no policies: the mapping model's policy is an error, the store unchanged.
        let plain = try runFerry(["migrate", store, "--model", package, "--mappings", Self.mappings(Self.revised)])
        #expect(plain.exitCode != 0, "\(plain)")
        #expect(plain.stderr.contains("Migration2to3ModelMapping.xcmappingmodel/xcmapping.xml:"), "\(plain)")
        #expect(
            plain.stderr.contains(
                "no migration policy named 'CoreDataMigration_Example.Post2ToPost3MigrationPolicy' is registered"),
            "\(plain)")
        #expect(try StoreSnapshot.take(store) == before)

        let migrated = try Self.runPolicies(
            ["migrate", store, "--model", package, "--mappings", Self.mappings(Self.revised), "--no-backup"],
            set: "revised", registeredAs: "Post2ToPost3MigrationPolicy")
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(
            migrated.stdout.contains("Migration2to3ModelMapping.xcmappingmodel/xcmapping.xml): Section 10, Post 10"),
            "\(migrated)")
        #expect(
            migrated.stdout.contains(
                "step CoreDataMigration_Example 3 → CoreDataMigration_Example 4 (inferred): Post 10, Section 10"),
            "\(migrated)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Post") == [10])
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Section") == [10])
        #expect(
            try StoreSnapshot.integers(
                store,
                "SELECT count(*) FROM Post p WHERE (SELECT count(*) FROM Section s WHERE s.post = p.ferry_pk) != 1")
                == [0])
        let post = try StoreSnapshot.texts(
            store,
            "SELECT p.postID, p.hexColor, p.date, p.softDeleted, s.title, s.body, s.\"index\" FROM Post p JOIN Section s ON s.post = p.ferry_pk ORDER BY p.postID DESC LIMIT 1"
        )
        #expect(
            post.map { [$0[0], $0[1], $0[3], $0[4], $0[5], $0[6]] } == [
                ["FFFECB21-6645-4FDD-B8B0-B960D0E61F5A", "1BB732", "0", "Test...", "Test body", "0"]
            ])
        // Unix 1547494150.058821, to ferry's millisecond precision.
        #expect(post.first?[2]?.hasPrefix("2019-01-14T19:29:10.05") == true, "\(post)")
        // Every other post: its content became its one section's body, its first 4 characters + "..." the title.
        let contents = try StoreSnapshot.texts(
            directory.file("coredata-2.sqlite"), "SELECT ZPOSTID, ZCONTENT FROM ZPOST ORDER BY ZPOSTID")
        let sections = try StoreSnapshot.texts(
            store,
            "SELECT p.postID, s.body, s.title FROM Post p JOIN Section s ON s.post = p.ferry_pk ORDER BY p.postID")
        #expect(sections.map { [$0[0], $0[1]] } == contents)
        #expect(sections.map { $0[2] } == contents.map { $0[1].map { String($0.prefix(4)) + "..." } })
    }

    @Test(
        "Original app: store 1 → 4 through Migration1to2 ($source.color) and Migration2to3, its policy registered with the module prefix: one Color per Post"
    )
    func originalColorPerPost() throws {
        let directory = TemporaryDirectory()
        let (store, package) = try Self.prepareStore(Self.original, store: 1, version: Self.v1, in: directory)
        let migrated = try Self.runPolicies(
            ["migrate", store, "--model", package, "--mappings", Self.mappings(Self.original), "--no-backup"],
            set: "original",
            registeredAs: "CoreDataMigration_Example.Post2ToPost3MigrationPolicy")
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(migrated.stdout.contains("Migration1to2.xcmappingmodel/xcmapping.xml): Post 1,001"), "\(migrated)")
        #expect(
            migrated.stdout.contains("Migration2to3.xcmappingmodel/xcmapping.xml): Color 1,001, Post 1,001"),
            "\(migrated)")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Post") == [1001])
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Color") == [1001])
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Post WHERE hide = 0") == [1001])
        #expect(
            try StoreSnapshot.integers(store, "SELECT count(DISTINCT colorID) FROM Color WHERE colorID IS NOT NULL")
                == [1001])
        let original = try StoreSnapshot.texts(
            directory.file("coredata-1.sqlite"), "SELECT ZPOSTID, ZCOLOR FROM ZPOST ORDER BY ZPOSTID")
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT p.postID, c.hex FROM Post p JOIN Color c ON c.post = p.ferry_pk ORDER BY p.postID")
                == original)
    }

    @Test(
        "A mapping model beside the model package is found without --mappings; a policy registered under another module's prefix still resolves"
    )
    func besideThePackage() throws {
        let directory = TemporaryDirectory()
        let (store, package) = try Self.prepareStore(Self.revised, store: 2, version: Self.v2, in: directory)
        try FileManager.default.copyItem(
            atPath: Self.mappings(Self.revised) + "/Migration2to3ModelMapping.xcmappingmodel",
            toPath: directory.file("Migration2to3ModelMapping.xcmappingmodel"))
        let migrated = try Self.runPolicies(
            ["migrate", store, "--model", package, "--to", Self.v3, "--no-backup"], set: "revised",
            registeredAs: "MyFerry.Post2ToPost3MigrationPolicy")
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(
            migrated.stdout.contains(
                "\(directory.path)/Migration2to3ModelMapping.xcmappingmodel/xcmapping.xml): Section 10, Post 10"),
            "\(migrated)")
    }

    @Test(
        "mapping show's file of Migration2to3ModelMapping runs as the mapping model does, its policy named with the module prefix"
    )
    func printedMappingWithPolicy() throws {
        let directory = TemporaryDirectory()
        let (store, package) = try Self.prepareStore(Self.revised, store: 2, version: Self.v2, in: directory)
        let shown = try runFerry([
            "mapping", "show", Self.mappings(Self.revised) + "/Migration2to3ModelMapping.xcmappingmodel",
        ])
        #expect(shown.exitCode == 0, "\(shown)")
        let folder = directory.file("mappings")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = try directory.write("mappings/\(Self.v2)-to-\(Self.v3).yml", shown.stdout)
        let migrated = try Self.runPolicies(
            ["migrate", store, "--model", package, "--to", Self.v3, "--mappings", folder, "--no-backup"],
            set: "revised", registeredAs: "Post2ToPost3MigrationPolicy")
        #expect(migrated.exitCode == 0, "\(migrated)")
        #expect(migrated.stdout.contains("(\(file)): Post 10, Section 10"), "\(migrated)")
        let post = try StoreSnapshot.texts(
            store,
            "SELECT s.title, s.body FROM Post p JOIN Section s ON s.post = p.ferry_pk WHERE p.postID = 'FFFECB21-6645-4FDD-B8B0-B960D0E61F5A'"
        )
        #expect(post == [["Test...", "Test body"]])
    }

    @Test("A ferry mapping file stands in for the mapping model: one Section per Post with no Swift")
    func yamlStandsIn() throws {
        let directory = TemporaryDirectory()
        let (store, package) = try Self.prepareStore(Self.revised, store: 2, version: Self.v2, in: directory)
        let folder = directory.file("mappings")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Beside the mapping model (which names a policy plain ferry lacks): the YAML file wins.
        try FileManager.default.copyItem(
            atPath: Self.mappings(Self.revised) + "/Migration2to3ModelMapping.xcmappingmodel",
            toPath: folder + "/Migration2to3ModelMapping.xcmappingmodel")
        _ = try directory.write(
            "mappings/\(Self.v2)-to-\(Self.v3).yml",
            """
            from: \(Self.v2)
            to: \(Self.v3)
            entities:
              Section:
                source: Post
                attributes:
                  body: $source.content
                  title: concat(substring($source.content, 0, 4), "...")
                  index: {value: 0}
                relationships:
                  post: {mapping: Post}
              Post:
                relationships:
                  sections: none

            """)
        let migrated = try runFerry([
            "migrate", store, "--model", package, "--to", Self.v3, "--mappings", folder, "--no-backup",
        ])
        #expect(migrated.exitCode == 0, "\(migrated)")
        let post = try StoreSnapshot.texts(
            store,
            "SELECT s.title, s.body, s.\"index\" FROM Post p JOIN Section s ON s.post = p.ferry_pk WHERE p.postID = 'FFFECB21-6645-4FDD-B8B0-B960D0E61F5A'"
        )
        #expect(post == [["Test...", "Test body", "0"]])
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Section") == [10])
    }

    // MARK: refusals

    /// `FUNCTION($source, "uppercaseString")`, archived as Xcode stores a value expression.
    static let sourceFunctionArchive = """
        YnBsaXN0MDDUAQIDBAUGKy5ZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKpBwgTGhsgIycqVSRudWxs1QkKCwwNDg8QERJWJGNsYXNzW05TQXJndW1lbnRzXxAQTlNFeHByZXNzaW9uVHlwZVlOU09wZXJhbmReTlNTZWxlY3Rvck5hbWWAAoAGEASABIAD0hQVFhdYJGNsYXNzZXNaJGNsYXNzbmFtZaMXGBlfEBROU0Z1bmN0aW9uRXhwcmVzc2lvblxOU0V4cHJlc3Npb25YTlNPYmplY3RfEA91cHBlcmNhc2VTdHJpbmfTCQscHR4fWk5TVmFyaWFibGWABRACgAjSFBUhIqMiGBlfEBROU1ZhcmlhYmxlRXhwcmVzc2lvbtIJJCUmWk5TLm9iamVjdHOAB6DSFBUoKaIpGVdOU0FycmF5VnNvdXJjZdEsLVRyb290gAESAAGGoAAIABEAGwAkACkAMgBEAE4AVABfAGYAcgCFAI8AngCgAKIApACmAKgArQC2AMEAxQDcAOkA8gEEAQsBFgEYARoBHAEhASUBPAFBAUwBTgFPAVQBVwFfAWYBaQFuAXAAAAAAAAACAQAAAAAAAAAvAAAAAAAAAAAAAAAAAAABdQ==
        """

    @Test(
        "Forms ferry cannot translate are errors naming the mapping model, the entity mapping, the property and the form; the store is unchanged"
    )
    func untranslatableForms() throws {
        let directory = TemporaryDirectory()
        let (store, package) = try Self.prepareStore(Self.original, store: 1, version: Self.v1, in: directory)
        let before = try StoreSnapshot.take(store)
        let real = try String(
            contentsOfFile: Self.mappings(Self.original) + "/Migration1to2.xcmappingmodel/xcmapping.xml",
            encoding: .utf8)
        let folder = directory.file("mappings")
        try FileManager.default.createDirectory(
            atPath: folder + "/Migration1to2.xcmappingmodel", withIntermediateDirectories: true)
        // postID's value becomes FUNCTION($source, "uppercaseString"): an Objective-C method call.
        let edited = real.replacingOccurrences(
            of: "<attribute name=\"name\" type=\"string\">postID</attribute>",
            with:
                "<attribute name=\"valueexpressiondata\" type=\"binary\">\(Self.sourceFunctionArchive)</attribute>\n        <attribute name=\"name\" type=\"string\">postID</attribute>"
        )
        #expect(edited != real)
        let path = try directory.write("mappings/Migration1to2.xcmappingmodel/xcmapping.xml", edited)
        let refused = try runFerry(["migrate", store, "--model", package, "--mappings", folder])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(refused.stderr.contains("\(path):"), "\(refused)")
        #expect(
            refused.stderr.contains(
                "mapping model Migration1to2: PostToPost gives Post.postID the value expression FUNCTION($source, \"uppercaseString\"), which ferry cannot translate: it calls the Objective-C method 'uppercaseString' on the source object"
            ),
            "\(refused)")
        #expect(try StoreSnapshot.take(store) == before)

        let shown = try runFerry(["mapping", "show", folder + "/Migration1to2.xcmappingmodel", "--model", package])
        #expect(shown.exitCode == 64, "\(shown)")
        #expect(shown.stderr.contains("FUNCTION($source, \"uppercaseString\")"), "\(shown)")

        // A relationship key path (Xcode's two-string form) through a relationship the source entity lacks.
        let revised = try String(
            contentsOfFile: Self.mappings(Self.revised) + "/Migration2to3ModelMapping.xcmappingmodel/xcmapping.xml",
            encoding: .utf8)
        let keyPath = revised.replacingOccurrences(
            of: "<attribute name=\"name\" type=\"string\">sections</attribute>",
            with:
                "<attribute name=\"sourcekeypath\" type=\"string\">$source.author.@distinctUnionOfSets.sections</attribute>\n        <attribute name=\"sourcemappingname\" type=\"string\">Section</attribute>\n        <attribute name=\"name\" type=\"string\">sections</attribute>"
        )
        #expect(keyPath != revised)
        try FileManager.default.createDirectory(
            atPath: directory.file("KeyPath.xcmappingmodel"), withIntermediateDirectories: true)
        _ = try directory.write("KeyPath.xcmappingmodel/xcmapping.xml", keyPath)
        let through = try runFerry([
            "mapping", "show", directory.file("KeyPath.xcmappingmodel"), "--model", Self.package(Self.revised),
        ])
        #expect(through.exitCode == 64, "\(through)")
        #expect(
            through.stderr.contains(
                "mapping model KeyPath: PostToPost gives Post.sections the value FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"Section\", $source.author.@distinctUnionOfSets.sections), but Post has no relationship 'author'"
            ),
            "\(through)")

        let notFolder = try runFerry(["migrate", store, "--model", package, "--mappings", path])
        #expect(notFolder.exitCode == 64, "\(notFolder)")
        #expect(notFolder.stderr.contains("--mappings '\(path)' is not a folder"), "\(notFolder)")
    }
}
