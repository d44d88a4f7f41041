import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Imports into PostgreSQL stores that write records in batches (COPY into a staging table, then
/// one `INSERT … SELECT`) compared with the record-by-record imports into SQLite: duplicates
/// within one batch, references to records of the same import, batches spanning files and
/// flushes, the reject budget failing in the middle of a batch.
@Suite(
    "PostgreSQL staged imports (CLI)", .serialized,
    .enabled(if: PostgresTestServer.shouldRun, Comment(rawValue: PostgresTestServer.skipReason)))
struct PostgresStagedImportCLITests {
    /// Employees with two required unique attributes, an optional unique one, and a manager
    /// among themselves.
    static let model = """
        version: "1"
        entities:
          Employee:
            attributes:
              id: {type: int64, optional: false, unique: true}
              email: {type: string, optional: false, unique: true}
              nick: {type: string, optional: true, unique: true}
              name: {type: string, optional: false, min_length: 1}
            relationships:
              manager: {destination: Employee, inverse: reports, optional: true}
              reports: {destination: Employee, to_many: true, inverse: manager}
        """

    /// A job importing `source` into Employee with the given conflict policy and batching.
    static func job(
        source: String, policy: String, batch: Int?, maxRejects: String = "1000", manager: Bool = true
    ) -> String {
        """
        job: employees
        store: {path: "${store}"}
        model: {path: model.yml}
        steps:
          - import:
              source: \(source)
              entity: Employee
        \(manager ? "      relationships:\n        manager: {field: boss, match: id}\n" : "")\
              null: [""]
              on_conflict: \(policy)
              rejects: ${out}/employees.rejects.ndjson
              max_rejects: \(maxRejects)
        \(batch.map { "      atomic: false\n      batch_size: \($0)\n" } ?? "")
        """
    }

    /// Runs `job.yml` into a SQLite store under `sq/` and into `url` (rejects under `pg/`) and
    /// checks that both give the same exit code, report lines, rejects file and employees.
    /// Returns the PostgreSQL run's output.
    @discardableResult
    static func compare(
        _ directory: TemporaryDirectory, url: String, round: String, reports: Bool = false
    ) throws -> String {
        var outputs: [String] = []
        var codes: [Int32] = []
        for (store, folder) in [("sq/store.sqlite", "sq"), (url, "pg")] {
            try FileManager.default.createDirectory(atPath: directory.file(folder), withIntermediateDirectories: true)
            let result = try runFerry(
                ["run", "job.yml", "--param", "store=\(store)", "--param", "out=\(folder)"]
                    + (reports ? ["--report", "\(folder)/report.json"] : []),
                cwd: directory.path, timeout: .seconds(300))
            outputs.append(result.stdout + result.stderr)
            codes.append(result.exitCode)
        }
        #expect(codes[1] == codes[0], "\(round): \(outputs[1])")
        let lines = outputs.map(PostgresImportCLITests.countLines)
        #expect(!lines[0].isEmpty)
        #expect(lines[1] == lines[0], "\(round)")
        let left = try String(contentsOfFile: directory.file("sq/employees.rejects.ndjson"), encoding: .utf8)
        let right = try String(contentsOfFile: directory.file("pg/employees.rejects.ndjson"), encoding: .utf8)
        #expect(right == left, "\(round): rejects")
        if reports {
            /// The per-file counts of the step (timings and paths left out).
            func files(_ folder: String) throws -> String {
                let data = try Data(contentsOf: URL(fileURLWithPath: directory.file("\(folder)/report.json")))
                let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                let step = try #require((report["steps"] as? [[String: Any]])?.first)
                let files = try #require(step["files"] as? [[String: Any]])
                return files.map { file in
                    ["file", "read", "inserted", "skipped", "rejected"].map { "\($0)=\(file[$0] ?? "-")" }.joined(
                        separator: " ")
                }.joined(separator: "\n")
            }
            #expect(try files("pg") == files("sq"), "\(round): per-file counts")
        }
        let export = ["export", "--entity", "Employee", "--format", "csv", "--quiet", "--sort", "id"]
        let expected = try runFerry(export + ["--store", "sq/store.sqlite"], cwd: directory.path)
        let actual = try runFerry(export + ["--store", url], cwd: directory.path)
        #expect(expected.exitCode == 0, "\(expected.stderr)")
        #expect(actual.stdout == expected.stdout, "\(round): employees")
        return outputs[1]
    }

    @Test(
        "duplicates within one batch and references to records of the same import give SQLite's outcomes, with on_conflict error and keep, atomic or in batches"
    )
    func inBatchDuplicatesAndReferences() throws {
        // Row by row: 1 is inserted, its id again is rejected, 2 takes the e-mail the rejected
        // row had, 3 collides with 1's e-mail, the fifth row with both 1 and 2 (SQLite names one);
        // nicks collide only when present; managers are earlier records (found), later ones
        // (not found yet), the record itself (not found), or missing.
        let rows = """
            id,email,nick,name,boss
            1,a@x,,Ann,
            1,b@x,,Dup id,
            2,b@x,ann,Bob,1
            3,a@x,,Dup email,2
            2,a@x,,Both,
            4,d@x,,Dan,2
            5,e@x,ann,Dup nick,1
            6,f@x,,Fay,6
            7,g@x,,Gus,8
            8,h@x,,Hal,4
            9,i@x,,,8
            10,j@x,,Jo,9
            11,k@x,,Kim,3
            """ + "\n"
        for policy in ["error", "keep"] {
            for batch in [nil, 1, 3] {
                let directory = TemporaryDirectory()
                let (url, drop) = try PostgresImportCLITests.freshStore("staged")
                defer { drop() }
                try directory.write("model.yml", Self.model)
                try directory.write("employees.csv", rows)
                try directory.write("job.yml", Self.job(source: "employees.csv", policy: policy, batch: batch))
                let round = "\(policy), batch \(batch.map(String.init) ?? "none")"
                try Self.compare(directory, url: url, round: round)
                let rejects = try String(contentsOfFile: directory.file("pg/employees.rejects.ndjson"), encoding: .utf8)
                #expect(rejects.contains("manager: no Employee with id = 6"), "\(round): \(rejects)")
                #expect(rejects.contains("manager: no Employee with id = 8"), "\(round)")
                #expect(rejects.contains("name: ") || rejects.contains("name is required"), "\(round)")
                if policy == "error" {
                    #expect(
                        rejects.contains("another Employee already has the same id (uniqueness constraint)"), "\(round)"
                    )
                    #expect(
                        rejects.contains("another Employee already has the same nick (uniqueness constraint)"),
                        "\(round)")
                }
                // Run again: every record now collides with a stored object (or its reference fails).
                try Self.compare(directory, url: url, round: round + ", again")
            }
        }
    }

    @Test(
        "a large import spanning several files and flushes keeps per-file counts, rejects and objects as on SQLite, and a reject budget exceeded in the middle of a batch fails the step at the same record"
    )
    func largeImportAcrossFilesAndFlushes() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try PostgresImportCLITests.freshStore("stagedbig")
        defer { drop() }
        try directory.write("model.yml", Self.model)
        // 12,000 + 14,000 records: every 997th repeats an earlier id, every 1,009th an earlier
        // e-mail, every 1,013th has an empty (required) name.
        for (file, range) in [("a.csv", 1...12_000), ("b.csv", 12_001...26_000)] {
            var text = "id,email,nick,name,boss\n"
            for n in range {
                let id = n % 997 == 0 ? n - 500 : n
                let email = n % 1009 == 0 ? "\(n - 700)@x" : "\(n)@x"
                let name = n % 1013 == 0 ? "" : "P\(n)"
                text += "\(id),\(email),,\(name),\n"
            }
            try directory.write(file, text)
        }
        try directory.write("job.yml", Self.job(source: "[a.csv, b.csv]", policy: "error", batch: nil, manager: false))
        try Self.compare(directory, url: url, round: "atomic", reports: true)
        // Each round into new stores.
        try FileManager.default.removeItem(atPath: directory.file("sq"))
        let drop2 = try PostgresImportCLITests.freshStore("stagedbig2")
        defer { drop2.drop() }
        try directory.write("job.yml", Self.job(source: "[a.csv, b.csv]", policy: "keep", batch: 5_000, manager: false))
        try Self.compare(directory, url: drop2.url, round: "keep, batches of 5,000", reports: true)
        // The budget runs out at the 41st reject, in the second file: the step fails there.
        try FileManager.default.removeItem(atPath: directory.file("sq"))
        let drop3 = try PostgresImportCLITests.freshStore("stagedbig3")
        defer { drop3.drop() }
        try directory.write(
            "job.yml", Self.job(source: "[a.csv, b.csv]", policy: "error", batch: nil, maxRejects: "40", manager: false)
        )
        let output = try Self.compare(directory, url: drop3.url, round: "budget")
        #expect(output.contains("more than 40 records were rejected"), "\(output)")
        #expect(output.contains("b.csv:"), "the 41st reject is in the second file: \(output)")
    }
}

