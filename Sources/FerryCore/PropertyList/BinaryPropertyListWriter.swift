/// A writer of Apple binary property lists (`bplist00`), the inverse of ``BinaryPropertyList``:
/// how ferry writes the metadata of a Core Data store it creates (`Z_METADATA.Z_PLIST`).
///
/// Objects are written depth-first from the top object (index 0); equal scalars (strings,
/// numbers, data) are written once and shared, as Apple's writer does. Strings are ASCII when
/// they can be, UTF-16 big-endian otherwise; integers use the smallest size that holds them
/// (negative ones 8 bytes); dictionaries list their keys, then their values, in key order of
/// the ``PropertyListDictionary``.
package enum BinaryPropertyListWriter {
    /// The bytes of a binary property list whose top object is `value`.
    package static func encode(_ value: PropertyListValue) -> [UInt8] {
        var flattener = Flattener()
        _ = flattener.add(value)
        let objects = flattener.objects
        let referenceSize = byteCount(for: UInt64(objects.count))
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(bytes.count)
            write(object, referenceSize: referenceSize, to: &bytes)
        }
        let offsetTable = bytes.count
        let offsetSize = byteCount(for: UInt64(offsetTable))
        for offset in offsets { append(UInt64(offset), size: offsetSize, to: &bytes) }
        // Trailer: 5 unused bytes, the sort version, offset and reference sizes, object count,
        // top object, offset table position.
        bytes += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        append(UInt64(objects.count), size: 8, to: &bytes)
        append(0, size: 8, to: &bytes)
        append(UInt64(offsetTable), size: 8, to: &bytes)
        return bytes
    }

    /// An object with its children replaced by their indexes.
    private enum Flat {
        case scalar(PropertyListValue)
        case array([Int])
        case dictionary(keys: [Int], values: [Int])
    }

    private struct Flattener {
        var objects: [Flat] = []
        var shared: [PropertyListValue: Int] = [:]

        mutating func add(_ value: PropertyListValue) -> Int {
            switch value {
            case .array(let items):
                let index = reserve()
                objects[index] = .array(items.map { add($0) })
                return index
            case .dictionary(let dictionary):
                let index = reserve()
                let keys = dictionary.entries.map { add(.string($0.key)) }
                let values = dictionary.entries.map { add($0.value) }
                objects[index] = .dictionary(keys: keys, values: values)
                return index
            default:
                if let index = shared[value] { return index }
                let index = reserve()
                objects[index] = .scalar(value)
                shared[value] = index
                return index
            }
        }

        private mutating func reserve() -> Int {
            objects.append(.scalar(.null))
            return objects.count - 1
        }
    }

    private static func write(_ object: Flat, referenceSize: Int, to bytes: inout [UInt8]) {
        switch object {
        case .array(let references):
            marker(0xA, count: references.count, to: &bytes)
            for reference in references { append(UInt64(reference), size: referenceSize, to: &bytes) }
        case .dictionary(let keys, let values):
            marker(0xD, count: keys.count, to: &bytes)
            for reference in keys + values { append(UInt64(reference), size: referenceSize, to: &bytes) }
        case .scalar(let value):
            writeScalar(value, to: &bytes)
        }
    }

    private static func writeScalar(_ value: PropertyListValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(0x00)
        case .bool(let flag): bytes.append(flag ? 0x09 : 0x08)
        case .integer(let number): integer(number, to: &bytes)
        case .unsignedInteger(let number):
            if let small = Int64(exactly: number) {
                integer(small, to: &bytes)
            } else {
                // 16 bytes: the reader's form for unsigned values above Int64.max.
                bytes.append(0x14)
                append(0, size: 8, to: &bytes)
                append(number, size: 8, to: &bytes)
            }
        case .real(let number):
            bytes.append(0x23)
            append(number.bitPattern, size: 8, to: &bytes)
        case .date(let seconds):
            bytes.append(0x33)
            append(seconds.bitPattern, size: 8, to: &bytes)
        case .data(let data):
            marker(0x4, count: data.count, to: &bytes)
            bytes += data
        case .string(let text):
            if text.utf8.allSatisfy({ $0 < 0x80 }) {
                marker(0x5, count: text.utf8.count, to: &bytes)
                bytes += text.utf8
            } else {
                let units = Array(text.utf16)
                marker(0x6, count: units.count, to: &bytes)
                for unit in units { append(UInt64(unit), size: 2, to: &bytes) }
            }
        case .uid(let reference):
            let size = byteCount(for: reference)
            bytes.append(0x80 | UInt8(size - 1))
            append(reference, size: size, to: &bytes)
        case .array, .dictionary:
            preconditionFailure("containers are flattened before writing")
        }
    }

    /// 1, 2 and 4-byte integers are unsigned; anything else is a signed 8-byte integer.
    private static func integer(_ number: Int64, to bytes: inout [UInt8]) {
        switch number {
        case 0...0xFF:
            bytes.append(0x10)
            append(UInt64(number), size: 1, to: &bytes)
        case 0x100...0xFFFF:
            bytes.append(0x11)
            append(UInt64(number), size: 2, to: &bytes)
        case 0x10000...0xFFFF_FFFF:
            bytes.append(0x12)
            append(UInt64(number), size: 4, to: &bytes)
        default:
            bytes.append(0x13)
            append(UInt64(bitPattern: number), size: 8, to: &bytes)
        }
    }

    /// A type nibble with a count: in the marker when below 15, else as a following integer.
    private static func marker(_ type: UInt8, count: Int, to bytes: inout [UInt8]) {
        if count < 15 {
            bytes.append(type << 4 | UInt8(count))
        } else {
            bytes.append(type << 4 | 0x0F)
            integer(Int64(count), to: &bytes)
        }
    }

    /// Bytes needed for an unsigned value: 1, 2, 4 or 8.
    private static func byteCount(for value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }

    private static func append(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}
