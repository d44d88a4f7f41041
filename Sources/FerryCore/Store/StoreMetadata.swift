import Foundation
import Logging

/// What a store records about itself: which model and version made it, with hashes.
public struct StoreMetadata: Sendable, Hashable {
    /// The version of ferry's store format (the bookkeeping tables' layout).
    public var formatVersion: Int
    /// The name of the model that made the store.
    public var modelName: String
    /// The version label of the model the store is at.
    public var modelVersion: String
    /// The model's version hash (hex SHA-256) when the store was created or last migrated.
    public var modelHash: String
    /// Entity name → entity version hash.
    public var entityHashes: [String: String]
    /// The model itself, so a store can be described (and reused by `ferry import`) without its bundle.
    public var model: ObjectModel?
    /// When the store was created (UTC ISO-8601), when known.
    public var createdAt: String?

    /// Reads the metadata of a store in `layout`, or nil when the database has no ferry metadata.
    package static func read(from connection: any DatabaseConnection, layout: any StoreLayout) throws -> StoreMetadata?
    {
        guard let tables = layout.bookkeeping else { return nil }
        let dialect = layout.dialect
        let exists = try connection.scalar(dialect.tableExistsQuery, [.text(tables.metadata)])
        guard exists?.int64 == 1 else { return nil }
        // Both tables in one query (a server may be across a network: one round trip).
        var values: [String: String] = [:]
        var hashes: [String: String] = [:]
        for row in try connection.rows(
            "SELECT 0, key, value FROM \(dialect.quote(tables.metadata)) UNION ALL SELECT 1, name, hash FROM \(dialect.quote(tables.entities))"
        ) {
            guard case .text(let key) = row[1], case .text(let value) = row[2] else { continue }
            if row[0].int64 == 0 { values[key] = value } else { hashes[key] = value }
        }
        guard let name = values["model_name"], let version = values["model_version"], let hash = values["model_hash"]
        else {
            return nil
        }
        let model = values["model_json"].flatMap { json -> ObjectModel? in
            do {
                return try JSONDecoder().decode(ObjectModel.self, from: Data(json.utf8))
            } catch {
                // Read as a store without a stored model (older ferry wrote none): what needs it says so.
                FerryLog.store.notice(
                    "the stored model of \(name) version \(version) (model_json) does not decode, so it is not used: \(error)"
                )
                return nil
            }
        }
        return StoreMetadata(
            formatVersion: Int(values["format_version"] ?? "") ?? 0, modelName: name, modelVersion: version,
            modelHash: hash, entityHashes: hashes, model: model, createdAt: values["created_at"])
    }

    /// Writes (replaces) the metadata for `model` into the bookkeeping tables of `layout`.
    package static func write(
        for model: ObjectModel, to connection: any DatabaseConnection, layout: any StoreLayout, createdAt: String
    ) throws {
        guard let tables = layout.bookkeeping else {
            throw FerryError(.internal, "this store layout has no tables for ferry's metadata")
        }
        let dialect = layout.dialect
        let metadataTable = dialect.quote(tables.metadata)
        let entitiesTable = dialect.quote(tables.entities)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(model), as: UTF8.self)
        let values: [(String, String)] = [
            ("format_version", String(StoreSchema.formatVersion)),
            ("model_name", model.name),
            ("model_version", model.version),
            ("model_hash", model.versionHash),
            ("model_json", json),
        ]
        // Inside a transaction, sent with its next statement (``DatabaseConnection/executeWithNext(_:_:)``).
        try connection.executeWithNext(
            dialect.insert(
                into: metadataTable, columns: ["key", "value"], values: "VALUES ('created_at', ?)", onConflict: .ignore),
            [.text(createdAt)])
        // One statement per table (a server may be across a network: one round trip each).
        func rows(_ count: Int) -> String {
            "VALUES " + Array(repeating: "(?, ?)", count: count).joined(separator: ", ")
        }
        let upsert = dialect.insert(
            into: metadataTable, columns: ["key", "value"], values: rows(values.count),
            onConflict: .update(key: ["key"], columns: ["value"]))
        try connection.executeWithNext(upsert, values.flatMap { [DatabaseValue.text($0.0), .text($0.1)] })
        try connection.executeWithNext("DELETE FROM \(entitiesTable)", [])
        let hashes = model.entityHashes.sorted(by: { $0.key < $1.key })
        if !hashes.isEmpty {
            let insert = dialect.insert(
                into: entitiesTable, columns: ["name", "hash"], values: rows(hashes.count), onConflict: .fail)
            try connection.executeWithNext(insert, hashes.flatMap { [DatabaseValue.text($0.key), .text($0.value)] })
        }
    }
}
