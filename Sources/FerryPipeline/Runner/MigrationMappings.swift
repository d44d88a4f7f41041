import FerryCore
import Foundation

/// Where each version step's mapping comes from, first found wins:
///
/// 1. a ferry mapping file `FROM-to-TO.yml` (or `.yaml`) in a `--mappings` folder;
/// 2. an Xcode mapping model made for the step among the `.xcmappingmodel` packages of the
///    `--mappings` folders;
/// 3. the bundle's own mapping file (`mappings/FROM-to-TO.yml` beside the bundle's index);
/// 4. an Xcode mapping model beside the model package (in the folder that holds it);
/// 5. inference (which refuses, with reasons, what it cannot do).
///
/// A ferry mapping file stands in for an Xcode mapping model of the same step.
package enum MigrationMappings {
    /// The mapping of each step; `parameters` are the values of `$name` in mapping files'
    /// expressions (`ferry migrate --param`, a job's parameters for its migrate steps);
    /// `folders` are the `--mappings` folders. Each step's mapping is made once per provider
    /// (``StepMappingCache``): `ferry check` parses a mapping file once for all its snapshots.
    package static func provider(
        for bundle: ModelBundle, parameters: [String: Value] = [:], folders: [String] = []
    ) -> (ObjectModel, ObjectModel) throws -> MappingModel {
        StepMappingCache { from, to in
            if let mapping = try stepMapping(from: from, to: to, in: bundle, parameters: parameters, folders: folders) {
                return mapping
            }
            let step = ModelDiff(from: from, to: to)
            return MappingModel(source: from, destination: to, inferred: try step.inferredMapping())
        }.mapping
    }

    /// The step's own mapping (sources 1 to 4 above), or nil when the step is left to inference.
    package static func stepMapping(
        from: ObjectModel, to: ObjectModel, in bundle: ModelBundle, parameters: [String: Value] = [:],
        folders: [String] = []
    ) throws -> MappingModel? {
        let loader = MappingLoader()
        for folder in folders {
            if let path = mappingFile(in: folder, from: from.version, to: to.version) {
                return try loader.load(path: path, source: from, destination: to, parameters: parameters)
            }
        }
        if let mapping = try XcodeMappingSearch(folders: folders).mapping(from: from, to: to, in: bundle) {
            return mapping
        }
        if let path = MappingLoader.existingMappingFile(in: bundle, from: from.version, to: to.version) {
            return try loader.load(path: path, source: from, destination: to, parameters: parameters)
        }
        return try XcodeMappingSearch(folders: XcodeMappingSearch.besideModel(bundle)).mapping(
            from: from, to: to, in: bundle)
    }

    /// `folder/FROM-to-TO.yml` (or `.yaml`) when it exists.
    static func mappingFile(in folder: String, from: String, to: String) -> String? {
        for ext in ["yml", "yaml"] {
            let path = (folder as NSString).appendingPathComponent("\(from)-to-\(to).\(ext)")
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }
}