extension PostgresStagedImportCLITests {
    /// 120,000 employees, every 1,000th repeating an earlier id (rejected).
    static func employeesWithRepeats() -> String {
        var text = "id,email,nick,name,boss\n"
        for n in 1...120_000 {
            text += "\(n % 1000 == 0 ? n - 10 : n),\(n)@x,,P\(n),\n"
        }
        return text
    }

    /// Kills `process` (importing employees into `url`) once a batch has committed (its
    /// checkpoint is in the store's schema), and checks that part of the rows were.
    static func killAfterABatch(_ process: FerryProcess, url: String) throws {
        let count: (String) -> Int64 = { table in
            ((try? Store.inspectionSession(at: url).session.scalar("SELECT count(*) FROM \(table)", [])?.int64) ?? nil)
                ?? 0
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning && ContinuousClock.now < deadline
            && !(count("ferry_import_progress") > 0 && count("\"Employee\"") > 0)
        {
            Thread.sleep(forTimeInterval: 0.05)
        }
        process.kill()
        let killed = try process.wait()
        try #require(
            killed.wasSignaled, "the import ended before it could be killed: \(killed.stdout) \(killed.stderr)")
        let before = count("\"Employee\"")
        #expect(before > 0 && before < 119_880, "\(before) rows committed before the kill")
    }

