import FerryTestSupport
import Foundation
import Testing

/// `ferry import legacy.db --store new.sqlite`: every table of a SQLite database, the model
/// inferred from its schema (keys, foreign keys as relationships, unique indexes, NOT NULL),
/// referenced tables first, through the real binary; and the refusals.
@Suite("ferry import of a whole SQLite database with an inferred model")
struct WholeDatabaseImportTests {
    /// A music database: albums reference artists (declared before them), tracks reference
    /// albums, employees reference themselves.
    static func music(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.file("music.db")
        try StoreConnection(path, create: true).executeScript(
            """
            CREATE TABLE tracks(TrackId INTEGER PRIMARY KEY, Name TEXT NOT NULL, album_id INTEGER REFERENCES albums(AlbumId), price NUMERIC(10,2), added DATETIME);
            CREATE TABLE albums(AlbumId INTEGER PRIMARY KEY, Title NVARCHAR(160) NOT NULL, ArtistId INTEGER NOT NULL REFERENCES artists(ArtistId));
            CREATE TABLE artists(ArtistId INTEGER PRIMARY KEY, Name NVARCHAR(120), code TEXT, region TEXT);
            CREATE UNIQUE INDEX artist_code ON artists(code, region);
            CREATE TABLE employees(id INTEGER PRIMARY KEY, name TEXT, manager_id INTEGER REFERENCES employees(id), email TEXT UNIQUE);
            INSERT INTO artists VALUES (1, 'AC/DC', 'acdc', 'au'), (2, 'Accept', 'acc', 'de');
            INSERT INTO albums VALUES (1, 'For Those', 1), (2, 'Balls', 2), (3, 'Restless', 2);
            INSERT INTO employees VALUES (1, 'Boss', NULL, 'b@x'), (2, 'Ann', 1, 'a@x'), (3, 'Zed', 2, NULL);
            INSERT INTO tracks VALUES (1, 'T1', 1, 0.99, '2024-01-01'), (2, 'T2', 3, 1.99, NULL), (3, 'T3', NULL, NULL, NULL);
            """)
        return path
    }

    @Test(
        "every table: keys, relationships with inverses, unique indexes, NOT NULL; referenced tables first; counts checked"
    )
    func importsEveryTable() throws {
        let dir = TemporaryDirectory()
        let music = try Self.music(dir)
        let before = try FileFingerprint.of(music)
        let store = dir.file("new.sqlite")
        let result = try runFerry(["import", music, "--store", store])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            result.stdout.contains("inferred albums: AlbumId int64, Title string, Artist → artists, tracks → [tracks]"),
            "\(result)")
        #expect(
            result.stdout.contains(
                "inferred tracks: TrackId int64, Name string, price decimal, added date, album → albums"), "\(result)")
        #expect(
            result.stdout.contains("note: employees.manager_id → employees: the table references itself"), "\(result)")
        let order = ["artists", "albums", "employees", "tracks"].map {
            result.stdout.range(of: "import \($0) from")?.lowerBound
        }
        #expect(
            order.allSatisfy { $0 != nil } && order == order.sorted { $0! < $1! },
            "artists before albums before tracks: \(result)")
        #expect(result.stdout.contains("imported 4 tables of \(music) into \(store): 11 objects"), "\(result)")
        #expect(
            try StoreSnapshot.texts(
                store,
                "SELECT t.Name, a.Title, r.Name FROM tracks t LEFT JOIN albums a ON a.ferry_pk = t.album LEFT JOIN artists r ON r.ferry_pk = a.Artist ORDER BY t.TrackId"
            ) == [
                ["T1", "For Those", "AC/DC"], ["T2", "Restless", "Accept"], ["T3", nil, nil],
            ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT price, added FROM tracks ORDER BY TrackId") == [
                ["0.99", "2024-01-01T00:00:00.000Z"], ["1.99", nil], [nil, nil],
            ])
        #expect(
            try StoreSnapshot.texts(store, "SELECT name, manager_id FROM employees ORDER BY id") == [
                ["Boss", nil], ["Ann", "1"], ["Zed", "2"],
            ])
        let verify = try runFerry(["verify", store, "--quiet"])
        #expect(verify.exitCode == 0, "\(verify)")
        #expect(try FileFingerprint.of(music) == before)
        // The inferred constraints hold in the new store: a second AC/DC code in the same region is refused.
        let duplicate = try dir.write("dup.csv", "ArtistId,Name,code,region\n9,Other,acdc,au\n")
        let refused = try runFerry(["import", duplicate, "--store", store, "--entity", "artists"])
        #expect(refused.exitCode == 2, "\(refused)")
        #expect(
            refused.stderr.contains("another artists already has the same code, region (uniqueness constraint)"),
            "the unique index: \(refused)")
    }

    @Test(
        "a dry run prints the model as YAML and creates nothing; refusals: an existing store, a ferry store, import flags"
    )
    func dryRunAndRefusals() throws {
        let dir = TemporaryDirectory()
        let music = try Self.music(dir)
        let store = dir.file("new.sqlite")
        let dry = try runFerry(["import", music, "--store", store, "--dry-run"])
        #expect(dry.exitCode == 0, "\(dry)")
        #expect(dry.stdout.contains("entities:\n  albums:\n    attributes:"), "\(dry)")
        #expect(dry.stdout.contains("destination: artists"), "\(dry)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == ["music.db"],
            "a dry run leaves nothing")

        #expect(try runFerry(["import", music, "--store", store, "--quiet"]).exitCode == 0)
        let kept = try FileFingerprint.of(store)
        let again = try runFerry(["import", music, "--store", store])
        #expect(again.exitCode == 64, "\(again)")
        #expect(again.stderr.contains("creates a new store"), "\(again)")
        #expect(try FileFingerprint.of(store) == kept)
        let ferryStore = try runFerry(["import", store, "--store", dir.file("other.sqlite")])
        #expect(ferryStore.exitCode == 64, "\(ferryStore)")
        #expect(ferryStore.stderr.contains("ferry copy"), "\(ferryStore)")
        let flags = try runFerry(["import", music, "--store", dir.file("x.sqlite"), "--entity", "x"])
        #expect(flags.exitCode == 64, "\(flags)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.sqlite")))
    }

    @Test("a row whose reference is missing fails the import, and no store is left behind")
    func failedTableLeavesNoStore() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("broken.db")
        try StoreConnection(path, create: true).executeScript(
            """
            CREATE TABLE parents(id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE children(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parents(id));
            INSERT INTO parents VALUES (1, 'p');
            INSERT INTO children VALUES (1, 1), (2, 7);
            """)
        let store = dir.file("new.sqlite")
        let result = try runFerry(["import", path, "--store", store])
        #expect(result.exitCode != 0, "\(result)")
        #expect(result.stderr.contains("parent: no parents with id = 7"), "\(result)")
        #expect(result.stderr.contains("broken.db (table children)"), "the location names the table: \(result)")
        #expect(!FileManager.default.fileExists(atPath: store))
        #expect(
            !(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).contains {
                $0.contains("ferry-rebuild")
            }))
    }
}
