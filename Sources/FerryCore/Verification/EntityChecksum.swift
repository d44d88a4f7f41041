/// An order-independent checksum of chosen attribute values of every row of an entity: the
/// row count and the sum (mod 2⁶⁴) of a 64-bit hash of each row's canonical encoding.
///
/// Used across a migration to prove that carried-over values are unchanged: compute it on the
/// source store before and on the destination store after, over the attributes the mapping
/// carries unchanged, and compare with ``matches(_:)``.
///
/// ```swift
/// let before = try EntityChecksum.compute(store: old, entity: "Customer", attributes: ["id", "email"])
/// // … migrate, with Customer.email renamed to mail …
/// let after = try EntityChecksum.compute(store: new, entity: "Client", attributes: ["id", "mail"])
/// guard before.matches(after) else { … }
/// ```
///
/// Values are hashed by position, not by name, so renamed attributes and entities compare
/// equal. Each value is first decoded to its typed ``Value`` (`StorageCoding.decode(_:as:)`),
/// so the same value stored in another storage class (an integer in a decimal column, a
/// non-canonical decimal text) hashes the same, and JSON is hashed in one canonical spelling
/// (`CanonicalJSON`: keys sorted, no blanks), so a SQLite store and a PostgreSQL store (whose
/// `jsonb` rewrites the text) holding the same JSON agree. Row order never matters; duplicate rows count
/// twice. The hash is a fixed function (FNV-1a then a 64-bit finaliser), stable across runs,
/// processes and machines.
public struct EntityChecksum: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The entity summed.
    public var entity: String
    /// The attributes hashed, in order.
    public var attributes: [String]
    /// The number of rows summed.
    public var rows: Int
    /// The sum of the row hashes, 16 lowercase hex digits.
    public var value: String

    /// A checksum with its parts (as read back from a report).
    public init(entity: String, attributes: [String], rows: Int, value: String) {
        self.entity = entity
        self.attributes = attributes
        self.rows = rows
        self.value = value
    }

    /// True when both have the same row count and value (names may differ).
    public func matches(_ other: EntityChecksum) -> Bool { rows == other.rows && value == other.value }

    /// `Customer(id, email): 200 rows, 9f3c…`
    public var description: String { "\(entity)(\(attributes.joined(separator: ", "))): \(rows) rows, \(value)" }

    /// Computes the checksum of `attributes` of `entity` in `store` (with the store's model).
    public static func compute(store: Store, entity: String, attributes: [String]) throws -> EntityChecksum {
        try store.readDatabase {
            try compute(
                connection: $0, model: store.model, layout: store.layout, entity: entity, attributes: attributes)
        }
    }

    /// Computes the checksum on a connection to a store of `model` in `layout` (over typed values,
    /// so stores that code values differently compare equal when they hold the same values).
    /// With `ownObjectsOnly`, the objects of the entity's sub-entities are left out (a
    /// migration compares each entity mapping's own objects).
    package static func compute(
        connection: any DatabaseConnection, model: ObjectModel, layout: any StoreLayout, entity name: String,
        attributes: [String], ownObjectsOnly: Bool = false
    ) throws -> EntityChecksum {
        guard let entity = model.entity(named: name) else {
            throw FerryError(
                .verification,
                "cannot compute a checksum: model \(model.name) has no entity '\(name)'\(Suggestions.didYouMean(name, in: model.entityNames))"
            )
        }
        var types: [AttributeType] = []
        for attribute in attributes {
            guard let description = entity.attribute(named: attribute) else {
                throw FerryError(
                    .verification,
                    "cannot compute a checksum: '\(name)' has no attribute '\(attribute)'\(Suggestions.didYouMean(attribute, in: entity.attributes.map(\.name)))"
                )
            }
            types.append(description.type)
        }
        let columns =
            attributes.isEmpty
            ? "1" : attributes.map { layout.quotedColumn(forAttribute: $0, in: entity) }.joined(separator: ", ")
        let coding = layout.valueCoding
        var rows = 0
        var sum: UInt64 = 0
        var hasher = RowHasher()
        let objects = ownObjectsOnly ? layout.quotedOwnRows(for: entity) : layout.quotedSource(for: entity)
        try connection.forEachRow("SELECT \(columns) FROM \(objects)", []) { row in
            hasher.reset()
            for (index, type) in types.enumerated() {
                hasher.add(coding.decode(row[index], as: type))
            }
            sum &+= hasher.finish()
            rows += 1
        }
        let hex = String(sum, radix: 16)
        return EntityChecksum(
            entity: name, attributes: attributes, rows: rows, value: String(repeating: "0", count: 16 - hex.count) + hex
        )
    }
}

/// FNV-1a over a tagged, length-prefixed canonical encoding of each value, finished with
/// MurmurHash3's 64-bit mixer.
struct RowHasher {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func reset() { state = 0xcbf2_9ce4_8422_2325 }

    private mutating func byte(_ b: UInt8) {
        state = (state ^ UInt64(b)) &* 0x0000_0100_0000_01b3
    }

    private mutating func word(_ w: UInt64) {
        var v = w
        for _ in 0..<8 {
            byte(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }

    private mutating func bytes(_ tag: UInt8, _ data: some Collection<UInt8>) {
        byte(tag)
        word(UInt64(data.count))
        for b in data { byte(b) }
    }

    mutating func add(_ value: Value) {
        switch value {
        case .null: byte(0)
        case .integer(let v):
            byte(1)
            word(UInt64(bitPattern: v))
        case .bool(let v):
            byte(2)
            byte(v ? 1 : 0)
        case .double(let v):
            byte(3)
            word((v == 0 ? 0.0 : v).bitPattern)
        case .decimal(let text): bytes(4, (DecimalText.canonical(text) ?? text).utf8)
        case .string(let text): bytes(5, text.utf8)
        case .date(let instant):
            byte(6)
            if let millis = instant.nearestWholeMillisecond {
                // The other double of a whole millisecond: that millisecond, in every store.
                word(UInt64(bitPattern: millis))
                return
            }
            word(UInt64(bitPattern: instant.milliseconds))
            // A Core Data date between two milliseconds: its exact seconds too (whole
            // milliseconds hash as they always have).
            if !instant.isWholeMilliseconds { word(instant.referenceSeconds.bitPattern) }
        case .binary(let data): bytes(7, data)
        case .uuid(let text): bytes(8, text.lowercased().utf8)
        case .uri(let text): bytes(9, text.utf8)
        // By value: jsonb (PostgreSQL) rewrites the text, SQLite keeps it as written.
        case .json(let text): bytes(10, (CanonicalJSON.text(text) ?? text).utf8)
        }
    }

    func finish() -> UInt64 {
        var h = state
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }
}