    @Test(
        "a job (ferry run) whose atomic: false import into PostgreSQL is killed after some batches resumes with ferry run --resume and ends as an uninterrupted run into SQLite"
    )
    func killedRunResumes() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try PostgresImportCLITests.freshStore("runresume")
        defer { drop() }
        try directory.write("model.yml", Self.model)
        try directory.write("people.csv", Self.employeesWithRepeats())
        try directory.write(
            "job.yml", Self.job(source: "people.csv", policy: "error", batch: 5000, manager: false))
        let clean = try runFerry(
            ["run", "job.yml", "--param", "store=clean.sqlite", "--param", "out=sq"], cwd: directory.path,
            timeout: .seconds(300))
        #expect(clean.exitCode == 0, "\(clean.stderr)")
        try Self.killAfterABatch(
            try FerryProcess(["run", "job.yml", "--param", "store=\(url)", "--param", "out=pg"], cwd: directory.path),
            url: url)
        let resumed = try runFerry(
            ["run", "job.yml", "--param", "store=\(url)", "--param", "out=pg", "--resume"], cwd: directory.path,
            timeout: .seconds(300))
        #expect(resumed.exitCode == 0, "\(resumed.stdout) \(resumed.stderr)")
        #expect(
            try String(contentsOfFile: directory.file("pg/employees.rejects.ndjson"), encoding: .utf8).replacing(
                "pg/", with: "")
                == String(contentsOfFile: directory.file("sq/employees.rejects.ndjson"), encoding: .utf8).replacing(
                    "sq/", with: ""))
        let export = ["export", "--entity", "Employee", "--format", "csv", "--quiet", "--sort", "id"]
        let expected = try runFerry(export + ["--store", "clean.sqlite"], cwd: directory.path)
        let actual = try runFerry(export + ["--store", url], cwd: directory.path)
        #expect(expected.stdout.split(whereSeparator: \.isNewline).count == 119_881)
        #expect(actual.stdout == expected.stdout)
    }

    @Test(
        "an atomic: false import into PostgreSQL killed with SIGKILL after some batches resumes with --resume from its checkpoint (kept in the store's schema) and ends with the store, counts and rejects file of an uninterrupted SQLite import"
    )
    func killedImportResumes() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try PostgresImportCLITests.freshStore("resume")
        defer { drop() }
        try directory.write("model.yml", Self.model)
        // Every 1,000th record repeats an earlier id: rejected, in both runs.
        try directory.write("people.csv", Self.employeesWithRepeats())
        let options = [
            "--model", "model.yml", "--entity", "Employee", "--atomic", "false", "--batch-size", "5000",
            "--max-rejects", "1000",
        ]
        let clean = try runFerry(
            ["import", "people.csv", "--store", "clean.sqlite", "--rejects", "clean.ndjson"] + options,
            cwd: directory.path, timeout: .seconds(300))
        #expect(clean.exitCode == 0, "\(clean.stderr)")
        let started = try FerryProcess(
            ["import", "people.csv", "--store", url, "--rejects", "pg.ndjson"] + options, cwd: directory.path)
        try Self.killAfterABatch(started, url: url)
        let resumed = try runFerry(
            ["import", "people.csv", "--store", url, "--rejects", "pg.ndjson", "--resume"] + options,
            cwd: directory.path, timeout: .seconds(300))
        #expect(resumed.exitCode == 0, "\(resumed.stderr)")
        #expect(
            PostgresImportCLITests.countLines((resumed.stdout + resumed.stderr).replacing("pg.ndjson", with: "R"))
                == PostgresImportCLITests.countLines((clean.stdout + clean.stderr).replacing("clean.ndjson", with: "R"))
        )
        #expect(
            try String(contentsOfFile: directory.file("pg.ndjson"), encoding: .utf8).replacing("pg.ndjson", with: "")
                == String(contentsOfFile: directory.file("clean.ndjson"), encoding: .utf8).replacing(
                    "clean.ndjson", with: ""))
        let export = ["export", "--entity", "Employee", "--format", "csv", "--quiet", "--sort", "id"]
        let expected = try runFerry(export + ["--store", "clean.sqlite"], cwd: directory.path)
        let actual = try runFerry(export + ["--store", url], cwd: directory.path)
        #expect(expected.stdout.split(whereSeparator: \.isNewline).count == 119_881)
        #expect(actual.stdout == expected.stdout)
        #expect(
            try Store.inspectionSession(at: url).session.scalar("SELECT count(*) FROM ferry_import_progress", [])?.int64
                == 0, "the checkpoint is cleared")
    }
}

