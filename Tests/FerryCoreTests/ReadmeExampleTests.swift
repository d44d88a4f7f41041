import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// The library example of docs/architecture.md (the README's until the README became a front
/// door), compiled and run. `scripts/doc_tests.py` checks that the page's `swift` block is, line
/// for line, the body of `readmeExample` below (its `<!-- doc-test: swift … -->` annotation names
/// this file), so the two cannot drift apart.
@Suite struct ReadmeExampleTests {
    @Test func theReadmeLibraryExampleWorks() throws {
        let directory = TemporaryDirectory("ferry-readme")
        let path = directory.url.appendingPathComponent("shop.sqlite").path
        let (inserted, gmail, verified) = try Self.readmeExample(path: path)
        #expect(inserted == 1000)
        #expect(gmail == 500)
        #expect(verified)
    }

    static func readmeExample(path: String) throws -> (Int, Int, Bool) {
        // README: begin
        let model = ObjectModel(
            name: "Shop", version: "1",
            entities: [
                EntityDescription(
                    name: "Customer",
                    attributes: [
                        AttributeDescription(name: "id", type: .int64, isOptional: false),
                        AttributeDescription(name: "email", type: .string, isOptional: false),
                    ], uniquenessConstraints: [["id"]])
            ])
        let store = try Store.open(at: path, model: model)  // path: "shop.sqlite"; created when missing

        var next = 0
        let result = try store.execute(
            BatchInsertRequest(entity: "Customer", columns: [.attribute("id"), .attribute("email")]) { row in
                guard next < 1000 else { return true }  // no more rows
                row = [
                    .integer(Int64(next)),
                    .string(next.isMultiple(of: 2) ? "c\(next)@gmail.com" : "c\(next)@example.com"),
                ]
                next += 1
                return false
            })
        print(result.inserted, result.rejected)  // 1000 0

        let gmail = try store.fetch(
            FetchRequest(
                entity: "Customer", predicate: Predicate(format: "email ENDSWITH[c] %@", arguments: ["@gmail.com"]))
        ) { cursor in
            var count = 0
            while try cursor.next() != nil { count += 1 }
            return count
        }
        print(gmail)  // 500

        let verifier = Verifier(model: model)
        let report = verifier.run(Verifier.builtInChecks(for: model, level: .all), on: store)
        print(report.succeeded)  // true
        // README: end
        return (result.inserted, gmail, report.succeeded)
    }
}
