import Foundation
import Logging

/// The metadata (`Z_METADATA.Z_PLIST`) of a Core Data store ferry creates (COREDATA.md §2.2).
///
/// Always: `NSStoreModelVersionIdentifiers` (the model's version identifier), `NSStoreType`
/// `SQLite`, `_NSAutoVacuumLevel` `"2"`, `NSPersistenceFrameworkVersion`
/// (``frameworkVersion``), `NSStoreModelVersionHashesVersion` 3, and the entity version hashes
/// computed from the model (``CoreDataVersionHashes``, COREDATA.md §3.2) as
/// `NSStoreModelVersionHashes`, with their `NSStoreModelVersionHashesDigest` and
/// `NSStoreModelVersionChecksumKey`.
///
/// A compiled model's hashes, when given, must equal the computed ones entity by entity: a
/// difference stops the store before anything is written, naming the entity (Core Data would
/// refuse a store whose hashes are not its model's). Without a compiled model, hashes that touch
/// an open point of §3.2 are written as computed and named in a warning: they are the best known,
/// and a wrong one makes Core Data refuse the store, never misread it.
package struct CoreDataNewStoreMetadata {
    /// The framework version written: that of the newest stores examined (1344), whose metadata
    /// carries the digest and checksum keys.
    package static let frameworkVersion: Int64 = 1344

    /// The binary property list.
    package let plist: [UInt8]
    /// The hashes computed from the model (and written).
    package let computed: CoreDataVersionHashes

    /// - Throws: `.invalidModel` when `compiledHashes` do not name exactly the model's entities
    ///   or one differs from the hash computed from the model.
    package init(model: ObjectModel, compiledHashes: [String: [UInt8]]?) throws {
        let computed = CoreDataVersionHashes(model: model)
        if let compiledHashes {
            try Self.check(compiledHashes, model: model)
            try Self.check(compiledHashes, against: computed, model: model)
        } else if !computed.unverifiedReasons.isEmpty {
            FerryLog.store.warning(
                "model \(model.name) version \(model.version): Core Data version hashes written unverified (\(computed.unverifiedReasons.joined(separator: "; "))); Core Data refuses the store if one is not its model's; give --compiled-model to check them"
            )
        }
        self.computed = computed
        let versionHashes = computed.hashes
        var dictionary = PropertyListDictionary()
        dictionary["NSStoreModelVersionIdentifiers"] = .array([.string(model.versionIdentifier ?? "")])
        dictionary["NSStoreType"] = .string("SQLite")
        dictionary["_NSAutoVacuumLevel"] = .string("2")
        let names = versionHashes.keys.sorted(by: CoreDataVersionHashes.precedes)
        dictionary["NSStoreModelVersionHashes"] = .dictionary(
            PropertyListDictionary(names.map { ($0, .data(versionHashes[$0] ?? [])) }))
        dictionary["NSStoreModelVersionHashesDigest"] = .string(Self.base64(computed.digest))
        dictionary["NSStoreModelVersionChecksumKey"] = .string(Self.base64(computed.checksum))
        dictionary["NSPersistenceFrameworkVersion"] = .integer(Self.frameworkVersion)
        dictionary["NSStoreModelVersionHashesVersion"] = .integer(3)
        plist = BinaryPropertyListWriter.encode(.dictionary(dictionary))
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

    /// Refuses a compiled hash that differs from the computed one, naming the first such entity.
    private static func check(
        _ compiled: [String: [UInt8]], against computed: CoreDataVersionHashes, model: ObjectModel
    ) throws {
        for name in compiled.keys.sorted(by: CoreDataVersionHashes.precedes) {
            guard let mine = computed.entities[name], let theirs = compiled[name], mine.hash != theirs else { continue }
            var notes = [
                "nothing was written: Core Data refuses a store whose version hashes are not its model's"
            ]
            if mine.isVerified {
                notes.append("give the .momd compiled from this very .xcdatamodel version")
            } else {
                notes.append(
                    "the computed hash of \(name) is unverified (\(mine.unverified.joined(separator: "; "))): the compiled model's hash says it is not Core Data's"
                )
            }
            throw FerryError(
                .invalidModel,
                "entity \(name) of model \(model.name) version \(model.version): the compiled model's version hash \(base64(theirs)) differs from the one computed from the model, \(base64(mine.hash))",
                at: model.entity(named: name)?.location, notes: notes)
        }
    }

    private static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}
