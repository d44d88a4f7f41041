import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Core Data's ordered many-to-many relationships through the real binary: the join table's
/// `Z_FOK_<column>` positions (COREDATA.md §2.5: `Z_34ASSETS.Z_FOK_3ASSETS` orders the assets of
/// each album) written by `ferry import --layout coredata`'s schema and nested imports, carried over by `ferry
/// migrate`, and numbered after the carried ones where the source has none.
@Suite("ferry migrate and import on Core Data stores with ordered many-to-many relationships", .serialized)
struct CoreDataOrderedManyToManyCLITests {
    /// Playlist.songs (ordered) ↔ Song.playlists (unordered); `orderedInverse` orders the inverse
    /// too; version 2 adds `Song.rating`.
    static func model(rating: Bool, orderedInverse: Bool = false) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Playlist" representedClassName="Playlist" syncable="YES">
                <attribute name="title" attributeType="String"/>
                <relationship name="songs" optional="YES" toMany="YES" ordered="YES" deletionRule="Nullify" destinationEntity="Song" inverseName="playlists" inverseEntity="Song"/>
            </entity>
            <entity name="Song" representedClassName="Song" syncable="YES">
        \(rating ? "        <attribute name=\"rating\" optional=\"YES\" attributeType=\"Integer 16\" defaultValueString=\"0\" usesScalarValueType=\"YES\"/>\n" : "")        <attribute name="title" attributeType="String"/>
                <relationship name="playlists" optional="YES" toMany="YES"\(orderedInverse ? " ordered=\"YES\"" : "") deletionRule="Nullify" destinationEntity="Playlist" inverseName="songs" inverseEntity="Playlist"/>
            </entity>
        </model>
        """
    }

    /// A package with versions `Music` and `Music 2` (current), and a `Music` store whose
    /// playlists hold songs in an order that is not their key order.
    static func library(
        in directory: TemporaryDirectory, orderedInverse: Bool = false, positions: [Int?] = [3, 1, 2, 1]
    ) throws -> (package: String, store: String) {
        let package = directory.file("Music.xcdatamodeld")
        func write(_ version: String, _ contents: String) throws {
            try CoreDataHierarchyMigrateCLITests.writeVersion(
                version, contents, package: "Music.xcdatamodeld", in: directory)
        }
        try write("Music", model(rating: false))
        try CoreDataHierarchyMigrateCLITests.selectCurrent("Music", in: package)
        let store = directory.file("Music.sqlite")
        let playlists = try directory.write("playlists.csv", "title\nMorning\nEvening\n")
        let created = try runFerry([
            "import", playlists, "--store", store, "--model", package, "--entity", "Playlist", "--layout",
            "coredata", "--quiet",
        ])
        #expect(created.exitCode == 0, "\(created)")
        let connection = try Connection(path: store, create: false)
        let joinTable = try #require(
            try connection.rows(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')"
            )
            .first?.first?.text)
        #expect(joinTable == "Z_1SONGS")
        #expect(
            try connection.rows("SELECT name FROM pragma_table_info('Z_1SONGS') ORDER BY cid").compactMap {
                $0.first?.text
            } == ["Z_1PLAYLISTS", "Z_2SONGS", "Z_FOK_2SONGS"])
        let values = positions.map { $0.map(String.init) ?? "NULL" }
        try connection.executeScript(
            """
            INSERT INTO ZSONG (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (1, 2, 1, 'Aria'), (2, 2, 1, 'Blues'), (3, 2, 1, 'Coda');
            INSERT INTO Z_1SONGS (Z_1PLAYLISTS, Z_2SONGS, Z_FOK_2SONGS) VALUES
              (1, 1, \(values[0])), (1, 2, \(values[1])), (1, 3, \(values[2])), (2, 3, \(values[3]));
            UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Song';
            """)
        try write("Music 2", model(rating: true, orderedInverse: orderedInverse))
        try CoreDataHierarchyMigrateCLITests.selectCurrent("Music 2", in: package)
        return (package, store)
    }

    static let links = "SELECT Z_1PLAYLISTS, Z_2SONGS, Z_FOK_2SONGS FROM Z_1SONGS ORDER BY 1, 3"

    @Test("an inferred step carries every link with its position: Morning plays Blues, Coda, Aria as before")
    func positionsCarried() throws {
        let directory = TemporaryDirectory("ferry-cd-ordered")
        let (package, store) = try Self.library(in: directory)
        let result = try runFerry(["migrate", store, "--model", package, "--checksums", "--no-backup"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(store, "SELECT count(*) FROM pragma_table_info('ZSONG') WHERE name = 'ZRATING'")
                == [["1"]])
        #expect(
            try StoreSnapshot.texts(store, Self.links) == [
                ["1", "2", "1"], ["1", "3", "2"], ["1", "1", "3"], ["2", "3", "1"],
            ])
        let verify = try runFerry(["verify", store, "--model", package])
        #expect(verify.exitCode == 0, "\(verify)")

        // A link of the ordered relationship without a position fails verification, naming it.
        let connection = try Connection(path: store, create: false)
        try connection.execute("UPDATE Z_1SONGS SET Z_FOK_2SONGS = NULL WHERE Z_2SONGS = 1")
        let broken = try runFerry(["verify", store, "--model", package])
        #expect(broken.exitCode == 3, "\(broken)")
        #expect(
            (broken.stdout + broken.stderr).contains(
                "1 link of an ordered relationship without a position in Z_1SONGS.Z_FOK_2SONGS"), "\(broken)")
    }

    @Test(
        "links without a position (NULL in the source) follow the carried ones in key order; an inverse that becomes ordered gets its own Z_FOK_ column, numbered"
    )
    func positionsNumbered() throws {
        let directory = TemporaryDirectory("ferry-cd-ordered")
        let (package, store) = try Self.library(in: directory, orderedInverse: true, positions: [nil, 1, nil, nil])
        let result = try runFerry(["migrate", store, "--model", package, "--no-backup"])
        #expect(result.exitCode == 0, "\(result)")
        // Blues keeps 1; Aria and Coda follow in key order; Evening's only song is 1.
        #expect(
            try StoreSnapshot.texts(store, Self.links) == [
                ["1", "2", "1"], ["1", "1", "2"], ["1", "3", "3"], ["2", "3", "1"],
            ])
        // Song.playlists is ordered now: each song's playlists, in key order.
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT Z_2SONGS, Z_1PLAYLISTS, Z_FOK_1PLAYLISTS FROM Z_1SONGS ORDER BY 1, 2")
                == [["1", "1", "1"], ["2", "1", "1"], ["3", "1", "1"], ["3", "2", "2"]])
    }

    @Test(
        "a nested import into a new Core Data store writes each playlist's songs with their Z_FOK_ positions, in the order of the array; verify passes"
    )
    func nestedImportPositions() throws {
        let directory = TemporaryDirectory("ferry-cd-ordered")
        let package = directory.file("Music.xcdatamodeld")
        try CoreDataHierarchyMigrateCLITests.writeVersion(
            "Music", Self.model(rating: false), package: "Music.xcdatamodeld", in: directory)
        try CoreDataHierarchyMigrateCLITests.selectCurrent("Music", in: package)
        _ = try directory.write(
            "playlists.json",
            #"[{"title": "Morning", "songs": [{"title": "Coda"}, {"title": "Aria"}, {"title": "Blues"}]}, {"title": "Evening", "songs": [{"title": "Dusk"}]}]"#
        )
        let job = try directory.write(
            "job.yml",
            """
            store: {path: Music.sqlite, layout: coredata}
            model: Music.xcdatamodeld
            steps:
              - import: {source: playlists.json, entity: Playlist, nested: true}

            """)
        let result = try runFerry(["run", job, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        let store = directory.file("Music.sqlite")
        #expect(
            try StoreSnapshot.texts(
                store,
                "SELECT p.ZTITLE, s.ZTITLE, l.Z_FOK_2SONGS FROM Z_1SONGS l JOIN ZPLAYLIST p ON p.Z_PK = l.Z_1PLAYLISTS JOIN ZSONG s ON s.Z_PK = l.Z_2SONGS ORDER BY p.Z_PK, l.Z_FOK_2SONGS"
            ) == [
                ["Morning", "Coda", "1"], ["Morning", "Aria", "2"], ["Morning", "Blues", "3"],
                ["Evening", "Dusk", "1"],
            ])
        let verify = try runFerry(["verify", store, "--model", package])
        #expect(verify.exitCode == 0, "\(verify)")
    }
}
