import FerryFormats
import FuzzSupport

/// Reads the input as a CSV file with the default dialect: any input must end in records or a
/// located error, never a crash, a hang or unbounded memory.
@main
enum FuzzCSV {
    static func main() { FuzzDriver.run(test) }
}

@_cdecl("LLVMFuzzerTestOneInput")
func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let path = FuzzInput.file(data, size, name: "input.csv")
    do {
        let reader = try CSVReader(path: path, options: CSVOptions())
        while try reader.next() != nil {}
    } catch {}
    return 0
}
