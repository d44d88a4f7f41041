import FerryCore
import FerryPipeline
import FuzzSupport

/// Loads the input as a model file, a job and a mapping file: every input must load or be a
/// located error, whatever its aliases, nesting, patterns, predicates and expressions.
@main
enum FuzzYAML {
    static func main() { FuzzDriver.run(test) }
}

@_cdecl("LLVMFuzzerTestOneInput")
func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let path = FuzzInput.file(data, size, name: "input.yml")
    _ = try? ModelLoader().load(path: path)
    _ = try? JobLoader().load(path: path, parameters: [:], environment: [:])
    _ = try? MappingLoader().load(path: path, source: FuzzModel.model, destination: FuzzModel.model)
    return 0
}