extension PostgresStagedImportCLITests {
    @Test(
        "a legacy SQLite database converts to PostgreSQL in one command (ferry import legacy.db --store postgresql://…): the inferred model, every table, the objects of the same conversion into SQLite; an existing store is refused, a failed conversion leaves no schema"
    )
    func wholeDatabaseIntoPostgreSQL() throws {
        let directory = TemporaryDirectory()
        let legacy = try WholeDatabaseImportTests.music(directory)
        let (url, drop) = try PostgresImportCLITests.freshStore("legacy")
        defer { drop() }
        let schema = try #require(url.split(separator: "schema=").last.map(String.init))
        let sqlite = try runFerry(["import", legacy, "--store", directory.file("new.sqlite")])
        #expect(sqlite.exitCode == 0, "\(sqlite.stderr)")
        let postgres = try runFerry(["import", legacy, "--store", url])
        #expect(postgres.exitCode == 0, "\(postgres.stderr)")
        #expect(postgres.stdout.contains("imported 4 tables of"), "\(postgres.stdout)")
        #expect(PostgresImportCLITests.countLines(postgres.stdout) == PostgresImportCLITests.countLines(sqlite.stdout))
        for entity in ["artists", "albums", "tracks", "employees"] {
            let export = ["export", "--entity", entity, "--format", "ndjson", "--quiet"]
            let expected = try runFerry(export + ["--store", directory.file("new.sqlite")])
            let actual = try runFerry(export + ["--store", url])
            #expect(expected.exitCode == 0, "\(expected.stderr)")
            #expect(!expected.stdout.isEmpty)
            #expect(actual.stdout == expected.stdout, "\(entity)")
        }
        #expect(try PostgresImportCLITests.schemas(url, prefix: schema) == [schema], "no work schema stays")
        let again = try runFerry(["import", legacy, "--store", url])
        #expect(again.exitCode == 64, "\(again.stderr)")
        #expect(again.stderr.contains("creates a new store, and 'postgresql://"), "\(again.stderr)")

        // A dangling reference fails the conversion: no store, no work schema.
        let broken = directory.file("broken.db")
        try StoreConnection(broken, create: true).executeScript(
            """
            CREATE TABLE parents(id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE children(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parents(id));
            INSERT INTO parents VALUES (1, 'p');
            INSERT INTO children VALUES (1, 1), (2, 7);
            """)
        let (brokenURL, dropBroken) = try PostgresImportCLITests.freshStore("legacybroken")
        defer { dropBroken() }
        let brokenSchema = try #require(brokenURL.split(separator: "schema=").last.map(String.init))
        let failed = try runFerry(["import", broken, "--store", brokenURL])
        #expect(failed.exitCode != 0)
        #expect(failed.stderr.contains("parent: no parents with id = 7"), "\(failed.stderr)")
        #expect(try PostgresImportCLITests.schemas(brokenURL, prefix: brokenSchema).isEmpty)
    }
}

