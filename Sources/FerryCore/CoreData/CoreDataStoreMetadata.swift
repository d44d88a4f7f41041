/// The `Z_METADATA` row of a Core Data store: its UUID and the binary property list of store
/// metadata (COREDATA.md §2.2). Keys ferry does not know are kept in ``otherKeys``.
package struct CoreDataStoreMetadata: Sendable, Hashable {
    /// `Z_VERSION` (1 in every store seen).
    package var version: Int64
    /// `Z_UUID`: the store's UUID, kept across migrations.
    package var uuid: String
    /// `NSStoreType` (`SQLite`).
    package var storeType: String?
    /// `NSPersistenceFrameworkVersion`: the Core Data build that last wrote the metadata.
    package var frameworkVersion: Int64?
    /// `NSStoreModelVersionHashes`: entity name → 32-byte version hash (opaque; COREDATA.md §3.2).
    package var versionHashes: [String: [UInt8]]
    /// `NSStoreModelVersionHashesVersion` (3).
    package var versionHashesVersion: Int64?
    /// `NSStoreModelVersionIdentifiers`: informational only (COREDATA.md §3.3 D).
    package var versionIdentifiers: [String]
    /// `NSStoreModelVersionHashesDigest` (base64 SHA-512, framework ≥ 1044).
    package var hashesDigest: String?
    /// `NSStoreModelVersionChecksumKey` (base64 SHA-256, framework ≥ 1344).
    package var checksum: String?
    /// `_NSAutoVacuumLevel` (a string, `"2"`).
    package var autoVacuumLevel: String?
    /// Every other key (application metadata such as `io.objc.Moody.CloudKitUserID`), in file order.
    package var otherKeys: PropertyListDictionary

    /// The keys this type reads into named fields.
    static let knownKeys: Set<String> = [
        "NSStoreType", "NSPersistenceFrameworkVersion", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion",
        "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey",
        "_NSAutoVacuumLevel",
    ]

    /// Names of the keys kept in ``otherKeys``.
    package var otherKeyNames: [String] { otherKeys.keys }

    /// Reads the metadata from `Z_VERSION`, `Z_UUID` and the `Z_PLIST` bytes; `source` names the
    /// row in errors (`"Z_METADATA of 'App.sqlite'"`).
    package init(version: Int64, uuid: String, plist: [UInt8], source: String) throws {
        let top = try BinaryPropertyList.decode(plist, source: source)
        guard let dictionary = top.dictionary else {
            throw FerryError(.store, "\(source): Z_PLIST is not a dictionary")
        }
        func text(_ key: String) throws -> String? {
            guard let value = dictionary[key] else { return nil }
            guard let text = value.string else { throw FerryError(.store, "\(source): \(key) is not a string") }
            return text
        }
        func integer(_ key: String) throws -> Int64? {
            guard let value = dictionary[key] else { return nil }
            guard let number = value.integer else { throw FerryError(.store, "\(source): \(key) is not an integer") }
            return number
        }
        self.version = version
        self.uuid = uuid
        storeType = try text("NSStoreType")
        frameworkVersion = try integer("NSPersistenceFrameworkVersion")
        versionHashesVersion = try integer("NSStoreModelVersionHashesVersion")
        hashesDigest = try text("NSStoreModelVersionHashesDigest")
        checksum = try text("NSStoreModelVersionChecksumKey")
        autoVacuumLevel = try text("_NSAutoVacuumLevel")
        versionHashes = [:]
        if let hashes = dictionary["NSStoreModelVersionHashes"] {
            guard let entries = hashes.dictionary else {
                throw FerryError(.store, "\(source): NSStoreModelVersionHashes is not a dictionary")
            }
            for (name, value) in entries.entries {
                guard let bytes = value.data else {
                    throw FerryError(.store, "\(source): the version hash of entity '\(name)' is not data")
                }
                versionHashes[name] = bytes
            }
        }
        versionIdentifiers = []
        if let identifiers = dictionary["NSStoreModelVersionIdentifiers"] {
            guard let items = identifiers.array else {
                throw FerryError(.store, "\(source): NSStoreModelVersionIdentifiers is not an array")
            }
            versionIdentifiers = items.compactMap(\.string)
        }
        otherKeys = PropertyListDictionary(
            dictionary.entries.filter { !Self.knownKeys.contains($0.key) }.map { ($0.key, $0.value) })
    }
}
