import FerryTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT and SIGTERM sent to a running import (the real binary): the step is rolled back (or
/// stops after its committed batches with `atomic: false`), ferry says so and exits 130 / 143;
/// a second SIGINT exits at once; the store is consistent every time.
@Suite("SIGINT and SIGTERM during an import (CLI)", .serialized)
struct InterruptTests {
    /// Starts an import of the 300,000-row file into `store` (holding 3 people), waits until its
    /// transaction has begun writing (the journal exists), then sends `signals`.
    static func interrupt(_ arguments: [String], store: String, with signals: [Int32]) throws -> ProcessResult {
        let process = try FerryProcess(arguments)
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && fileSize(store + "-journal") == nil && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
        let wasRunning = process.isRunning
        for signal in signals {
            process.send(signal)
            Thread.sleep(forTimeInterval: 0.001)
        }
        let result = try process.wait()
        #expect(wasRunning, "the import ended before it could be interrupted: \(result)")
        return result
    }

    static func storeWithThreePeople(_ directory: TemporaryDirectory) throws -> String {
        let store = directory.file("s.sqlite")
        let seed = try directory.write(
            "seed.csv",
            "id,email,name,age\n900001,a@example.com,A,1\n900002,b@example.com,B,2\n900003,c@example.com,C,3\n")
        let result = try runFerry(ContractTests.importArguments(seed, store: store))
        #expect(result.exitCode == 0, "\(result)")
        return store
    }

    @Test(
        "SIGINT rolls the import back and exits 130; SIGTERM exits 143",
        arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func rollsBack(signal: Int32, code: Int32) throws {
        let directory = TemporaryDirectory()
        let store = try Self.storeWithThreePeople(directory)
        let result = try Self.interrupt(
            ContractTests.importArguments(BigFiles.big, store: store), store: store, with: [signal])
        #expect(!result.wasSignaled && result.exitCode == code, "\(result)")
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(
            result.stderr.contains("error: interrupted by \(name): step 1 import Person was rolled back after "),
            "\(result)")
        #expect(result.stderr.contains("records; the store is as it was before the step"), "\(result)")
        #expect(fileSize(store + "-journal") == nil, "the rollback finished before exiting")
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [3])
        #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]])
    }

    @Test("with atomic: false, SIGINT keeps the committed batches: whole batches only")
    func checkpointed() throws {
        let directory = TemporaryDirectory()
        let store = try Self.storeWithThreePeople(directory)
        let report = directory.file("r.json")
        let result = try Self.interrupt(
            [
                "run", Fixtures.path("jobs/people-checkpointed.yml"), "--param", "store=\(store)", "--param",
                "data=\(BigFiles.big)", "--report", report, "--quiet",
            ],
            store: store, with: [SIGINT])
        #expect(result.exitCode == 130, "\(result)")
        #expect(
            result.stderr.contains("error: interrupted by SIGINT: step 1 import Person stopped after "), "\(result)")
        #expect(
            result.stderr.contains("the batches it committed stay in the store, the batch in progress was rolled back"),
            "\(result)")
        let count = try StoreSnapshot.integers(store, "SELECT count(*) FROM Person").first ?? -1
        #expect(count >= 3 && (count - 3) % 1000 == 0 && count < 3 + BigFiles.rows, "\(count)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        #expect(json["exit_code"] as? Int == 130)
        let schema = try JSONSchema(path: ReportSchemaTests.schemaPath)
        #expect(try schema.violations(ofFile: report).isEmpty)
        #expect(json["outcome"] as? String == "failed")
    }

    @Test("a second SIGINT exits at once with 130; the store still holds exactly what it held")
    func secondInterrupt() throws {
        let directory = TemporaryDirectory()
        let store = try Self.storeWithThreePeople(directory)
        let result = try Self.interrupt(
            ContractTests.importArguments(BigFiles.big, store: store), store: store, with: [SIGINT, SIGINT])
        #expect(result.exitCode == 130, "\(result)")
        // Either the rollback finished first, or the journal restores the store on the next open.
        #expect(try runFerry(["store", "info", store, "--json"]).exitCode == 0)
        #expect(try StoreSnapshot.integers(store, "SELECT count(*) FROM Person") == [3])
        #expect(try StoreSnapshot.texts(store, "PRAGMA integrity_check") == [["ok"]])
    }
}
