import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// A migration reads a Core Data store's metadata, entities and columns without scanning a
/// table (`countingRows: false`): the same as a full read in everything but the row counts.
@Suite struct CoreDataStoreReadWithoutCountsTests {
    @Test(
        "every real store: without counting rows, the metadata, entities, tables, columns and version are those of a full read",
        .enabled(if: SharedData.shouldRun, Comment(rawValue: SharedData.skipReason))
    )
    func sameButCounts() throws {
        let directory = TemporaryDirectory("ferry-cd-nocount")
        for sample in CoreDataStoreTests.samples {
            let path = try CoreDataStoreTests.copy(sample, into: directory, name: "\(sample.project)-\(sample.file)")
            let label = "\(sample.project) \(sample.file)"
            let copy = try CoreDataStoreCopy(of: path)
            defer { copy.remove() }
            let full = try CoreDataStoreFile.read(copy)
            let light = try CoreDataStoreFile.read(copy, countingRows: false)
            #expect(light.metadata == full.metadata, "\(label)")
            #expect(light.journalMode == full.journalMode, "\(label)")
            #expect(light.tableColumns == full.tableColumns, "\(label)")
            #expect(light.indexNames == full.indexNames, "\(label)")
            #expect(light.modelCache == full.modelCache, "\(label)")
            #expect(light.entities.map(\.name) == full.entities.map(\.name), "\(label)")
            #expect(light.entities.map(\.number) == full.entities.map(\.number), "\(label)")
            #expect(light.entities.map(\.maxKey) == full.entities.map(\.maxKey), "\(label)")
            #expect(light.entities.map(\.table) == full.entities.map(\.table), "\(label)")
            #expect(light.entities.allSatisfy { $0.rows == 0 }, "\(label)")
            #expect(full.entities.contains { $0.rows > 0 }, "\(label)")
            #expect(try light.cachedModel() == full.cachedModel(), "\(label)")
        }
    }
}
