import FerryCore
import FerryFormats
import FerryTestSupport
import Foundation
import Testing

/// JSONTestSuite (`../shared/data/JSONTestSuite/test_parsing`): `y_` files must be accepted, `n_`
/// files rejected with a located error, `i_` files either; none may crash or hang. Each file is
/// read with several chunk sizes so that every token also meets a chunk boundary.
@Suite(
    "JSON conformance (JSONTestSuite)", .timeLimit(.minutes(5)),
    .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason)))
struct JSONConformanceTests {
    static let chunkSizes = [1, 7, 1 << 18]

    static func files(_ prefix: String) throws -> [String] {
        let data = try #require(TestPaths.sharedData, "../shared/data is missing")
        let folder = data.appendingPathComponent("JSONTestSuite/test_parsing")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted().map {
            folder.appendingPathComponent($0).path
        }
    }

    /// Checks that an error is an `.invalidInput` error located in `path` at line, column >= 1.
    static func expectLocated(_ error: any Error, in path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error = error as? FerryError else {
            Issue.record("\(path): not a FerryError: \(error)", sourceLocation: sourceLocation)
            return
        }
        let location = error.location
        #expect(error.code == .invalidInput, "\(path): \(error)", sourceLocation: sourceLocation)
        #expect(location?.file == path, "\(path): \(error)", sourceLocation: sourceLocation)
        #expect(
            (location?.line ?? 0) >= 1 && (location?.column ?? 0) >= 1, "\(path): \(error)",
            sourceLocation: sourceLocation)
        #expect(
            error.description.hasPrefix("\(path):\(location?.line ?? 0):\(location?.column ?? 0): error: "),
            "\(error)", sourceLocation: sourceLocation)
    }

    @Test("every y_ file is accepted", arguments: chunkSizes)
    func accepted(chunkSize: Int) throws {
        let files = try Self.files("y_")
        #expect(files.count == 95)
        for path in files {
            #expect(thrownText { try validateJSONDocument(path: path, chunkSize: chunkSize) } == nil, "\(path)")
        }
    }

    @Test("every n_ file is rejected with a located error", arguments: chunkSizes)
    func rejected(chunkSize: Int) throws {
        let files = try Self.files("n_")
        #expect(files.count == 188)
        for path in files {
            do {
                try validateJSONDocument(path: path, chunkSize: chunkSize)
                Issue.record("\(path) was accepted")
            } catch {
                Self.expectLocated(error, in: path)
            }
        }
    }

    @Test("every i_ file is accepted or rejected with a located error", arguments: chunkSizes)
    func implementationDefined(chunkSize: Int) throws {
        let files = try Self.files("i_")
        #expect(files.count == 35)
        for path in files {
            do {
                try validateJSONDocument(path: path, chunkSize: chunkSize)
            } catch {
                Self.expectLocated(error, in: path)
            }
        }
    }

    @Test("n_ errors are the same whatever the chunk size")
    func errorsIndependentOfChunkSize() throws {
        for path in try Self.files("n_") {
            let whole = thrownText { try validateJSONDocument(path: path) }
            for chunkSize in [1, 2, 3, 64] {
                #expect(thrownText { try validateJSONDocument(path: path, chunkSize: chunkSize) } == whole, "\(path)")
            }
        }
    }
}