extension PostgresStagedImportCLITests {
    @Test(
        "on_conflict update and replace write set-based on PostgreSQL with SQLite's record-by-record outcomes: records of one batch updating what an earlier one inserted, freeing or taking unique values, matching through another constraint; atomic or in batches of 1 and 3; JSON records supplying some attributes"
    )
    func updateAndReplaceInBatches() throws {
        let base = """
            id,email,nick,name,boss
            1,a@x,ann,Ann,
            2,b@x,bob,Bob,1
            3,c@x,,Cy,1
            4,d@x,dee,Dee,
            """ + "\n"
        // Row by row: 5 is inserted, then updated; 1 cannot take c@x while 3 holds it, 3 frees
        // it, then 1 takes it; 6 takes a@x, which 1 freed; 7 finds Bob by his e-mail and renumbers
        // him, so id 2 is free again; 8 finds Dee by her nick; 9 lacks its required e-mail; 4 is
        // new (Dee is 8 now); 10 breaks a rule; 8 again updates Dee; 11 wants Cy's new e-mail
        // (collides); 13 finds 12 by m@x and renumbers it; then 12 finds Eve by her nick.
        let changes = """
            id,email,nick,name,boss
            5,e@x,,Eve,
            5,e2@x,eve,Eve2,1
            1,c@x,,Ann2,
            3,z@x,,Cy2,
            1,c@x,ann,Ann3,3
            6,a@x,,Six,
            7,b@x,,Seven,4
            2,q@x,bob,Two,
            8,h@x,dee,Hal,
            9,,,NoEmail,
            4,i@x,,Dup,
            10,j@x,,,
            8,k@x,,HalAgain,7
            11,z@x,,Eleven,
            12,m@x,,Twelve,
            13,m@x,,Thirteen,
            12,n@x,eve,Twelve2,
            """ + "\n"
        // Records missing attributes: update leaves them, replace resets them (a required
        // e-mail reset to nothing is rejected).
        let partial = """
            {"id": 1, "name": "Ann4"}
            {"id": 20, "email": "t@x", "name": "Twenty"}
            {"id": 20, "nick": "tw"}
            {"email": "k@x", "name": "Kay", "nick": null}
            {"id": 3, "email": null}
            """ + "\n"
        for policy in ["update", "replace"] {
            for batch in [nil, 1, 3] {
                let directory = TemporaryDirectory()
                let (url, drop) = try PostgresImportCLITests.freshStore("merge")
                defer { drop() }
                let round = "\(policy), batch \(batch.map(String.init) ?? "none")"
                try directory.write("model.yml", Self.model)
                try directory.write("base.csv", base)
                try directory.write("changes.csv", changes)
                try directory.write("partial.ndjson", partial)
                try directory.write("job.yml", Self.job(source: "base.csv", policy: "error", batch: batch))
                try Self.compare(directory, url: url, round: round + ": base")
                try directory.write("job.yml", Self.job(source: "changes.csv", policy: policy, batch: batch))
                let output = try Self.compare(directory, url: url, round: round)
                #expect(output.contains("updated"), "\(round): \(output)")
                let rejects = try String(contentsOfFile: directory.file("pg/employees.rejects.ndjson"), encoding: .utf8)
                #expect(
                    rejects.contains("another Employee already has the same email (uniqueness constraint)"),
                    "\(round): \(rejects)")
                #expect(rejects.contains("email is required"), "\(round): \(rejects)")
                try Self.compare(directory, url: url, round: round + ", again")
                try directory.write(
                    "job.yml", Self.job(source: "partial.ndjson", policy: policy, batch: batch, manager: false))
                try Self.compare(directory, url: url, round: round + ", partial records")
            }
        }
    }

    @Test("on_conflict update without a uniqueness constraint among the columns is refused on PostgreSQL as on SQLite")
    func updateWithoutKeyRefused() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try PostgresImportCLITests.freshStore("mergenokey")
        defer { drop() }
        try directory.write("model.yml", Self.model)
        try directory.write("names.csv", "name\nAnn\n")
        for store in [directory.file("s.sqlite"), url] {
            let result = try runFerry(
                [
                    "import", "names.csv", "--store", store, "--model", "model.yml", "--entity", "Employee",
                    "--on-conflict", "update",
                ], cwd: directory.path)
            #expect(result.exitCode == 64, "\(store): \(result.stderr)")
            #expect(
                result.stderr.contains(
                    "on_conflict: update needs the record to supply every attribute of one of Employee's uniqueness constraints"
                ), "\(store): \(result.stderr)")
        }
    }
}

