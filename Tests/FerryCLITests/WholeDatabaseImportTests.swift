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

    @Test(
        "a Core Data store given as a whole database is refused without opening it in place: no -wal or -shm appears beside it"
    )
    func coreDataStoreUntouched() throws {
        let dir = TemporaryDirectory()
        let model = TestPaths.packageRoot.appendingPathComponent(
            "Tests/FerryCLITests/Fixtures/coredata-reflexive/Social.xcdatamodel"
        ).path
        let data = try dir.write("c.ndjson", "{\"body\":\"a\"}\n")
        let store = dir.file("App.sqlite")
        let made = try runFerry([
            "import", data, "--store", store, "--model", model, "--entity", "SocialComment", "--layout", "coredata",
            "--quiet",
        ])
        #expect(made.exitCode == 0, "\(made)")
        // As an app leaves it: the store closed, its -wal and -shm gone.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        let before = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
        let fingerprint = try FileFingerprint.of(store)
        let refused = try runFerry(["import", store, "--store", dir.file("new.sqlite")])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(refused.stderr.contains("is a Core Data store"), "\(refused)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == before)
        #expect(try FileFingerprint.of(store) == fingerprint)
        let info = try runFerry(["store", "info", store])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted() == before, "\(info)")
    }

    @Test(
        "--rejects DIR sets each table's bad rows aside (located: table, row, column, cause, the row) and the import goes on; --max-rejects bounds them; the note of a failing import names both flags"
    )
    func rejectsPerTable() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("broken.db")
        try StoreConnection(path, create: true).executeScript(
            """
            CREATE TABLE parents(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE children(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parents(id));
            INSERT INTO parents VALUES (1, 'p'), (2, 'q');
            INSERT INTO children VALUES (1, 1), (2, 7), (3, 2), (4, 8);
            """)
        let failing = try runFerry(["import", path, "--store", dir.file("none.sqlite")])
        #expect(failing.exitCode != 0, "\(failing)")
        #expect(
            failing.stderr.contains(
                "give --rejects DIR (each table's rows in DIR/TABLE.rejects.ndjson) and --max-rejects N"),
            "\(failing.stderr)")
        #expect(!failing.stderr.contains("max_rejects:"), "no job key in this mode: \(failing.stderr)")

        let store = dir.file("new.sqlite")
        let rejects = dir.file("rejects")
        let result = try runFerry(["import", path, "--store", store, "--rejects", rejects, "--max-rejects", "2"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("every table's count checked"), "\(result)")
        let lines = try String(contentsOfFile: rejects + "/children.rejects.ndjson", encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains(#""line":2"#) == true, "the row: \(lines)")
        #expect(lines.first?.contains(#""field":"parent_id""#) == true, "the column: \(lines)")
        #expect(lines.first?.contains("no parents with id = 7") == true, "the cause: \(lines)")
        #expect(lines.first?.contains(#"\"id\":2"#) == true, "the whole row, its key too: \(lines)")
        let verified = try runFerry(["verify", store, "--checks", "all", "--quiet"])
        #expect(verified.exitCode == 0, "\(verified)")
        let children = try runFerry(["export", "--store", store, "--entity", "children", "--format", "csv", "--quiet"])
        #expect(children.stdout.split(whereSeparator: \.isNewline).count == 3, "header and two children: \(children)")

        // Over the budget: no store; a file where the folder goes: refused before anything.
        let over = try runFerry([
            "import", path, "--store", dir.file("over.sqlite"), "--rejects", rejects, "--max-rejects", "1",
        ])
        #expect(over.exitCode != 0, "\(over)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("over.sqlite")))
        let file = try dir.write("afile", "")
        let refused = try runFerry(["import", path, "--store", dir.file("x.sqlite"), "--rejects", file])
        #expect(refused.exitCode == 64, "\(refused)")
        #expect(refused.stderr.contains("is a file"), "\(refused)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "", "the file is untouched")
    }

    @Test(
        "a composite primary key over two foreign keys (Chinook's PlaylistTrack) stays a compound uniqueness constraint; indexes, defaults and NOT NULL are kept"
    )
    func compositeKeysAndIndexes() throws {
        let dir = TemporaryDirectory()
        let legacy = dir.file("chinook.db")
        try StoreConnection(legacy, create: true).executeScript(
            """
            CREATE TABLE Playlist(PlaylistId INTEGER PRIMARY KEY, Name NVARCHAR(120) NOT NULL DEFAULT 'untitled');
            CREATE TABLE Track(TrackId INTEGER PRIMARY KEY, Name NVARCHAR(200) NOT NULL, Composer TEXT,
                Milliseconds INTEGER NOT NULL DEFAULT 0, Added DATETIME DEFAULT CURRENT_TIMESTAMP);
            CREATE INDEX track_composer_name ON Track(Composer, Name);
            CREATE INDEX track_ms ON Track(Milliseconds);
            CREATE TABLE PlaylistTrack(PlaylistId INTEGER NOT NULL REFERENCES Playlist(PlaylistId),
                TrackId INTEGER NOT NULL REFERENCES Track(TrackId), Position INTEGER,
                CONSTRAINT PK_PlaylistTrack PRIMARY KEY (PlaylistId, TrackId));
            CREATE INDEX IFK_PlaylistTrackTrackId ON PlaylistTrack(TrackId);
            CREATE INDEX pt_track_position ON PlaylistTrack(TrackId, Position);
            INSERT INTO Playlist VALUES (1, 'Music'), (2, 'Movies');
            INSERT INTO Track VALUES (1, 'T1', 'AC', 100, '2024-01-01'), (2, 'T2', NULL, 200, NULL);
            INSERT INTO PlaylistTrack VALUES (1, 1, 1), (1, 2, 2), (2, 1, 1);
            """)
        let store = dir.file("new.sqlite")
        let preview = try runFerry(["import", legacy, "--store", store, "--dry-run"])
        #expect(preview.exitCode == 0, "\(preview)")
        for line in [
            "    unique:\n    - [Playlist, Track]\n", "        default: untitled\n", "        default: 0\n",
            "    indexes:\n    - attributes: [Milliseconds]\n    - attributes: [Composer, Name]\n",
            "note: Track.Added: the default CURRENT_TIMESTAMP is not a date value",
            "note: PlaylistTrack(TrackId, Position): an index over the relationship Track and other columns; not kept in the model",
        ] {
            #expect(preview.stdout.contains(line), "\(line): \(preview)")
        }
        let result = try runFerry(["import", legacy, "--store", store, "--quiet"])
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            try StoreSnapshot.texts(
                store, "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name") == [
                    ["ferry_fk_PlaylistTrack_Playlist"], ["ferry_fk_PlaylistTrack_Track"],
                    ["ferry_index_Track_Composer_Name"], ["ferry_index_Track_Milliseconds"],
                    ["ferry_unique_PlaylistTrack_Playlist_Track"], ["ferry_unique_Playlist_PlaylistId"],
                    ["ferry_unique_Track_TrackId"],
                ])
        // A later import cannot add a second row for the same playlist and track.
        try dir.write("more.csv", "PlaylistId,TrackId,Position\n2,2,5\n1,1,9\n")
        let job = try dir.write(
            "more.yml",
            """
            store: new.sqlite
            model: new.sqlite
            steps:
              - import:
                  source: more.csv
                  entity: PlaylistTrack
                  relationships:
                    Playlist: {field: PlaylistId, match: PlaylistId}
                    Track: {field: TrackId, match: TrackId}
                  rejects: more.rejects.ndjson
                  max_rejects: 5
            """)
        let more = try runFerry(["run", job])
        #expect(more.exitCode == 0, "\(more)")
        let rejected = try lines(ofFile: dir.file("more.rejects.ndjson")).map { try jsonObject(text: $0) }
        #expect(
            rejected.map { $0["reason"] as? String } == [
                "another PlaylistTrack already has the same Playlist, Track (uniqueness constraint)"
            ])
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM PlaylistTrack") == [4])
    }
}
