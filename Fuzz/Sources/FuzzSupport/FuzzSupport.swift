internal import CFuzzDriver
import FerryCore
import Foundation

/// Runs libFuzzer with `test` as the function under test; the command line is libFuzzer's
/// (`fuzz-csv CORPUS -max_total_time=60`, see https://llvm.org/docs/LibFuzzer.html).
public enum FuzzDriver {
    public static func run(_ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, test))
    }
}

/// What every fuzz target shares: the input as text or as a file, and one small model with a
/// store to run generated SQL against.
public enum FuzzInput {
    /// The input bytes as text (invalid UTF-8 is repaired, as ferry's readers of definitions do).
    public static func text(_ data: UnsafePointer<UInt8>, _ size: Int) -> String {
        String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    }

    /// Writes the input to this process's scratch file (readers take paths) and returns its path.
    public static func file(_ data: UnsafePointer<UInt8>, _ size: Int, name: String = "input") -> String {
        let path = scratch + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes: data, count: size))
        return path
    }

    /// A folder of this process's own, so that parallel fuzzing jobs do not share files.
    public static let scratch: String = {
        let path = NSTemporaryDirectory() + "/ferry-fuzz-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()
}

/// A model with every attribute type, a to-one and a to-many relationship, and an in-memory
/// store for it, so that predicates and expressions bind and their SQL is prepared by SQLite.
public enum FuzzModel {
    public static let model: ObjectModel = {
        let customer = EntityDescription(
            name: "Customer",
            attributes: [
                AttributeDescription(name: "id", type: .int64, isOptional: false),
                AttributeDescription(name: "name", type: .string),
                AttributeDescription(
                    name: "email", type: .string, validation: ValidationRules(pattern: "[^@ ]+@[^@ ]+")),
                AttributeDescription(name: "age", type: .int16),
                AttributeDescription(name: "score", type: .decimal),
                AttributeDescription(name: "ratio", type: .double),
                AttributeDescription(name: "active", type: .bool),
                AttributeDescription(name: "joined", type: .date),
                AttributeDescription(name: "key", type: .uuid),
                AttributeDescription(name: "home", type: .uri),
                AttributeDescription(name: "photo", type: .binary),
                AttributeDescription(name: "extra", type: .json),
            ],
            relationships: [
                RelationshipDescription(name: "orders", destination: "Order", isToMany: true, inverse: "customer")
            ],
            uniquenessConstraints: [["id"]])
        let order = EntityDescription(
            name: "Order",
            attributes: [
                AttributeDescription(name: "number", type: .string),
                AttributeDescription(name: "total", type: .decimal),
            ],
            relationships: [RelationshipDescription(name: "customer", destination: "Customer", inverse: "orders")])
        return ObjectModel(name: "Fuzz", version: "1", entities: [customer, order])
    }()

    public static var customer: EntityDescription { model.entities[0] }

    /// An in-memory store of ``model``, opened once per process.
    public static let store: Store = {
        do {
            return try Store.open(at: ":memory:", model: model)
        } catch {
            fatalError("cannot open the fuzzing store: \(error)")
        }
    }()
}
