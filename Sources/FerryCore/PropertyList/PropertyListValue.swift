/// A value of an Apple property list, as found in Core Data's files: store metadata
/// (`Z_METADATA.Z_PLIST`), the cached model (`Z_MODELCACHE`), compiled models' `VersionInfo.plist`
/// and the keyed archives inside mapping models.
package enum PropertyListValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    /// An unsigned 64-bit integer too large for `Int64` (binary plists store these as 16 bytes).
    case unsignedInteger(UInt64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 2001-01-01T00:00:00Z, as `NSDate` stores them.
    case date(Double)
    case data([UInt8])
    case array([PropertyListValue])
    /// Keys in the order the file lists them.
    case dictionary(PropertyListDictionary)
    /// A keyed archive's reference into its `$objects` (binary plists only).
    case uid(UInt64)
    case null

    package var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    package var integer: Int64? {
        switch self {
        case .integer(let value): return value
        case .unsignedInteger(let value): return Int64(exactly: value)
        case .bool(let value): return value ? 1 : 0
        case .real(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    package var bool: Bool? {
        switch self {
        case .bool(let value): return value
        case .integer(let value): return value != 0
        default: return nil
        }
    }

    package var real: Double? {
        switch self {
        case .real(let value): return value
        case .integer(let value): return Double(value)
        default: return nil
        }
    }

    package var data: [UInt8]? {
        if case .data(let value) = self { return value }
        return nil
    }

    package var array: [PropertyListValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    package var dictionary: PropertyListDictionary? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    package var uid: UInt64? {
        if case .uid(let value) = self { return value }
        return nil
    }

    /// The value for `key` when this is a dictionary.
    package subscript(key: String) -> PropertyListValue? {
        dictionary?[key]
    }
}

/// A property-list dictionary with string keys, keeping the file's order of keys (so that a
/// rewrite of Core Data metadata keeps keys it does not know where they were).
package struct PropertyListDictionary: Sendable, Hashable {
    package private(set) var entries: [(key: String, value: PropertyListValue)] = []
    private var indexes: [String: Int] = [:]

    package init() {}

    package init(_ entries: [(String, PropertyListValue)]) {
        for (key, value) in entries { self[key] = value }
    }

    package var keys: [String] { entries.map(\.key) }
    package var count: Int { entries.count }

    package subscript(key: String) -> PropertyListValue? {
        get { indexes[key].map { entries[$0].value } }
        set {
            if let index = indexes[key] {
                if let newValue {
                    entries[index].value = newValue
                } else {
                    entries.remove(at: index)
                    indexes = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.key, $0) })
                }
            } else if let newValue {
                indexes[key] = entries.count
                entries.append((key, newValue))
            }
        }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.entries.count == rhs.entries.count
            && zip(lhs.entries, rhs.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    package func hash(into hasher: inout Hasher) {
        for entry in entries {
            hasher.combine(entry.key)
            hasher.combine(entry.value)
        }
    }
}
