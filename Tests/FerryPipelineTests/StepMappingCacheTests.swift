import FerryCore
import FerryPipeline
import FerryTestSupport
import Foundation
import Testing

@Suite("Mapping providers make each step's mapping once")
struct StepMappingCacheTests {
    static let bundlePath = TestPaths.packageRoot.appendingPathComponent("samples/models/Shop").path

    @Test(
        "a provider parses a step's mapping file once: a later change of the file is not read again, a new provider reads it"
    )
    func mappingFileParsedOnce() throws {
        let dir = TemporaryDirectory()
        let bundle = try ModelLoader().load(path: Self.bundlePath)
        let folder = dir.file("mappings")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = (folder as NSString).appendingPathComponent("2-to-3.yml")
        try FileManager.default.copyItem(atPath: "\(Self.bundlePath)/mappings/2-to-3.yml", toPath: file)
        let v2 = try #require(bundle.version("2"))
        let v3 = try #require(bundle.version("3"))
        let provider = MigrationMappings.provider(for: bundle, folders: [folder])
        let first = try provider(v2, v3)
        #expect(first.location?.file == file)
        // A file the provider would refuse, written after the step's mapping was made.
        try "entities: [".write(toFile: file, atomically: true, encoding: .utf8)
        let second = try provider(v2, v3)
        #expect(second.location?.file == file)
        #expect(second.entities.map(\.name) == first.entities.map(\.name))
        let error = #expect(throws: (any Error).self) {
            try MigrationMappings.provider(for: bundle, folders: [folder])(v2, v3)
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("2-to-3.yml:2:1"))
    }
}