extension PostgresStagedImportCLITests {
    @Test(
        "without references a batch streams into the table while it is read: duplicates within a batch, with stored objects and across batches, early and after most of a batch was sent, give SQLite's outcomes"
    )
    func streamedBatchesMatchSQLite() throws {
        // 3,000 records with long names (a batch's rows are sent in parts while it is read):
        // record 2,900 repeats the id of record 3 (long after the first parts were sent), record 4
        // the e-mail of record 2 (in the first part), record 1,500 the nick of record 1,499.
        var text = "id,email,nick,name,boss\n"
        for n in 1...3_000 {
            let id = n == 2_900 ? 3 : n
            let email = n == 4 ? "2@x" : "\(n)@x"
            let nick = n == 1_500 ? "n1499" : "n\(n)"
            text += "\(id),\(email),\(nick),\(String(repeating: "P\(n) ", count: 20)),\n"
        }
        for policy in ["error", "keep"] {
            for batch in [nil, 1_000] {
                let directory = TemporaryDirectory()
                let (url, drop) = try PostgresImportCLITests.freshStore("streamed")
                defer { drop() }
                try directory.write("model.yml", Self.model)
                try directory.write("people.csv", text)
                try directory.write(
                    "job.yml", Self.job(source: "people.csv", policy: policy, batch: batch, manager: false))
                let round = "\(policy), batch \(batch.map(String.init) ?? "none")"
                try Self.compare(directory, url: url, round: round)
                // Again: every record now collides with a stored object.
                try Self.compare(directory, url: url, round: round + ", again")
                // Each batch reserves a block of keys and hands back what it did not use: the
                // 3,000 records of the first run took keys 1...3,000 whatever the batch size.
                let keys = try Store.inspectionSession(at: url).session.rows(
                    "SELECT min(ferry_pk), max(ferry_pk) FROM \"Employee\"", [])
                #expect(keys.first?[0].int64 == 1, "\(round): \(keys)")
                #expect(keys.first?[1].int64 == 3_000, "\(round): \(keys)")
            }
        }
    }

    @Test(
        "text holding U+0000, which PostgreSQL cannot store, rejects its record with the file, line, column and cause; the other records of the batch are stored"
    )
    func nulTextIsRejected() throws {
        let directory = TemporaryDirectory()
        let (url, drop) = try PostgresImportCLITests.freshStore("nul")
        defer { drop() }
        try directory.write("model.yml", Self.model)
        try directory.write(
            "people.ndjson",
            """
            {"id": 1, "email": "a@x", "name": "Ann"}
            {"id": 2, "email": "b@x", "name": "B\\u0000b"}
            {"id": 3, "email": "c@x", "name": "Cy"}

            """)
        let result = try runFerry(
            [
                "import", "people.ndjson", "--store", url, "--model", "model.yml", "--entity", "Employee",
                "--rejects", "rejects.ndjson", "--max-rejects", "5",
            ], cwd: directory.path)
        #expect(result.exitCode == 0, "\(result.stderr)")
        let rejects = try String(contentsOfFile: directory.file("rejects.ndjson"), encoding: .utf8)
        #expect(rejects.split(whereSeparator: \.isNewline).count == 1, "\(rejects)")
        #expect(rejects.contains("NUL character (U+0000)"), "\(rejects)")
        #expect(rejects.contains("\"line\":2"), "\(rejects)")
        #expect(rejects.contains("\"field\":\"name\""), "\(rejects)")
        let export = try runFerry(
            ["export", "--store", url, "--entity", "Employee", "--format", "csv", "--quiet", "--sort", "id"],
            cwd: directory.path)
        #expect(
            export.stdout.split(whereSeparator: \.isNewline) == [
                "id,email,nick,name,manager", "1,a@x,,Ann,", "3,c@x,,Cy,",
            ])
    }
}
