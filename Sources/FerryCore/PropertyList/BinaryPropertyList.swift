/// A reader of Apple binary property lists (`bplist00`), the format of Core Data's store
/// metadata, cached models, compiled models and keyed archives.
///
/// Written for hostile input: every offset and count is checked against the data, references
/// may not form cycles, nesting is bounded, and each object is decoded once however often it is
/// referenced (a file cannot blow up by sharing). Keyed-archive references (`UID`s) are kept as
/// ``PropertyListValue/uid(_:)``: ``KeyedArchive`` resolves them.
///
/// The format (header `bplist00`, objects, an offset table, a 32-byte trailer) is Apple's
/// `CFBinaryPList.c`, also described in Python's `plistlib`.
package struct BinaryPropertyList {
    /// How deep containers may nest (Core Data's archives reach about 20).
    package static let maxDepth = 512
    /// How many objects a file may declare (the largest real model cache has a few thousand).
    package static let maxObjects = 10_000_000

    private let bytes: [UInt8]
    private let source: String
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let offsetTable: Int
    private var decoded: [PropertyListValue?]
    private var inProgress: Set<Int> = []

    /// True when `bytes` start with the binary property list header.
    package static func isBinaryPropertyList(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: Array("bplist0".utf8))
    }

    /// Decodes a whole binary property list; `source` names it in errors (`"Z_METADATA of
    /// 'App.sqlite'"`).
    package static func decode(_ bytes: [UInt8], source: String) throws -> PropertyListValue {
        var reader = try BinaryPropertyList(bytes: bytes, source: source)
        return try reader.topObject()
    }

    private var topIndex: Int

    private init(bytes: [UInt8], source: String) throws {
        self.bytes = bytes
        self.source = source
        guard bytes.count >= 8 + 32, Self.isBinaryPropertyList(bytes) else {
            throw FerryError(
                .invalidInput,
                "\(source) is not a binary property list (it does not start with 'bplist0' or is too short)")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        let count = Self.bigEndian(bytes, at: trailer + 8, size: 8)
        let top = Self.bigEndian(bytes, at: trailer + 16, size: 8)
        let table = Self.bigEndian(bytes, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Self.malformed(
                source, "offset size \(offsetSize) or reference size \(referenceSize) is not 1 to 8 bytes", at: trailer)
        }
        guard count > 0, count <= UInt64(Self.maxObjects), top < count else {
            throw Self.malformed(source, "\(count) objects with the top object at \(top)", at: trailer)
        }
        guard table >= 8, table <= UInt64(trailer), UInt64(trailer) - table >= count * UInt64(offsetSize) else {
            throw Self.malformed(source, "the offset table at \(table) does not fit the file", at: trailer)
        }
        objectCount = Int(count)
        topIndex = Int(top)
        offsetTable = Int(table)
        decoded = Array(repeating: nil, count: objectCount)
    }

    private mutating func topObject() throws -> PropertyListValue {
        try object(topIndex, depth: 0)
    }

    private mutating func object(_ index: Int, depth: Int) throws -> PropertyListValue {
        guard index >= 0, index < objectCount else {
            throw Self.malformed(source, "a reference to object \(index) of \(objectCount)", at: nil)
        }
        if let value = decoded[index] { return value }
        guard depth < Self.maxDepth else {
            throw Self.malformed(source, "containers nested deeper than \(Self.maxDepth) levels", at: nil)
        }
        guard inProgress.insert(index).inserted else {
            throw Self.malformed(source, "object \(index) contains itself", at: nil)
        }
        defer { inProgress.remove(index) }
        let offset = Int(Self.bigEndian(bytes, at: offsetTable + index * offsetSize, size: offsetSize))
        guard offset >= 8, offset < offsetTable else {
            throw Self.malformed(source, "object \(index) starts at \(offset), outside the object area", at: nil)
        }
        let value = try parse(at: offset, depth: depth)
        decoded[index] = value
        return value
    }

    private mutating func parse(at offset: Int, depth: Int) throws -> PropertyListValue {
        let marker = bytes[offset]
        let kind = marker >> 4
        let info = Int(marker & 0x0F)
        switch kind {
        case 0x0:
            switch info {
            case 0x0: return .null
            case 0x8: return .bool(false)
            case 0x9: return .bool(true)
            default: throw Self.malformed(source, "unknown marker 0x\(String(marker, radix: 16))", at: offset)
            }
        case 0x1:
            guard info <= 4 else { throw Self.malformed(source, "an integer of 2^\(info) bytes", at: offset) }
            let size = 1 << info
            try need(offset + 1, size)
            if size == 16 {
                // 128-bit: ferry keeps values that fit in 64 bits.
                let high = Self.bigEndian(bytes, at: offset + 1, size: 8)
                let low = Self.bigEndian(bytes, at: offset + 9, size: 8)
                if high == 0 { return Int64(exactly: low).map(PropertyListValue.integer) ?? .unsignedInteger(low) }
                if high == UInt64.max, low >= UInt64(1) << 63 { return .integer(Int64(bitPattern: low)) }
                throw Self.malformed(source, "an integer wider than 64 bits", at: offset)
            }
            let raw = Self.bigEndian(bytes, at: offset + 1, size: size)
            // 1, 2 and 4-byte integers are unsigned; 8-byte ones are signed.
            return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
        case 0x2:
            guard info == 2 || info == 3 else { throw Self.malformed(source, "a real of 2^\(info) bytes", at: offset) }
            let size = 1 << info
            try need(offset + 1, size)
            let raw = Self.bigEndian(bytes, at: offset + 1, size: size)
            return .real(size == 4 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x3:
            guard info == 3 else {
                throw Self.malformed(source, "a date marker 0x\(String(marker, radix: 16))", at: offset)
            }
            try need(offset + 1, 8)
            return .date(Double(bitPattern: Self.bigEndian(bytes, at: offset + 1, size: 8)))
        case 0x4:
            let (count, start) = try length(info, at: offset)
            try need(start, count)
            return .data(Array(bytes[start..<start + count]))
        case 0x5:
            let (count, start) = try length(info, at: offset)
            try need(start, count)
            // ASCII strings; bytes above 0x7F are read as Latin-1 rather than refused.
            return .string(String(String.UnicodeScalarView(bytes[start..<start + count].map { Unicode.Scalar($0) })))
        case 0x6:
            let (count, start) = try length(info, at: offset)
            let (byteCount, overflow) = count.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw Self.malformed(source, "a string of \(count) UTF-16 units", at: offset) }
            try need(start, byteCount)
            var units: [UInt16] = []
            units.reserveCapacity(count)
            for i in 0..<count {
                units.append(UInt16(bytes[start + 2 * i]) << 8 | UInt16(bytes[start + 2 * i + 1]))
            }
            return .string(String(decoding: units, as: UTF16.self))
        case 0x7:
            let (count, start) = try length(info, at: offset)
            try need(start, count)
            return .string(String(decoding: bytes[start..<start + count], as: UTF8.self))
        case 0x8:
            let size = info + 1
            try need(offset + 1, size)
            return .uid(Self.bigEndian(bytes, at: offset + 1, size: size))
        case 0xA, 0xB, 0xC:
            // Arrays; ordered sets and sets are read as arrays.
            let (count, start) = try length(info, at: offset)
            let references = try self.references(count, at: start, offset: offset)
            var items: [PropertyListValue] = []
            items.reserveCapacity(count)
            for reference in references {
                items.append(try object(reference, depth: depth + 1))
            }
            return .array(items)
        case 0xD:
            let (count, start) = try length(info, at: offset)
            let (total, overflow) = count.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw Self.malformed(source, "a dictionary of \(count) entries", at: offset) }
            let references = try self.references(total, at: start, offset: offset)
            var dictionary = PropertyListDictionary()
            for i in 0..<count {
                let key = try object(references[i], depth: depth + 1)
                guard case .string(let name) = key else {
                    throw Self.malformed(source, "a dictionary key that is not a string", at: offset)
                }
                dictionary[name] = try object(references[count + i], depth: depth + 1)
            }
            return .dictionary(dictionary)
        default:
            throw Self.malformed(source, "unknown marker 0x\(String(marker, radix: 16))", at: offset)
        }
    }

    /// The element count of a data, string or container object, and where its contents start.
    private func length(_ info: Int, at offset: Int) throws -> (count: Int, start: Int) {
        guard info == 0xF else { return (info, offset + 1) }
        try need(offset + 1, 1)
        let marker = bytes[offset + 1]
        guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
            throw Self.malformed(source, "a length that is not an integer", at: offset + 1)
        }
        let size = 1 << Int(marker & 0x0F)
        try need(offset + 2, size)
        let count = Self.bigEndian(bytes, at: offset + 2, size: size)
        guard count <= UInt64(bytes.count) else {
            throw Self.malformed(source, "a length of \(count), longer than the file", at: offset + 1)
        }
        return (Int(count), offset + 2 + size)
    }

    private func references(_ count: Int, at start: Int, offset: Int) throws -> [Int] {
        let (byteCount, overflow) = count.multipliedReportingOverflow(by: referenceSize)
        guard !overflow else { throw Self.malformed(source, "a container of \(count) objects", at: offset) }
        try need(start, byteCount)
        return (0..<count).map {
            Int(truncatingIfNeeded: Self.bigEndian(bytes, at: start + $0 * referenceSize, size: referenceSize))
        }
    }

    /// Throws unless `count` bytes from `start` lie before the offset table.
    private func need(_ start: Int, _ count: Int) throws {
        guard start >= 0, count >= 0, start <= offsetTable, count <= offsetTable - start else {
            throw Self.malformed(source, "an object runs past the end of the object area", at: start)
        }
    }

    private static func bigEndian(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<size { value = value << 8 | UInt64(bytes[offset + i]) }
        return value
    }

    private static func malformed(_ source: String, _ why: String, at offset: Int?) -> FerryError {
        FerryError(
            .invalidInput,
            "\(source) is a malformed binary property list: \(why)" + (offset.map { " (byte \($0))" } ?? ""))
    }
}
