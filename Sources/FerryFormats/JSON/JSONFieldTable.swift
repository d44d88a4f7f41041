#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Interns field names: maps each name to a stable index, looked up from raw UTF-8 bytes
/// without creating a `String` (an open-addressing hash table over a byte arena).
final class JSONFieldTable {
    /// Names in index order.
    @exclusivity(unchecked) private(set) var names: [String] = []
    /// True for indexes whose name appeared as a key in the input.
    @exclusivity(unchecked) private var seen: [Bool] = []
    @exclusivity(unchecked) private var arena: [UInt8] = []
    @exclusivity(unchecked) private var starts: [Int] = []
    @exclusivity(unchecked) private var lengths: [Int] = []
    @exclusivity(unchecked) private var hashes: [UInt64] = []
    /// Slots hold index + 1; 0 is empty.
    @exclusivity(unchecked) private var slots: [Int32] = Array(repeating: 0, count: 64)

    var count: Int { names.count }

    /// The index of `name`, registering it when new (without marking it seen).
    func index(of name: String) -> Int {
        var copy = name
        return copy.withUTF8 { index(bytes: $0, markSeen: false) }
    }

    /// The index of an existing name, or nil.
    func existingIndex(of name: String) -> Int? {
        var copy = name
        return copy.withUTF8 { find($0, hash: Self.hash($0)) }
    }

    /// True when `name` appeared as a key in the input.
    func hasSeen(_ name: String) -> Bool {
        guard let index = existingIndex(of: name) else { return false }
        return seen[index]
    }

    /// The index of the name spelled by `bytes` (valid UTF-8), registering it when new.
    func index(bytes: UnsafeBufferPointer<UInt8>, markSeen: Bool = true) -> Int {
        let hash = Self.hash(bytes)
        let index: Int
        if let found = find(bytes, hash: hash) {
            index = found
        } else {
            index = insert(bytes, hash: hash)
        }
        if markSeen && !seen[index] { seen[index] = true }
        return index
    }

    /// True when the name at `index` is spelled exactly by `bytes`.
    @inline(__always)
    func matches(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let length = lengths[index]
        guard length == bytes.count else { return false }
        if length == 0 { return true }
        let start = starts[index]
        return arena.withUnsafeBufferPointer { stored in
            guard let a = stored.baseAddress, let b = bytes.baseAddress else { return false }
            return memcmp(a + start, b, length) == 0
        }
    }

    private func find(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int? {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { return nil }
            if hashes[entry - 1] == hash && matches(entry - 1, bytes) { return entry - 1 }
            slot = (slot + 1) & mask
        }
    }

    private func insert(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> Int {
        let index = names.count
        names.append(String(decoding: bytes, as: UTF8.self))
        seen.append(false)
        starts.append(arena.count)
        lengths.append(bytes.count)
        hashes.append(hash)
        arena.append(contentsOf: bytes)
        if (index + 1) * 2 > slots.count {
            slots = Array(repeating: 0, count: slots.count * 2)
            for existing in 0...index { place(existing) }
        } else {
            place(index)
        }
        return index
    }

    private func place(_ index: Int) {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hashes[index]) & mask
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = Int32(index + 1)
    }

    /// FNV-1a over the bytes.
    @inline(__always)
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3
        }
        return h
    }
}
