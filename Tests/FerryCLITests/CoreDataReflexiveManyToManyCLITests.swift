import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// A many-to-many that is its own inverse (`SocialComment.comments` ↔ `comments`, from the
/// 3lvis Sync library's `Social` model): Core Data's join table would name both of its columns
/// `Z_1COMMENTS`, and the second takes the collision suffix (`Z_1COMMENTS1`, COREDATA.md §2.4).
/// Before, creating such a store failed with "duplicate column name: Z_1COMMENTS".
@Suite("Core Data stores: a many-to-many that is its own inverse (CLI)")
struct CoreDataReflexiveManyToManyCLITests {
    static let model = TestPaths.packageRoot.appendingPathComponent(
        "Tests/FerryCLITests/Fixtures/coredata-reflexive/Social.xcdatamodel"
    ).path

    @Test(
        "a Core Data store is created with a join table of two distinct columns; nested links are written, read back and verified",
        arguments: ["coredata", "ferry"])
    func reflexiveLinks(layout: String) throws {
        let directory = TemporaryDirectory()
        let store = directory.file("social.sqlite")
        let data = try directory.write(
            "comments.ndjson",
            """
            {"body":"a","comments":[{"body":"b"},{"body":"c"}]}
            {"body":"d","comments":[{"body":"a"}]}

            """)
        let imported = try runFerry([
            "import", data, "--store", store, "--model", Self.model, "--entity", "SocialComment", "--layout", layout,
            "--nested", "--quiet",
        ])
        #expect(imported.exitCode == 0, "\(imported)")
        let verified = try runFerry(["verify", store, "--model", Self.model, "--checks", "all", "--quiet"])
        #expect(verified.exitCode == 0, "\(verified)")
        let exported = try runFerry([
            "export", "--store", store, "--model", Self.model, "--entity", "SocialComment", "--format", "csv",
            "--fields", "body", "--sort", "body", "--quiet",
        ])
        // No key: the "a" nested in "d" is an object of its own.
        #expect(exported.stdout == "body\r\na\r\na\r\nb\r\nc\r\nd\r\n", "\(exported)")
        guard layout == "coredata" else { return }
        let connection = try Connection(path: store, readOnly: true, create: false)
        let columns = try connection.rows("SELECT name FROM pragma_table_info('Z_1COMMENTS') ORDER BY cid").compactMap(
            \.first?.text)
        #expect(columns == ["Z_1COMMENTS", "Z_1COMMENTS1"])
        let links = try connection.rows(
            """
            SELECT o.ZBODY, t.ZBODY FROM Z_1COMMENTS j JOIN ZSOCIALCOMMENT o ON o.Z_PK = j.Z_1COMMENTS
            JOIN ZSOCIALCOMMENT t ON t.Z_PK = j.Z_1COMMENTS1 ORDER BY 1, 2
            """
        ).map { $0.compactMap(\.text).joined(separator: "→") }
        #expect(links == ["a→b", "a→c", "d→a"])
    }
}
