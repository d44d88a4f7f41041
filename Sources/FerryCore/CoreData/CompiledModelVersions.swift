import Foundation

/// The version hashes of a compiled model (`App.momd/VersionInfo.plist`, COREDATA.md §3.3 B):
/// for each version name, entity name → 32-byte hash, as Core Data records them in a store's
/// `NSStoreModelVersionHashes`.
package struct CompiledModelVersions: Sendable, Hashable {
    /// Version name → entity name → hash.
    package var versionHashes: [String: [String: [UInt8]]]
    /// `NSManagedObjectModel_CurrentVersionName`, when present.
    package var currentVersion: String?
    /// Where the hashes were read from.
    package var path: String

    /// Reads `PATH/VersionInfo.plist` when `path` is a `.momd` folder, else the file at `path`.
    package static func read(_ path: String) throws -> CompiledModelVersions {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw FerryError(.usage, "no compiled model at '\(path)': No such file or directory")
        }
        let file = isDirectory.boolValue ? (path as NSString).appendingPathComponent("VersionInfo.plist") : path
        guard let data = FileIO.contents(atPath: file).map({ Data($0) }) else {
            throw FerryError(
                .usage, "cannot read the compiled model's '\(file)' (a .momd folder holds a VersionInfo.plist)")
        }
        let source = "compiled model '\(file)'"
        let top = try BinaryPropertyList.decode([UInt8](data), source: source)
        guard let versions = top["NSManagedObjectModel_VersionHashes"]?.dictionary else {
            throw FerryError(.invalidModel, "\(source) has no NSManagedObjectModel_VersionHashes dictionary")
        }
        var hashes: [String: [String: [UInt8]]] = [:]
        for (version, value) in versions.entries {
            guard let entities = value.dictionary else {
                throw FerryError(.invalidModel, "\(source): the hashes of version '\(version)' are not a dictionary")
            }
            var entityHashes: [String: [UInt8]] = [:]
            for (entity, hash) in entities.entries {
                guard let bytes = hash.data else {
                    throw FerryError(
                        .invalidModel, "\(source): the hash of entity '\(entity)' in version '\(version)' is not data")
                }
                entityHashes[entity] = bytes
            }
            hashes[version] = entityHashes
        }
        return CompiledModelVersions(
            versionHashes: hashes, currentVersion: top["NSManagedObjectModel_CurrentVersionName"]?.string, path: file)
    }
}

extension CompiledModelVersions {
    /// The entity hashes of the compiled version that is `model`: the version of the same name
    /// (an Xcode version folder and its compiled `.mom` share it). Never another version's,
    /// even one with the same entities: the store would claim a version it is not.
    ///
    /// - Throws: `.invalidModel` naming the compiled versions when none has the model's name.
    public func hashes(for model: ObjectModel) throws -> [String: [UInt8]] {
        if let hashes = versionHashes[model.version] { return hashes }
        throw FerryError(
            .invalidModel,
            "compiled model '\(path)' has no version '\(model.version)' (versions: \(versionHashes.keys.sorted().joined(separator: ", ")))",
            notes: ["give the .momd compiled from the .xcdatamodeld given as --model"])
    }
}
