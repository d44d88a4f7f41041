import FerryCore

/// The `COPY` stream's rows, read as bytes where they are text or blobs.
extension PostgresCopyRows: FetchRowSource {
    @inline(__always)
    package func storageClass(at index: Int) -> DatabaseValue.StorageClass { classes[index] }

    @inline(__always)
    package func withTextBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        if hasBytes(at: index) { return try withBytes(at: index, body) }
        let value = value(at: index)
        var text = value.text ?? value.description
        return try text.withUTF8(body)
    }

    @inline(__always)
    package func withBlobBytes<T>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        if hasBytes(at: index) { return try withBytes(at: index, body) }
        return try body(UnsafeBufferPointer(start: nil, count: 0))
    }
}

/// The cursor's rows, whole values (ferry evaluating what the server cannot).
extension PostgresFetchRows: FetchRowSource {
    package func value(at index: Int) -> DatabaseValue { row[index] }
}
