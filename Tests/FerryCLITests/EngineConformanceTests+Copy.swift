import FerryTestSupport
import Foundation
import Testing

/// The copy cell of the conformance suite: `ferry copy` from each engine into every engine that
/// takes a copy and back, the objects identical to the source's; a copy into a Core Data store
/// refused by name from every source, the store left as it was.
extension EngineConformanceTests {
    /// The engines a copy may be written into (a copy is always a ferry store).
    static var copyDestinations: [Engine] { Engine.available.filter { $0 != .coreData } }

    /// What `ferry copy` says when its destination is a Core Data store.
    static let copyIntoCoreDataRefusal =
        "is a Core Data store; ferry copy writes ferry stores and never replaces a Core Data store (to fill one, ferry import into it; to copy it, give a new file as the destination)"

    @Test(
        "ferry copy from each engine into every other and back gives the source's objects; into Core Data it is refused by name",
        arguments: Engine.available)
    func copyBetweenEngines(engine: Engine) throws {
        let outcome = try Self.conforms("copy between engines", engine) { engine in
            let store = try EngineStore(engine, name: "copysrc")
            defer { store.dropSchemas() }
            try Self.loadGarage(store)
            let source = try Self.exportGarage(store)
            var outcome: [String: String] = [:]
            for (entity, export) in source { outcome[entity] = export }
            let model = engine == .coreData ? ["--model", Self.garage] : []
            for destination in Self.copyDestinations {
                let copy = try store.sibling(destination, name: "to\(destination.rawValue)")
                defer { copy.dropSchemas() }
                try Self.ferry(["copy", store.location, copy.location, "--quiet"] + model, in: store)
                #expect(try Self.exportGarage(copy) == source, "\(engine) → \(destination)")
                // And back, into every engine that takes a copy.
                for back in Self.copyDestinations {
                    let returned = try store.sibling(back, name: "from\(destination.rawValue)to\(back.rawValue)")
                    defer { returned.dropSchemas() }
                    try Self.ferry(["copy", copy.location, returned.location, "--quiet"], in: store)
                    #expect(try Self.exportGarage(returned) == source, "\(engine) → \(destination) → \(back)")
                }
            }
            // Into a Core Data store: refused, naming why, and the store is left as it was.
            let coreData = try store.sibling(.coreData, name: "intocoredata")
            try Self.load(coreData, model: Self.garage, [("tags.ndjson", "Tag")])
            let refused = try Self.ferry(
                ["copy", store.location, coreData.location, "--replace", "--quiet"] + model, in: store, exit: 64)
            outcome["into Core Data"] = coreData.normalized(store.normalized(refused.stderr))
            outcome["Core Data store after the refusal"] = try Self.export(
                coreData, "Tag", sort: "label", fields: "label", format: "csv"
            ).replacingOccurrences(of: "\r\n", with: "\n")
            return outcome
        }
        #expect(
            outcome["into Core Data"]?.contains(Self.copyIntoCoreDataRefusal) == true,
            "\(engine): \(outcome["into Core Data"] ?? "")")
        #expect(outcome["Core Data store after the refusal"] == "label\nfast\nold\nred\n")
    }
}
