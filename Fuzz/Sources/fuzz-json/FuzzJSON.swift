import FerryFormats
import FuzzSupport

/// Reads the input as a JSON array of records, as NDJSON, and validates it as one JSON document,
/// with small chunks so that tokens and records cross refills.
@main
enum FuzzJSON {
    static func main() { FuzzDriver.run(test) }
}

@_cdecl("LLVMFuzzerTestOneInput")
func test(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let path = FuzzInput.file(data, size, name: "input.json")
    do {
        let reader = try JSONArrayReader(path: path, chunkSize: 7, maxRecordBytes: 1 << 16)
        while try reader.next() != nil {}
    } catch {}
    do {
        let reader = try NDJSONReader(path: path, chunkSize: 5, maxRecordBytes: 1 << 16)
        while try reader.next() != nil {}
    } catch {}
    do {
        try validateJSONDocument(path: path, chunkSize: 3)
    } catch {}
    return 0
}
