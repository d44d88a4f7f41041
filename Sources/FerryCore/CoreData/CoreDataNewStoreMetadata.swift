import Foundation

/// The metadata (`Z_METADATA.Z_PLIST`) of a Core Data store ferry creates (COREDATA.md §2.2).
///
/// Always: `NSStoreModelVersionIdentifiers` (the model's version identifier), `NSStoreType`
/// `SQLite`, `_NSAutoVacuumLevel` `"2"`, `NSPersistenceFrameworkVersion`
/// (``frameworkVersion``), `NSStoreModelVersionHashesVersion` 3.
///
/// Only with the compiled model's hashes: `NSStoreModelVersionHashes`, and from them
/// `NSStoreModelVersionHashesDigest` (SHA-512 over each entity's UTF-8 name and hash, by name)
/// and `NSStoreModelVersionChecksumKey` (SHA-256 over the hashes, by entity name), the formulas
/// verified on real stores. Entity hashes cannot be computed outside Apple's frameworks (§3.2);
/// a store without them matches no model version, so Core Data refuses to open it as one rather
/// than taking it for a version it is not.
package struct CoreDataNewStoreMetadata {
    /// The framework version written: that of the newest stores examined (1344), whose metadata
    /// carries the digest and checksum keys.
    package static let frameworkVersion: Int64 = 1344

    /// The binary property list.
    package let plist: [UInt8]

    /// - Throws: `.invalidModel` when `versionHashes` do not name exactly the model's entities.
    package init(model: ObjectModel, versionHashes: [String: [UInt8]]?) throws {
        var dictionary = PropertyListDictionary()
        dictionary["NSStoreModelVersionIdentifiers"] = .array([.string(model.versionIdentifier ?? "")])
        dictionary["NSStoreType"] = .string("SQLite")
        dictionary["_NSAutoVacuumLevel"] = .string("2")
        if let versionHashes {
            try Self.check(versionHashes, model: model)
            let names = versionHashes.keys.sorted()
            dictionary["NSStoreModelVersionHashes"] = .dictionary(
                PropertyListDictionary(names.map { ($0, .data(versionHashes[$0] ?? [])) }))
            dictionary["NSStoreModelVersionHashesDigest"] = .string(Self.base64(Self.digest(versionHashes)))
            dictionary["NSStoreModelVersionChecksumKey"] = .string(Self.base64(Self.checksum(versionHashes)))
        }
        dictionary["NSPersistenceFrameworkVersion"] = .integer(Self.frameworkVersion)
        dictionary["NSStoreModelVersionHashesVersion"] = .integer(3)
        plist = BinaryPropertyListWriter.encode(.dictionary(dictionary))
    }

    /// `NSStoreModelVersionHashesDigest`: SHA-512 over name ‖ hash of each entity, by name.
    package static func digest(_ hashes: [String: [UInt8]]) -> [UInt8] {
        SHA512.hash(hashes.keys.sorted().flatMap { Array($0.utf8) + (hashes[$0] ?? []) })
    }

    /// `NSStoreModelVersionChecksumKey`: SHA-256 over the hashes, by entity name.
    package static func checksum(_ hashes: [String: [UInt8]]) -> [UInt8] {
        SHA256.hash(hashes.keys.sorted().flatMap { hashes[$0] ?? [] })
    }

    private static func check(_ hashes: [String: [UInt8]], model: ObjectModel) throws {
        let entities = Set(model.entityNames)
        let hashed = Set(hashes.keys)
        guard entities == hashed else {
            let missing = entities.subtracting(hashed).sorted()
            let extra = hashed.subtracting(entities).sorted()
            var parts: [String] = []
            if !missing.isEmpty { parts.append("no hash for \(missing.joined(separator: ", "))") }
            if !extra.isEmpty {
                parts.append("hashes of entities the model does not have: \(extra.joined(separator: ", "))")
            }
            throw FerryError(
                .invalidModel,
                "the compiled model's hashes are not those of model \(model.name) version \(model.version): \(parts.joined(separator: "; "))"
            )
        }
        for (name, hash) in hashes.sorted(by: { $0.key < $1.key }) where hash.count != 32 {
            throw FerryError(
                .invalidModel,
                "the compiled model's hash of entity '\(name)' has \(hash.count) bytes; Core Data's have 32")
        }
    }

    private static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}
