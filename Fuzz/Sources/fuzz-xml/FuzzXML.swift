import FerryCore
import FerryPipeline
import Foundation
import FuzzSupport

/// Loads the input as an Xcode model version (`input.xcdatamodel/contents`) and as an Xcode
/// mapping model (`input.xcmappingmodel/xcmapping.xml`): every input must load or be a located
/// error, whatever its bytes (names that are not UTF-8 once trapped in Foundation's XMLParser).
@main
enum FuzzXML {
    static func main() { FuzzDriver.run(test) }
}

private let model = FuzzInput.scratch + "/input.xcdatamodel"
private let mapping = FuzzInput.scratch + "/input.xcmappingmodel"

@_cdecl("LLVMFuzzerTestOneInput")
func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Data(bytes: data, count: size)
    try? FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: true)
    try? FileManager.default.createDirectory(atPath: mapping, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: model + "/contents", contents: bytes)
    _ = FileManager.default.createFile(atPath: mapping + "/xcmapping.xml", contents: bytes)
    _ = try? ModelLoader().load(path: model)
    _ = try? XcodeMappingReader().read(path: mapping)
    return 0
}
