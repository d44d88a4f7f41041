/// Core Data's entity version hashes computed from a model, exactly as COREDATA.md §3.2
/// reconstructs them (every hash of every real store and compiled model with an XML source), and
/// the model's two aggregates of §2.2: `NSStoreModelVersionHashesDigest` and
/// `NSStoreModelVersionChecksumKey`.
///
/// ```text
/// propertyBase(p) = H( name ‖ u8(isOptional) ‖ u8(0) )
/// attribute(a)    = H( propertyBase(a) ‖ u32le(NSAttributeType) [‖ u8(1) when preserveAfterDeletion] )
/// relationship(r) = H( propertyBase(r) ‖ destination ‖ inverse ‖ i32le(maxCount) ‖ i32le(minCount) )
/// entity(E)       = H( name ‖ u8(isAbstract) [‖ entity(parent)]
///                      ‖ attribute(p) or relationship(p) for each persistent property, inherited
///                        ones included, by name
///                      ‖ for each uniqueness constraint: its property names joined with "." )
/// ```
///
/// `H` is SHA-256; a string is its UTF-8 bytes. Transient attributes and fetched properties are
/// left out; a to-one has maxCount 1 and minCount 0, a to-many maxCount 0 (no bound) unless the
/// model gives one. Inputs no sample exercises (the open points of §3.2) still get a hash, but it
/// is marked unverified with the reason (``Entity/unverified``), and so is every sub-entity of
/// such an entity (its parent's hash is part of its own): callers never trust one silently.
package struct CoreDataVersionHashes: Sendable, Hashable {
    /// One entity's hash and why it is not verified.
    package struct Entity: Sendable, Hashable {
        /// The 32-byte version hash.
        package var hash: [UInt8]
        /// Why the hash may not be Core Data's: the open points of COREDATA.md §3.2 the entity
        /// touches. Empty when every input is one the real samples verify.
        package var unverified: [String]

        /// True when no open point is involved.
        package var isVerified: Bool { unverified.isEmpty }
    }

    /// Entity name → hash.
    package var entities: [String: Entity]
    /// Why the digest and checksum may not be Core Data's even when every entity hash is: entity
    /// names whose plain byte order differs from their case-insensitive order (which order Core
    /// Data sorts by is not known); nil otherwise.
    package var aggregatesUnverified: String?

    /// The hashes of every entity of `model`, computed from the model alone.
    package init(model: ObjectModel) {
        var computed: [String: Entity] = [:]
        func compute(_ entity: EntityDescription, visiting: Set<String>) -> Entity {
            if let done = computed[entity.name] { return done }
            var bytes = Array(entity.name.utf8) + [entity.isAbstract ? 1 : 0]
            var unverified: [String] = []
            if let parentName = entity.parent, !visiting.contains(parentName),
                let parent = model.entity(named: parentName)
            {
                let parentHash = compute(parent, visiting: visiting.union([entity.name]))
                bytes += parentHash.hash
                if !parentHash.isVerified { unverified.append("its parent entity \(parentName)'s hash is unverified") }
            }
            if entity.hashModifier != nil { unverified.append("the entity has a versionHashModifier") }
            let properties = Self.persistentProperties(of: entity, in: model)
            for property in properties {
                switch property {
                case .attribute(let attribute):
                    bytes += Self.hash(attribute)
                    if attribute.isDerived { unverified.append("derived attribute \(attribute.name)") }
                    if attribute.hashModifier != nil {
                        unverified.append("attribute \(attribute.name) has a versionHashModifier")
                    }
                    if attribute.allowsExternalBinaryDataStorage {
                        unverified.append("attribute \(attribute.name) allows external binary data storage")
                    }
                case .relationship(let relationship):
                    bytes += Self.hash(relationship)
                    if relationship.isOrdered { unverified.append("ordered relationship \(relationship.name)") }
                    if relationship.inverse == nil {
                        unverified.append("relationship \(relationship.name) has no inverse")
                    }
                    if relationship.hashModifier != nil {
                        unverified.append("relationship \(relationship.name) has a versionHashModifier")
                    }
                }
            }
            let names = properties.map(\.name)
            if let pair = Self.caseOrderConflict(names) {
                unverified.append("property names \(pair) sort differently with and without case")
            }
            let constraints = Self.ownConstraints(of: entity, in: model)
            for constraint in constraints { bytes += Array(constraint.joined(separator: ".").utf8) }
            if constraints.count > 1 { unverified.append("\(constraints.count) uniqueness constraints") }
            let result = Entity(hash: SHA256.hash(bytes), unverified: unverified)
            computed[entity.name] = result
            return result
        }
        for entity in model.entities { _ = compute(entity, visiting: []) }
        entities = computed
        aggregatesUnverified = Self.caseOrderConflict(model.entityNames).map {
            "entity names \($0) sort differently with and without case"
        }
    }

    /// Entity name → 32-byte hash, as a store's `NSStoreModelVersionHashes` holds them.
    package var hashes: [String: [UInt8]] { entities.mapValues(\.hash) }

    /// `NSStoreModelVersionHashesDigest` of these hashes.
    package var digest: [UInt8] { Self.digest(hashes) }

    /// `NSStoreModelVersionChecksumKey` of these hashes.
    package var checksum: [UInt8] { Self.checksum(hashes) }

    /// Every reason a hash of the model is unverified, `Entity: reason`, by entity name.
    package var unverifiedReasons: [String] {
        entities.keys.sorted(by: Self.precedes).flatMap { name in
            (entities[name]?.unverified ?? []).map { "\(name): \($0)" }
        } + (aggregatesUnverified.map { ["digest and checksum: \($0)"] } ?? [])
    }

    /// `NSStoreModelVersionHashesDigest`: SHA-512 over name ‖ hash of each entity, by name
    /// (COREDATA.md §2.2, verified on every store that carries it).
    package static func digest(_ hashes: [String: [UInt8]]) -> [UInt8] {
        SHA512.hash(hashes.keys.sorted(by: precedes).flatMap { Array($0.utf8) + (hashes[$0] ?? []) })
    }

    /// `NSStoreModelVersionChecksumKey`: SHA-256 over the hashes, by entity name (COREDATA.md
    /// §2.2, verified on every store that carries it).
    package static func checksum(_ hashes: [String: [UInt8]]) -> [UInt8] {
        SHA256.hash(hashes.keys.sorted(by: precedes).flatMap { hashes[$0] ?? [] })
    }

    // MARK: - Inputs

    /// A persistent property of an entity.
    enum Property {
        case attribute(AttributeDescription)
        case relationship(RelationshipDescription)

        var name: String {
            switch self {
            case .attribute(let attribute): return attribute.name
            case .relationship(let relationship): return relationship.name
            }
        }
    }

    /// The entity's persistent properties, inherited ones included (a name the entity declares
    /// itself is its own), by name in byte order: no transient attribute, no fetched property.
    static func persistentProperties(of entity: EntityDescription, in model: ObjectModel) -> [Property] {
        var byName: [String: Property] = [:]
        for owner in ([entity] + model.ancestors(of: entity)).reversed() {
            for attribute in owner.attributes {
                byName[attribute.name] = attribute.isTransient ? nil : Property.attribute(attribute)
            }
            for relationship in owner.relationships { byName[relationship.name] = .relationship(relationship) }
        }
        return byName.keys.sorted(by: precedes).compactMap { byName[$0] }
    }

    /// The uniqueness constraints the entity declares itself (those it inherits are part of its
    /// parent's hash), in declaration order, each with its properties in declaration order.
    static func ownConstraints(of entity: EntityDescription, in model: ObjectModel) -> [[String]] {
        let inherited = Set(model.ancestors(of: entity).flatMap(\.uniquenessConstraints))
        return entity.uniquenessConstraints.filter { !inherited.contains($0) }
    }

    /// `H( name ‖ u8(isOptional) ‖ u8(0) )`.
    static func propertyBase(name: String, isOptional: Bool) -> [UInt8] {
        SHA256.hash(Array(name.utf8) + [isOptional ? 1 : 0, 0])
    }

    /// An attribute's hash.
    static func hash(_ attribute: AttributeDescription) -> [UInt8] {
        var bytes = propertyBase(name: attribute.name, isOptional: attribute.isOptional)
        bytes += littleEndian(UInt32(attributeTypeCode(attribute)))
        if attribute.preservesAfterDeletion { bytes.append(1) }
        return SHA256.hash(bytes)
    }

    /// A relationship's hash: to-one maxCount 1, to-many the model's maxCount or 0 (no bound);
    /// minCount the model's or 0.
    static func hash(_ relationship: RelationshipDescription) -> [UInt8] {
        var bytes = propertyBase(name: relationship.name, isOptional: relationship.isOptional)
        bytes += Array(relationship.destination.utf8) + Array((relationship.inverse ?? "").utf8)
        let maxCount = relationship.isToMany ? relationship.maxCount ?? 0 : 1
        let minCount = relationship.minCount ?? 0
        bytes += littleEndian(UInt32(bitPattern: Int32(clamping: maxCount)))
        bytes += littleEndian(UInt32(bitPattern: Int32(clamping: minCount)))
        return SHA256.hash(bytes)
    }

    /// Core Data's `NSAttributeType` of an attribute (COREDATA.md §1.4); ferry's `json` is a
    /// String in Core Data.
    package static func attributeTypeCode(_ attribute: AttributeDescription) -> Int {
        switch attribute.coreDataKind {
        case .transformable: return 1800
        case .objectID: return 2000
        case .undefined: return 0
        case nil: break
        }
        switch attribute.type {
        case .int16: return 100
        case .int32: return 200
        case .int64: return 300
        case .decimal: return 400
        case .double: return 500
        case .float: return 600
        case .string, .json: return 700
        case .bool: return 800
        case .date: return 900
        case .binary: return 1000
        case .uuid: return 1100
        case .uri: return 1200
        }
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    /// Plain byte order of UTF-8 names: the order every sample agrees with.
    static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// Two names, quoted, whose byte order and case-insensitive order differ; nil when both
    /// orders agree (then the samples settle the order).
    static func caseOrderConflict(_ names: [String]) -> String? {
        let bytes = names.sorted(by: precedes)
        let folded = names.sorted { a, b in
            let (x, y) = (a.lowercased(), b.lowercased())
            return x != y ? precedes(x, y) : precedes(a, b)
        }
        guard let index = bytes.indices.first(where: { bytes[$0] != folded[$0] }) else { return nil }
        return "'\(bytes[index])' and '\(folded[index])'"
    }
}
