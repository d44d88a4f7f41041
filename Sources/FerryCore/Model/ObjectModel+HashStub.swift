// TEMPORARY: replaced by VersionHash.swift from the model-loading branch.
extension ObjectModel {
    public var entityHashes: [String: String] { Dictionary(uniqueKeysWithValues: entities.map { ($0.name, String($0.hashValue)) }) }
    public var versionHash: String { String(entities.map(\.name).joined().hashValue) }
}
